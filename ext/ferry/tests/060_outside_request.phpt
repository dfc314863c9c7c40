--TEST--
ferry: outside a request the CLI behaves as before; misuse is reported
--EXTENSIONS--
ferry
--INI--
expose_php=1
--FILE--
<?php
use function Ferry\Ext\{request_begin, request_end};

header('X-Outside: 1');
setcookie('outside', '1');
var_dump(headers_list(), http_response_code());
try {
    request_end();
} catch (\Error $e) {
    echo $e::class, ': ', $e->getMessage(), "\n";
}

// A header callback that throws: request_end() rethrows it and still resets everything.
ob_start();
request_begin();
header('X-In: 1');
header_register_callback(function () { throw new RuntimeException('callback failed'); });
try {
    request_end();
} catch (RuntimeException $e) {
    $caught = $e->getMessage();
}
$after = [Ferry\Ext\in_request(), headers_list()];
request_begin();
$next = request_end(false);
ob_end_clean();
var_dump($caught, $after, array_keys($next['headers']));
?>
--EXPECT--
array(0) {
}
bool(false)
Error: Ferry\Ext\request_end(): no request in progress, call request_begin() first
string(15) "callback failed"
array(2) {
  [0]=>
  bool(false)
  [1]=>
  array(0) {
  }
}
array(1) {
  [0]=>
  string(12) "X-Powered-By"
}
