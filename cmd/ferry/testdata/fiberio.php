<?php

declare(strict_types=1);

// pool.fiber_io for TestFiberIO*: a client written the plain blocking way (PHP streams,
// usleep()) with nothing of Ferry's loop in it. With the hooks on, each request waits in
// its own Fiber and the others go on; with them off, each blocks the worker.
require __DIR__ . '/../../../php/worker/autoload.php';

use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;

HttpWorker::create(fibers: true)->run(static function (Request $request): Response {
    $q = $request->query();
    if ($request->path === '/tcp') {
        $c = @stream_socket_client('tcp://' . $q['addr'], $errno, $errstr, (float) ($q['ct'] ?? 5));
        if ($c === false) {
            return Response::text("connect failed: $errno $errstr", 502);
        }
        fwrite($c, ($q['id'] ?? 'x') . "\n");
        $line = fgets($c);
        fclose($c);

        return Response::text($line === false ? 'read failed' : trim($line));
    }
    if ($request->path === '/tls' || $request->path === '/starttls') {
        return tls($request->path, $q);
    }
    if ($request->path === '/mysqli') {
        return mysqliSleep($q);
    }
    if ($request->path === '/bigwrite') {
        // 32 MiB to a server that reads nothing, bounded by stream_set_timeout().
        $c = stream_socket_client('tcp://' . $q['addr'], $errno, $errstr, 5);
        stream_set_timeout($c, (int) $q['to']);
        $start = microtime(true);
        $wrote = @fwrite($c, str_repeat('z', 32 << 20));
        $took = microtime(true) - $start;
        $notice = preg_replace('/\d+ bytes/', 'N bytes', error_get_last()['message'] ?? '');

        return Response::text(json_encode(['wrote' => $wrote > 0, 'timed_out' => stream_get_meta_data($c)['timed_out'], 'notice' => $notice, 'took' => $took]));
    }
    if (str_starts_with($request->path, '/pdo')) {
        return pdo($request->path, $q);
    }
    if ($request->path === '/usleep') {
        $id = $q['id'] ?? 'x';
        fwrite(STDERR, "usleep start $id\n");
        usleep((int) ($q['ms'] ?? 1) * 1000);
        fwrite(STDERR, "usleep end $id\n");

        return Response::text('slept');
    }

    return Response::text('fiberio');
});

/**
 * PDO MySQL (mysqlnd reads through PHP's tcp transport): /pdo runs a SLEEP tagged so that
 * /pdo-waiting can count the ones in progress and /pdo-release can end them (KILL QUERY).
 *
 * @param array<string, string> $q
 */
function pdo(string $path, array $q): Response
{
    $tag = preg_replace('/[^a-z0-9]/', '', $q['tag'] ?? 'x');
    if (isset($q['rt'])) {
        // mysqlnd gives its read timeout to the connection's stream when it connects.
        ini_set('mysqlnd.net_read_timeout', $q['rt']);
    }
    try {
        $db = $path === '/pdo-shared' ? sharedPdo((int) $q['port']) : newPdo((int) $q['port'], (int) ($q['ct'] ?? 5), $q['ca'] ?? null);
        if (isset($q['ca']) && $db->query("SHOW SESSION STATUS LIKE 'Ssl_cipher'")->fetchColumn(1) === '') {
            return Response::text('the connection is not TLS', 500);
        }
    } catch (PDOException $e) {
        return Response::text('error: ' . $e->getMessage());
    } finally {
        ini_restore('mysqlnd.net_read_timeout');
    }
    $like = $db->quote("SELECT SLEEP(%'$tag'%");
    if ($path === '/pdo-waiting') {
        return Response::text((string) $db->query("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE INFO LIKE $like")->fetchColumn());
    }
    if ($path === '/pdo-release') {
        foreach ($db->query("SELECT ID FROM information_schema.PROCESSLIST WHERE INFO LIKE $like")->fetchAll(PDO::FETCH_COLUMN) as $id) {
            $db->exec('KILL QUERY ' . (int) $id);
        }

        return Response::text('released');
    }
    if ($path === '/pdo-error') {
        try {
            $db->query('SELEC 1');
        } catch (PDOException $e) {
            return Response::text('error: ' . $e->getMessage());
        }

        return Response::text('no error');
    }
    try {
        $slept = $db->query('SELECT SLEEP(' . (float) ($q['s'] ?? 0.05) . "), '$tag'")->fetchColumn();
    } catch (PDOException $e) {
        // MariaDB fails a SLEEP that KILL QUERY ended (1317 Query execution was interrupted).
        return str_contains($e->getMessage(), '1317') ? Response::text('interrupted') : Response::text('error: ' . $e->getMessage());
    }

    return Response::text("slept $slept");
}

function newPdo(int $port, int $connectTimeout = 5, ?string $ca = null): PDO
{
    $options = [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION, PDO::ATTR_TIMEOUT => $connectTimeout];
    if ($ca !== null) {
        // mysqlnd turns TLS on over its tcp:// stream (stream_socket_enable_crypto()'s path).
        $options += [PDO::MYSQL_ATTR_SSL_CA => $ca, PDO::MYSQL_ATTR_SSL_VERIFY_SERVER_CERT => false];
    }

    return new PDO("mysql:host=127.0.0.1;port=$port", 'root', '', $options);
}

/** One connection for every request of the worker, as an app keeping it in a container. */
function sharedPdo(int $port): PDO
{
    static $db = null;

    return $db ??= newPdo($port);
}

/**
 * mysqli, the same SLEEP as /pdo: mysqlnd under it reads through the same hooked stream.
 *
 * @param array<string, string> $q
 */
function mysqliSleep(array $q): Response
{
    mysqli_report(MYSQLI_REPORT_ERROR | MYSQLI_REPORT_STRICT);
    $tag = preg_replace('/[^a-z0-9]/', '', $q['tag'] ?? 'x');
    try {
        $db = new mysqli('127.0.0.1', 'root', '', '', (int) $q['port']);
        $slept = $db->query('SELECT SLEEP(' . (float) ($q['s'] ?? 0.05) . "), '$tag'")->fetch_row()[0];
    } catch (mysqli_sql_exception $e) {
        return Response::text($e->getCode() === 1317 ? 'interrupted' : 'error: ' . $e->getMessage());
    }

    return Response::text("slept $slept");
}

/**
 * The /tcp exchange over TLS, the server's certificate checked against ?ca: /tls connects
 * with tls://, /starttls connects with tcp:// and turns TLS on afterwards (as mysqlnd's SSL
 * and STARTTLS clients do).
 *
 * @param array<string, string> $q
 */
function tls(string $path, array $q): Response
{
    $ctx = stream_context_create(['ssl' => ['cafile' => $q['ca'], 'peer_name' => '127.0.0.1']]);
    $scheme = $path === '/tls' ? 'tls' : 'tcp';
    $c = stream_socket_client("$scheme://" . $q['addr'], $errno, $errstr, 5, STREAM_CLIENT_CONNECT, $ctx);
    if ($c === false) {
        return Response::text("connect failed: $errno $errstr", 502);
    }
    if ($path === '/starttls' && stream_socket_enable_crypto($c, true, STREAM_CRYPTO_METHOD_TLS_CLIENT) !== true) {
        return Response::text('handshake failed', 502);
    }
    fwrite($c, ($q['id'] ?? 'x') . "\n");
    $line = fgets($c);
    fclose($c);

    return Response::text($line === false ? 'read failed' : trim($line));
}
