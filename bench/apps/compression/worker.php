<?php

declare(strict_types=1);

// A 12 KB HTML page (a product table), the same bytes on every request, for the
// compression scenario: what compressing a typical page costs the front.
require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Response;

$rows = '';
for ($i = 1; $i <= 120; $i++) {
    $rows .= sprintf(
        "<tr><td>%d</td><td><a href=\"/products/%d\">Product %d</a></td><td>%s</td><td>%d.%02d</td></tr>\n",
        $i, $i, $i, ['in stock', 'back soon', 'sold out'][$i % 3], 10 + $i * 7 % 90, $i * 13 % 100
    );
}
$page = "<!DOCTYPE html>\n<html><head><title>Catalogue</title></head><body>\n<table>\n$rows</table>\n</body></html>\n";

HttpWorker::create()->run(static fn (): Response => Response::html($page));
