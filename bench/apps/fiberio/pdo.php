<?php

declare(strict_types=1);

/**
 * The page of bench scenario "fiberio" that waits on its database: a new PDO MySQL
 * connection per request, as a PHP-FPM app opens it, and one SELECT SLEEP. The same code runs
 * under php-fpm (index.php) and in Ferry's workers (worker.php), unchanged.
 */
function fiberio_pdo_page(): string
{
    $port = (int) getenv('FIBERIO_MYSQL_PORT');
    $wait = (float) (getenv('FIBERIO_WAIT') ?: '0.02');
    $db = new PDO("mysql:host=127.0.0.1;port=$port", 'root', '', [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);
    $slept = $db->query("SELECT SLEEP($wait), CONNECTION_ID()")->fetch(PDO::FETCH_NUM);

    return "slept {$slept[0]}\n";
}
