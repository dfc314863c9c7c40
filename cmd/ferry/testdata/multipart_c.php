<?php
// The C side of direct_multipart_e2e_test.go: one JSON case a line in (ct, body base64,
// limits), what Ferry\Ext\multipart_parse() made of it out, in multipart_raw.php's shape.
// Reported files are read and removed; leftover counts whatever else is in limits.dir
// then, which must be nothing.
declare(strict_types=1);

while (($line = fgets(STDIN)) !== false) {
    $in = json_decode($line, true, 16, JSON_THROW_ON_ERROR);
    $r = Ferry\Ext\multipart_parse(base64_decode($in['ct']), base64_decode($in['body']), $in['limits']);
    $files = [];
    $missing = 0;
    foreach ($r['files'] as [$field, $name, $type, $path, $error, $size]) {
        $content = null;
        if ($path !== '') {
            if (!is_file($path) || filesize($path) !== $size) {
                $missing++;
            }
            $content = base64_encode((string)@file_get_contents($path));
            @unlink($path);
        }
        $files[] = [base64_encode($field), base64_encode($name), base64_encode($type), $error, $size, $content];
    }
    $form = [];
    foreach ($r['form'] as [$name, $value]) {
        $form[] = [base64_encode($name), base64_encode($value)];
    }
    echo json_encode([
        'status' => $r['status'], 'error' => $r['error'] === null ? null : base64_encode($r['error']), 'multipart' => $r['multipart'],
        'form' => $form, 'files' => $files, 'missing' => $missing,
        'leftover' => count(array_diff(scandir($in['limits']['dir']), ['.', '..'])),
    ], JSON_THROW_ON_ERROR), "\n";
}
