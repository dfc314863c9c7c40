<?php

declare(strict_types=1);

// A classic front controller, written for nginx + php-fpm and nothing else: PHP's own
// header(), setcookie(), http_response_code(), sessions, superglobals, uploads and exit.
// Under Ferry it runs unchanged through worker.php (docs/legacy.md).
require_once __DIR__ . '/lib.php';

$path = parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);

switch ($path) {
    case '/':
        session_start();
        $_SESSION['visits'] = ($_SESSION['visits'] ?? 0) + 1;
        if (isset($_GET['theme'])) {
            setcookie('theme', $_GET['theme'], ['path' => '/', 'httponly' => true, 'samesite' => 'Lax']);
        }
        page('Home', sprintf(
            '<p>Hello, %s. Visits in this session: %d.</p><p>Theme cookie: %s. Script: %s.</p>',
            h($_GET['name'] ?? 'stranger'),
            $_SESSION['visits'],
            h($_COOKIE['theme'] ?? 'none'),
            h($_SERVER['SCRIPT_NAME'] . ' ' . $_SERVER['PHP_SELF'] . ' ' . $_SERVER['REQUEST_METHOD'] . ' ?' . $_SERVER['QUERY_STRING'])
        ));
        break;

    case '/form':
        if ($_SERVER['REQUEST_METHOD'] === 'POST') {
            if (($_POST['message'] ?? '') === '') {
                http_response_code(422);
                page('Form', '<p>The message is empty.</p>');
                exit;
            }
            http_response_code(201);
            header('X-Form-Tags: ' . implode(',', $_POST['tags'] ?? []));
            page('Form', '<p>Posted: ' . h($_POST['message']) . '</p><p>$_REQUEST: ' . h(json_encode($_REQUEST)) . '</p>');
            break;
        }
        page('Form', '<form method="post"><input name="message"><input name="tags[]" value="a"><button>Send</button></form>');
        break;

    case '/upload':
        $file = $_FILES['file'] ?? null;
        if ($_SERVER['REQUEST_METHOD'] !== 'POST' || $file === null || $file['error'] !== UPLOAD_ERR_OK) {
            http_response_code(400);
            page('Upload', '<p>Send a file as "file".</p>');
            break;
        }
        $dir = sys_get_temp_dir() . '/legacy-uploads';
        @mkdir($dir, 0o700);
        $to = $dir . '/' . bin2hex(random_bytes(8));
        $forged = move_uploaded_file(__FILE__, $to . '.forged'); // not an upload: refused
        if (!move_uploaded_file($file['tmp_name'], $to)) {
            http_response_code(500);
            page('Upload', '<p>Could not move the upload.</p>');
            break;
        }
        $info = sprintf('%s, %d bytes, %s, sha1 %s, moved from an upload: %s, forged move: %s, caption: %s',
            $file['name'], filesize($to), $file['type'], sha1_file($to),
            is_uploaded_file($file['tmp_name']) ? 'still there' : 'yes', $forged ? 'accepted' : 'refused', $_POST['caption'] ?? '');
        unlink($to);
        page('Upload', '<p>' . h($info) . '</p>');
        break;

    case '/redirect':
        header('Location: /?name=redirected');
        exit;

    case '/headers':
        header('HTTP/1.1 299 Custom Phrase');
        header('X-Multi: one');
        header('X-Multi: two', false);
        header('X-Removed: yes');
        header_remove('X-Removed');
        header('Cache-Control: no-store');
        setrawcookie('raw', 'a+b');
        setcookie('plain', 'a b');
        header('Content-Type: text/plain; charset=utf-8');
        echo implode("\n", headers_list()), "\n";
        break;

    default:
        http_response_code(404);
        header('X-Legacy: not-found');
        page('Not found', '<p>No page at ' . h($path) . '.</p>');
}
