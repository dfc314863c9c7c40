--TEST--
ferry: catch_exit() turns exit()/die in a callback into "end of this callback"
--EXTENSIONS--
ferry
--FILE--
<?php
use function Ferry\Ext\catch_exit;

class Guard { public function __destruct() { echo "destructor ran\n"; } }

var_dump(catch_exit(function () {
    $g = new Guard();
    echo "before\n";
    try {
        exit(7);
    } catch (\Throwable $e) {
        echo "a catch must not see exit\n";
    } finally {
        echo "FPM runs no finally on exit either\n";
    }
    echo "after exit: never printed\n";
}));
var_dump(catch_exit(function () { exit("message\n"); }));
var_dump(catch_exit(function () { die; }));
var_dump(catch_exit(fn () => 'returned normally'));
var_dump(catch_exit(function () {
    // nested: exit inside an internal callback unwinds through array_map too
    array_map(function () { exit(3); }, [1, 2]);
}));
var_dump(catch_exit(fn () => catch_exit(fn () => exit(1)) + 40));
try {
    catch_exit(function () { throw new LogicException('exceptions pass through'); });
} catch (LogicException $e) {
    echo $e->getMessage(), "\n";
}
echo "still running\n";
exit(5);
?>
--EXPECT--
before
destructor ran
int(7)
message
int(0)
int(0)
NULL
int(3)
NULL
exceptions pass through
still running
