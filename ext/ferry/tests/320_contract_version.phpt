--TEST--
ferry: the worker loops bind only to WorkerSession's declared contract and refuse, naming both versions, a php/worker of another contract version
--EXTENSIONS--
ferry
--SKIPIF--
<?php
$sdk = is_file(__DIR__ . '/sdk.inc') ? require __DIR__ . '/sdk.inc' : '';
if (!is_file($sdk)) echo 'skip php/worker not found (run through ext/ferry/build.sh)';
?>
--FILE--
<?php
require require __DIR__ . '/sdk.inc';
use Ferry\Worker\Internal\WorkerSession;

// The php/worker next to this extension speaks its version.
var_dump(Ferry\Ext\CONTRACT_VERSION === WorkerSession::CONTRACT_VERSION);

// A session of the next version (a php/worker from a later release): refused before any
// property of it is read.
final class LaterSession
{
    public const CONTRACT_VERSION = Ferry\Ext\CONTRACT_VERSION + 1;
    public bool $stopping = false;
}
// The right version but a property of the contract made private: refused by name.
final class PrivateSession
{
    public const CONTRACT_VERSION = Ferry\Ext\CONTRACT_VERSION;
    private bool $stopping = false;
}
$calls = [
    'http_serve' => static fn (object $s) => Ferry\Ext\http_serve($s, fn () => 1, $s, STDIN, STDOUT, ''),
    'fiber_serve' => static fn (object $s) => Ferry\Ext\fiber_serve($s, $s, fn () => 1, STDIN, STDOUT, '', 1, false),
];
foreach ($calls as $call) {
    foreach ([new LaterSession(), new PrivateSession()] as $session) {
        try {
            $call($session);
            echo "served\n";
        } catch (Error $e) {
            echo get_class($e), ': ', $e->getMessage(), "\n";
        }
    }
}
?>
--EXPECTF--
bool(true)
Error: Ferry\Ext\http_serve(): php/worker speaks worker contract version 3 (LaterSession::CONTRACT_VERSION) and this ext/ferry version 2: load the ext/ferry built from the same Ferry release as php/worker
Error: Ferry\Ext\http_serve(): PrivateSession has no public property $stopping of the type worker contract version 2 declares
Error: Ferry\Ext\fiber_serve(): php/worker speaks worker contract version 3 (LaterSession::CONTRACT_VERSION) and this ext/ferry version 2: load the ext/ferry built from the same Ferry release as php/worker
Error: Ferry\Ext\fiber_serve(): PrivateSession has no public property $stopping of the type worker contract version 2 declares
