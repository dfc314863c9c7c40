<?php

declare(strict_types=1);

// nginx + php-fpm's side of the fiberio scenario's PDO page.
require __DIR__ . '/pdo.php';

header('Content-Type: text/plain');
echo fiberio_pdo_page();
