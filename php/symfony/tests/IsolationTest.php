<?php

declare(strict_types=1);

namespace Ferry\Symfony\Tests;

use Ferry\Symfony\Tests\Support\App;
use Ferry\Worker\Testing\HttpClient;
use PHPUnit\Framework\TestCase;

/**
 * Two users, each with their own cookie jar, take turns on one worker: neither ever sees
 * the other's cookies, session or queued cookies (the leak a long-lived process has when
 * request state survives, which FPM never has).
 */
final class IsolationTest extends TestCase
{
    public function testInterleavedUsersOnOneWorkerNeverSeeEachOther(): void
    {
        $server = App::serve([], "  num_workers: 1\n");
        try {
            $users = ['alice' => new HttpClient($server->url), 'bob' => new HttpClient($server->url)];
            $pids = [];
            foreach ($users as $name => $client) {
                $r = $client->postForm('/login', ['user' => $name]);
                $this->assertSame(['user' => $name], App::json($r));
                $this->assertSame($name, $client->cookies['user'] ?? null);
                $this->assertArrayHasKey('PHPSESSID', $client->cookies);
            }
            $this->assertNotSame($users['alice']->cookies['PHPSESSID'], $users['bob']->cookies['PHPSESSID']);

            for ($round = 1; $round <= 6; ++$round) {
                foreach ($users as $name => $client) {
                    $other = $name === 'alice' ? 'bob' : 'alice';
                    // Every other round this user queues a cookie: the next request, the
                    // other user's, must not carry it.
                    $note = $round % 2 === 1 ? "$name-$round" : null;
                    $r = $client->get('/whoami' . ($note !== null ? "?note=$note" : ''));
                    $data = App::json($r);
                    $pids[] = $data['pid'];
                    $this->assertSame($name, $data['session_user'], "round $round: $name's session");
                    $this->assertSame($name, $data['cookie_user'], "round $round: $name's cookie");
                    $this->assertSame($round, $data['seen'], "round $round: $name's own counter");
                    $this->assertSame($note !== null ? 1 : 0, $data['queued'], "round $round: only $name's queued cookies");
                    $setCookies = implode("\n", $r['headers']['set-cookie'] ?? []);
                    $this->assertStringNotContainsString($other, $setCookies, "round $round: $name got a cookie of $other");
                    $this->assertSame($note !== null ? "note=$note; path=/; httponly; samesite=lax" : '', $setCookies);
                }
            }

            // A newcomer on the same worker has nothing of either.
            $stranger = new HttpClient($server->url);
            $r = $stranger->get('/whoami');
            $data = App::json($r);
            $this->assertSame([null, null, 1, 0], [$data['session_user'], $data['cookie_user'], $data['seen'], $data['queued']]);
            $this->assertStringNotContainsString('alice', implode("\n", $r['headers']['set-cookie'] ?? []));
            $this->assertStringNotContainsString('bob', implode("\n", $r['headers']['set-cookie'] ?? []));
            $this->assertNotContains($stranger->cookies['PHPSESSID'] ?? '', [$users['alice']->cookies['PHPSESSID'], $users['bob']->cookies['PHPSESSID']]);
            $pids[] = $data['pid'];

            $this->assertCount(1, array_unique($pids), 'every request ran on the same worker process');
        } finally {
            $server->stop();
        }
    }

    public function testConcurrentRequestsOfTwoUsersStayApart(): void
    {
        $server = App::serve([], "  num_workers: 1\n");
        try {
            $users = ['alice' => new HttpClient($server->url), 'bob' => new HttpClient($server->url)];
            foreach ($users as $name => $client) {
                $client->postForm('/login', ['user' => $name]);
            }
            // 2 x 12 requests in flight at once: the server hands them to the one worker
            // several per write, which runs them back to back.
            $address = parse_url($server->url, PHP_URL_HOST) . ':' . parse_url($server->url, PHP_URL_PORT);
            $sockets = [];
            for ($i = 0; $i < 12; ++$i) {
                foreach ($users as $name => $client) {
                    $cookie = 'PHPSESSID=' . $client->cookies['PHPSESSID'] . '; user=' . $client->cookies['user'];
                    $socket = stream_socket_client("tcp://$address", $errno, $error, 5);
                    $this->assertNotFalse($socket, $error);
                    fwrite($socket, "GET /whoami?note=$name-$i HTTP/1.0\r\nHost: $address\r\nCookie: $cookie\r\n\r\n");
                    $sockets[] = [$name, $i, $socket];
                }
            }
            $pids = [];
            foreach ($sockets as [$name, $i, $socket]) {
                stream_set_timeout($socket, 30);
                $raw = stream_get_contents($socket);
                fclose($socket);
                [$head, $body] = explode("\r\n\r\n", (string) $raw, 2) + [1 => ''];
                $this->assertMatchesRegularExpression('~^HTTP/1\.[01] 200 ~', $head, $raw);
                $data = json_decode($body, true);
                $pids[] = $data['pid'];
                $this->assertSame([$name, $name, 1], [$data['session_user'], $data['cookie_user'], $data['queued']], "$name request $i");
                $this->assertSame(1, preg_match_all('/^Set-Cookie: (.*)$/mi', $head, $m), $head);
                $this->assertSame("note=$name-$i; path=/; httponly; samesite=lax", trim($m[1][0]));
            }
            $this->assertCount(1, array_unique($pids));
            // Each user's session saw each of their own requests exactly once.
            $this->assertSame(13, App::json($users['alice']->get('/whoami'))['seen']);
            $this->assertSame(13, App::json($users['bob']->get('/whoami'))['seen']);
        } finally {
            $server->stop();
        }
    }
}
