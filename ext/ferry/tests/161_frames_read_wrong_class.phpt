--TEST--
ferry: frames_read() refuses a Ferry\Worker\Frame of another shape, and a missing one
--EXTENSIONS--
ferry
--FILE--
<?php
use function Ferry\Ext\{frames_read, frame_encode};

try {
    frames_read(frame_encode(4, [], 'x'));
} catch (Error $e) {
    echo $e->getMessage(), "\n";
}
eval('namespace Ferry\Worker; final class Frame { public function __construct(public int $flags, public string $options = "", public string $payload = "", public int $streamFlags = 0) {} }');
try {
    frames_read(frame_encode(4, [], 'x'));
} catch (Error $e) {
    echo $e->getMessage(), "\n";
}
?>
--EXPECT--
Ferry\Ext\frames_read(): class Ferry\Worker\Frame not found
Ferry\Ext\frames_read(): Ferry\Worker\Frame is not the class this extension was built for (int $flags, array $options, string $payload, int $streamFlags)
