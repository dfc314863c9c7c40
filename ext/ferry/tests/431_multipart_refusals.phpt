--TEST--
ferry: multipart_parse() refuses as the front does (400 malformed, counts, part headers, extensions; 413 byte totals; 500 no spool dir) with its texts, and leaves no file behind
--EXTENSIONS--
ferry
--FILE--
<?php
use function Ferry\Ext\multipart_parse;

$dir = sys_get_temp_dir() . '/ferry-431-' . getmypid();
mkdir($dir);
$ct = 'multipart/form-data; boundary=xYzZY';
$field = fn (string $name, string $v) => "--xYzZY\r\nContent-Disposition: form-data; name=\"$name\"\r\n\r\n$v\r\n";
$file = fn (string $name, string $v) => "--xYzZY\r\nContent-Disposition: form-data; name=\"f\"; filename=\"$name\"\r\n\r\n$v\r\n";
$end = "--xYzZY--\r\n";
$first = $file('first.txt', 'spooled before the refusal');
$lim = ['dir' => $dir, 'max_files' => 2, 'max_parts' => 4, 'max_header_bytes' => 256, 'max_disk_bytes' => 60, 'max_field_bytes' => 10, 'forbid' => ['.php', '.phar']];
foreach ([
    'parts' => $first . str_repeat($field('a', '1'), 4) . $end,
    'files' => $first . $file('2.txt', 'x') . $file('3.txt', 'x') . $end,
    'no files allowed' => $file('1.txt', ''),
    'header' => $first . "--xYzZY\r\nX-Pad: " . str_repeat('p', 300) . "\r\n\r\nv\r\n" . $end,
    'disk' => $first . $file('2.txt', str_repeat('d', 40)) . $end,
    'fields' => $first . $field('a', '123456') . $field('b', '12345') . $end,
    'fields cut short past the limit' => $first . "--xYzZY\r\nContent-Disposition: form-data; name=a\r\n\r\n" . str_repeat('v', 19),
    'fields cut short within it' => $first . "--xYzZY\r\nContent-Disposition: form-data; name=a\r\n\r\n" . str_repeat('v', 18),
    'forbid' => $first . $file("C:\\x\\Shell.PHP. ", '<?php') . $end,
    'forbid quoting' => $file("a\\\"\t\x01\xff.phar", '<?php') . $end,
    'missing final boundary' => $first,
    'two names' => "--xYzZY\r\nContent-Disposition: form-data; name=a; name=b\r\n\r\nv\r\n" . $end,
    'text after a quote' => "--xYzZY\r\nContent-Disposition: form-data; name=\"a\"b\r\n\r\nv\r\n" . $end,
    'folded header' => "--xYzZY\r\nContent-Disposition: form-data;\r\n name=a\r\n\r\nv\r\n" . $end,
    'padding past 64 KiB' => "--xYzZY" . str_repeat(' ', 70000) . "\r\n" . $end,
] as $what => $body) {
    $l = $lim;
    if ($what === 'no files allowed') {
        $l['max_files'] = 0;
    }
    $r = multipart_parse($ct, $body, $l);
    echo "$what: $r[status] ", json_encode($r['error']), ' ', count($r['form']) + count($r['files']), ' ', count(scandir($dir)) - 2, "\n";
}
$r = multipart_parse('multipart/form-data; boundary=' . str_repeat('b', 71), "--" . str_repeat('b', 71) . "--", $lim);
echo "boundary of 71 bytes: $r[status] $r[error]\n";
$r = multipart_parse($ct, $first . $end, ['dir' => "$dir/missing"] + $lim);
echo "no spool dir: $r[status] $r[error]\n";
rmdir($dir);
?>
--EXPECT--
parts: 400 "multipart: more parts than the limit of 4" 0 0
files: 400 "multipart: more files than the limit of 2" 0 0
no files allowed: 400 "multipart: more files than the limit of 0" 0 0
header: 400 "multipart: more part header bytes than the limit of 256" 0 0
disk: 413 "multipart: more file bytes than the limit of 60" 0 0
fields: 413 "multipart: more field bytes than the limit of 10" 0 0
fields cut short past the limit: 413 "multipart: more field bytes than the limit of 10" 0 0
fields cut short within it: 400 "malformed multipart body" 0 0
forbid: 400 "multipart: file name \"C:\\\\x\\\\Shell.PHP. \" has a refused extension" 0 0
forbid quoting: 400 "multipart: file name \"a\\\"\\t\\x01\\xff.phar\" has a refused extension" 0 0
missing final boundary: 400 "malformed multipart body" 0 0
two names: 400 "malformed multipart body" 0 0
text after a quote: 400 "malformed multipart body" 0 0
folded header: 400 "malformed multipart body" 0 0
padding past 64 KiB: 400 "malformed multipart body" 0 0
boundary of 71 bytes: 400 malformed multipart body
no spool dir: 500 uploads could not be stored
