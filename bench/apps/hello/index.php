<?php

declare(strict_types=1);

// The classic-PHP twin of examples/hello/worker.php: same body, same content type.
header('Content-Type: text/plain; charset=utf-8');
echo "Hello, world\n";
