--TEST--
ferry: multipart_parse() gives fields in order, spools files (mode 0600, ferry-upload-* in dir), keeps empty file inputs, and reads Content-Type boundaries as the front does
--EXTENSIONS--
ferry
--FILE--
<?php
use function Ferry\Ext\multipart_parse;

$dir = sys_get_temp_dir() . '/ferry-430-' . getmypid();
mkdir($dir);
$ct = 'multipart/form-data; boundary=xYzZY';
$part = fn (string $headers, string $content) => "--xYzZY\r\n$headers\r\n\r\n$content\r\n";
$body = "preamble\r\n"
    . $part('Content-Disposition: form-data; name="a"', "1")
    . $part("Content-Disposition: form-data; name=\"f\"; filename=\"C:\\dir\\say \\\"hi\\\".txt\"\r\nContent-Type: text/plain", "hello\r\n--xYzZYx")
    . $part('Content-Disposition: form-data; name="empty"; filename=""', "dropped")
    . $part('content-disposition: FORM-DATA; NAME=b', "")
    . $part('Content-Disposition: attachment; name="skipped"', "x")
    . "--xYzZY--epilogue";
$r = multipart_parse($ct, $body, ['dir' => $dir]);
echo $r['status'], ' ', json_encode($r['error']), ' ', json_encode($r['form']), "\n";
foreach ($r['files'] as [$field, $name, $type, $path, $error, $size]) {
    echo json_encode([$field, $name, $type, $error, $size]), ' ';
    if ($path === '') {
        echo "no file\n";
        continue;
    }
    clearstatcache();
    printf("%s %o %s\n", dirname($path) === $dir && preg_match('/^ferry-upload-\d+$/', basename($path)) ? 'named' : $path,
        fileperms($path) & 0777, json_encode(file_get_contents($path)));
    unlink($path);
}
echo "-- LF line ends, transport padding\n";
$r = multipart_parse($ct, "--xYzZY \t\nContent-Disposition: form-data; name=a\n\nv\n--xYzZY--", ['dir' => $dir]);
echo $r['status'], ' ', json_encode($r['form']), "\n";
echo "-- boundaries\n";
foreach ([
    'multipart/form-data; boundary="a b:c"', 'Multipart/Form-Data;boundary=abc;', 'multipart/form-data; boundary*0=ab; boundary*1*=%41',
    "multipart/form-data; boundary*=UTF-8''%78y", 'multipart/mixed; boundary=abc', 'multipart/form-data; boundary=a; boundary=b',
    'multipart/form-data; boundary=""', 'multipart/form-data; boundary="unterminated', 'application/x-www-form-urlencoded',
] as $ct2) {
    $r = multipart_parse($ct2, '', ['dir' => $dir]);
    echo json_encode($ct2), ': ', $r['multipart'] ? "multipart, $r[status]" : 'left unparsed', "\n";
}
var_dump(scandir($dir) === ['.', '..']);
rmdir($dir);
?>
--EXPECT--
0 null [["a","1"],["b",""]]
["f","C:\\dir\\say \"hi\".txt","text\/plain",0,15] named 600 "hello\r\n--xYzZYx"
["empty","","",4,0] no file
-- LF line ends, transport padding
0 [["a","v"]]
-- boundaries
"multipart\/form-data; boundary=\"a b:c\"": multipart, 400
"Multipart\/Form-Data;boundary=abc;": multipart, 400
"multipart\/form-data; boundary*0=ab; boundary*1*=%41": multipart, 400
"multipart\/form-data; boundary*=UTF-8''%78y": multipart, 400
"multipart\/mixed; boundary=abc": left unparsed
"multipart\/form-data; boundary=a; boundary=b": left unparsed
"multipart\/form-data; boundary=\"\"": left unparsed
"multipart\/form-data; boundary=\"unterminated": left unparsed
"application\/x-www-form-urlencoded": left unparsed
bool(true)
