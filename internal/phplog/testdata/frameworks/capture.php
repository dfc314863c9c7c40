<?php
// Prints, on stderr, what Debian's Symfony 5.4 HttpKernel Logger and Monolog 2
// (as a Monolog channel configured with its defaults) write: the lines in
// formats.txt were captured with `php capture.php 2>formats.txt`. symfony54.txt
// and laravel883.txt are what the php/symfony and php/laravel test apps' workers
// wrote under Ferry for /fail, /fatal and /boom, /fatal (memory_limit=64M; the
// Laravel app with a route that fills memory added); symfony54-debug.txt the same
// with APP_ENV=dev, APP_DEBUG=1. The paths of the checkout and
// the app were replaced by /srv/ferry and /srv/app.
require_once 'Symfony/Component/HttpKernel/autoload.php';
require_once 'Monolog/autoload.php';

$e = new RuntimeException('boom', 0, new LogicException('inner'));
$sf = new Symfony\Component\HttpKernel\Log\Logger('debug', 'php://stderr');
$sf->critical(sprintf('Uncaught PHP Exception %s: "%s" at %s line %s', get_class($e), $e->getMessage(), $e->getFile(), $e->getLine()), ['exception' => $e]);
$sf->warning('User Deprecated: {what}', ['what' => 'old api']);
$sf->debug('matched route "{route}"', ['route' => 'home']);

$mono = new Monolog\Logger('app', [new Monolog\Handler\StreamHandler('php://stderr', Monolog\Logger::DEBUG)]);
$mono->notice('user logged in', ['id' => 7]);
$mono->alert('disk full');
$mono->critical('payment failed', ['exception' => $e]);
