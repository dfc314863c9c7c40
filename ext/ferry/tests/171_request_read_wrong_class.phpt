--TEST--
ferry: request_read() refuses a Ferry\Worker\Http\Request of another shape, and a missing one
--EXTENSIONS--
ferry
--FILE--
<?php
$context = serialize(['method' => 'GET']);
try {
    Ferry\Ext\request_read($context, '');
} catch (Error $e) {
    echo $e->getMessage(), "\n";
}
eval('namespace Ferry\Worker\Http; final class Request { public function __construct(public string $method = "GET") {} }');
try {
    Ferry\Ext\request_read($context, '');
} catch (Error $e) {
    echo $e->getMessage(), "\n";
}
?>
--EXPECT--
Ferry\Ext\request_read(): class Ferry\Worker\Http\Request not found
Ferry\Ext\request_read(): Ferry\Worker\Http\Request is not the class this extension was built for
