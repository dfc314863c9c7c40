<?php

declare(strict_types=1);

// The voting service under nginx + PHP-FPM: everything below runs again for every request,
// including the Tarantool connection (connect, greeting, AUTH) -- the cost this example exists to measure.
// VOTING_TARANTOOL_PERSISTENT=1 (FPM pool env[] or fastcgi_param) keeps the socket open
// across requests of the same FPM process instead.
require __DIR__ . '/../autoload.php';

use Voting\App;
use Voting\FpmAdapter;
use Voting\Store;

$persistent = filter_var($_SERVER['VOTING_TARANTOOL_PERSISTENT'] ?? getenv('VOTING_TARANTOOL_PERSISTENT'), FILTER_VALIDATE_BOOL);
FpmAdapter::send((new App(Store::fromEnv($persistent)))->handle(FpmAdapter::request()));
