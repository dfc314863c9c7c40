<?php

// inputs_e2e_test.go's reference: PHP's own parsing, under its built-in server (php -S).
echo serialize([
    'cookie' => $_COOKIE,
    'superglobal' => $_COOKIE,
    'get' => $_GET,
    'post' => $_POST,
    'http_cookie' => $_SERVER['HTTP_COOKIE'] ?? null,
]);
