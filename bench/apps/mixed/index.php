<?php
// The classic-PHP twin of worker.php: same sleep, same body, same content type.
declare(strict_types=1);

$us = min(max((int) ($_GET['us'] ?? 0), 0), 1_000_000);
if ($us > 0) {
    usleep($us);
}
header('Content-Type: text/plain; charset=utf-8');
echo "slept {$us} us\n";
