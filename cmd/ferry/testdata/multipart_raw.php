<?php
// The app of direct_multipart_e2e_test.go: what the front made of a multipart body, as the
// worker protocol carries it (form pairs and files in order, unlike $_POST and $_FILES),
// each string base64 so that any bytes survive JSON.
declare(strict_types=1);

require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;

HttpWorker::create()->run(static function (Request $r): Response {
    $files = [];
    foreach ($r->uploads as [$field, $name, $type, $path, $error, $size]) {
        $files[] = [base64_encode($field), base64_encode($name), base64_encode($type), $error, $size,
            $path === '' ? null : base64_encode((string)file_get_contents($path))];
    }
    $form = [];
    foreach ($r->form as [$name, $value]) {
        $form[] = [base64_encode($name), base64_encode($value)];
    }
    return Response::json(['parsed' => $r->parsed, 'form' => $form, 'files' => $files]);
});
