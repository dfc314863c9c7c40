--TEST--
ferry: the worker loops read Response's state only through public properties, and refuse a Response whose state is private, naming the property
--EXTENSIONS--
ferry
--SKIPIF--
<?php
$sdk = is_file(__DIR__ . '/sdk.inc') ? require __DIR__ . '/sdk.inc' : '';
if (!is_file($sdk)) echo 'skip php/worker not found (run through ext/ferry/build.sh)';
?>
--FILE--
<?php
// A Response of the shape php/worker had before the contract covered it: its state private.
namespace Ferry\Worker\Http {
    final class Response
    {
        public string $body = '';
        private int $status = 200;
        private ?string $preset = null;
        private ?array $file = null;
        private ?iterable $parts = null;
        private static array $presetContexts = [];

        public function context(): string { return '{"status":200}'; }
        public static function html(string $body, int $status = 200): self { return new self(); }
        public static function json(mixed $data, int $status = 200): self { return new self(); }
    }
}

namespace {
    require require __DIR__ . '/sdk.inc';

    use Ferry\Worker\FrameCodec;
    use Ferry\Worker\Internal\WorkerSession;
    use Ferry\Worker\Relay\StreamRelay;

    $sequential = new WorkerSession(new StreamRelay(STDIN, STDOUT), false, 1, new FrameCodec(), null);
    $fibers = new WorkerSession(new StreamRelay(STDIN, STDOUT), true, 4, new FrameCodec(), null);
    $calls = [
        static fn () => Ferry\Ext\http_serve($sequential, fn () => 1, $sequential, STDIN, STDOUT, ''),
        static fn () => Ferry\Ext\fiber_serve($fibers, $fibers, fn () => 1, STDIN, STDOUT, '', 1, false),
    ];
    foreach ($calls as $call) {
        try {
            $call();
            echo "served\n";
        } catch (Error $e) {
            echo get_class($e), ': ', $e->getMessage(), "\n";
        }
    }
}
?>
--EXPECTF--
Error: Ferry\Ext\http_serve(): Ferry\Worker\Http\Response has no public property $%s of the type worker contract version %d declares
Error: Ferry\Ext\fiber_serve(): Ferry\Worker\Http\Response has no public %s
