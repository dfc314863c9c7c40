--TEST--
ferry: register_uploaded_file() makes is_uploaded_file()/move_uploaded_file() accept a file until request_end()
--EXTENSIONS--
ferry
--INI--
expose_php=0
--FILE--
<?php
use function Ferry\Ext\{request_begin, request_end, register_uploaded_file};

$dir = sys_get_temp_dir() . '/ferry-phpt-upload-' . getmypid();
mkdir($dir);
$a = "$dir/upload-a";
$b = "$dir/upload-b";
file_put_contents($a, 'AAA');
file_put_contents($b, 'BBB');
ob_start();
$log = [];
$log[] = 'outside: ' . var_export(is_uploaded_file($a), true) . ' ' . var_export(@move_uploaded_file($a, "$dir/x"), true);
request_begin();
$log[] = 'not registered: ' . var_export(is_uploaded_file($a), true);
register_uploaded_file($a);
register_uploaded_file($b);
register_uploaded_file($a);   // twice is once
$log[] = 'registered: ' . var_export(is_uploaded_file($a), true) . ' ' . var_export(is_uploaded_file($b), true)
    . ' other: ' . var_export(is_uploaded_file("$dir/upload-c"), true);
$log[] = 'move: ' . var_export(move_uploaded_file($a, "$dir/moved-a"), true) . ' ' . file_get_contents("$dir/moved-a")
    . ' source gone: ' . var_export(!file_exists($a), true);
$log[] = 'moved once only: ' . var_export(is_uploaded_file($a), true) . ' ' . var_export(@move_uploaded_file($a, "$dir/again"), true);
request_end();
// The server owns its temp files: forgetting them must not delete them.
$log[] = 'after request_end: ' . var_export(is_uploaded_file($b), true) . ' still on disk: ' . var_export(file_get_contents($b), true);
request_begin();
$log[] = 'next request: ' . var_export(is_uploaded_file($b), true) . ' ' . var_export(@move_uploaded_file($b, "$dir/moved-b"), true);
register_uploaded_file($b);
request_begin();   // a new request forgets the last one's files too
$log[] = 'request_begin again: ' . var_export(is_uploaded_file($b), true);
request_end();
foreach (['', "a\0b"] as $bad) {
    try {
        register_uploaded_file($bad);
    } catch (\Throwable $e) {
        $log[] = $e::class . ': ' . $e->getMessage();
    }
}
ob_end_clean();
echo implode("\n", $log), "\n";
array_map('unlink', glob("$dir/*"));
rmdir($dir);
?>
--EXPECT--
outside: false false
not registered: false
registered: true true other: false
move: true AAA source gone: true
moved once only: false false
after request_end: false still on disk: 'BBB'
next request: false false
request_begin again: false
ValueError: Ferry\Ext\register_uploaded_file(): Argument #1 ($path) must not be empty
ValueError: Ferry\Ext\register_uploaded_file(): Argument #1 ($path) must not contain any null bytes
