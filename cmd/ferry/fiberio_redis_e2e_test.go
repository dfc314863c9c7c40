package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// startRedis runs redis-server on a free port, without persistence, and returns its port.
func startRedis(t *testing.T) (*serverProc, int) {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("redis-server not found (Debian: redis-server)")
	}
	port := freePort(t)
	cmd := exec.Command(bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", t.TempDir(), "--loglevel", "notice")
	return startServerProc(t, cmd, "Ready to accept connections"), port
}

// redisClients are the Redis clients there are: phpredis (the extension) and predis
// (Debian's php-nrk-predis, pure PHP on stream_socket_client()).
func redisClients(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("php", "-m").Output()
	if err != nil || !strings.Contains(string(out), "redis") {
		t.Skip("php has no redis extension (Debian: php8.2-redis)")
	}
	clients := []string{"phpredis"}
	if _, err := os.Stat("/usr/share/php/Predis/Autoloader.php"); err == nil {
		clients = append(clients, "predis")
	} else {
		t.Log("predis not installed (Debian: php-nrk-predis): phpredis only")
	}
	return clients
}

// Redis through phpredis and predis, unmodified: with pool.fiber_io eight BLPOPs from eight
// requests are all blocked in Redis at once in ONE worker (Redis's own blocked_clients,
// read by a ninth request on the same worker), and all end when eight values are pushed.
// Without it, eight BLPOPs of 50 ms each wait one after the other.
func TestFiberIORedisConcurrent(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	clients := redisClients(t)
	_, port := startRedis(t)
	const n = 8
	for _, c := range clients {
		t.Run(c+"/on", func(t *testing.T) {
			s := startFerry(t, fiberIOApp(true, "fiberio_redis.php"))
			key := c + "on"
			done := inBackground(n, func(int) string { return fmtURL(s, "/blpop?c=%s&port=%d&key=%s&t=10", c, port, key) })
			pollUntil(t, s, fmtURL(s, "/blocked?port=%d", port), fmt.Sprint(n))
			resp, body := get(t, fmtURL(s, "/push?port=%d&key=%s&n=%d", port, key, n))
			expectStatus(t, resp, body, 200)
			f := <-done
			if f.err != nil {
				t.Fatalf("%v\n%s", f.err, s.logText())
			}
			for i, b := range f.bodies {
				if !strings.HasPrefix(b, "v") {
					t.Fatalf("request %d answered %q, want a pushed value\n%s", i, b, s.logText())
				}
			}
		})
		t.Run(c+"/off", func(t *testing.T) {
			s := startFerry(t, fiberIOApp(false, "fiberio_redis.php"))
			start := time.Now()
			expectBodies(t, s, <-inBackground(n, func(int) string {
				return fmtURL(s, "/blpop?c=%s&port=%d&key=%soff&t=0.05", c, port, c)
			}), "timeout")
			if took := time.Since(start); took < n*50*time.Millisecond {
				t.Fatalf("%d BLPOPs of 50 ms in one worker without fiber_io took %v: not serialized", n, took)
			}
		})
	}
}

// What a failing Redis gives the app is the same with the hooks on and off: a refused
// connect, an error reply (WRONGTYPE), and a read timeout (phpredis's read_timeout,
// predis's read_write_timeout) shorter than the BLPOP. With the hooks on, the worker serves
// other requests while one waits for its timeout.
func TestFiberIORedisErrors(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	clients := redisClients(t)
	_, port := startRedis(t)
	refused := freePort(t)
	for _, on := range []bool{true, false} {
		s := startFerry(t, fiberIOApp(on, "fiberio_redis.php"))
		for _, c := range clients {
			t.Run(fmt.Sprintf("%s/%v", c, on), func(t *testing.T) {
				_, body := get(t, fmtURL(s, "/blpop?c=%s&port=%d&key=r", c, refused))
				if !strings.HasPrefix(body, "error: ") || !strings.Contains(strings.ToLower(body), "refused") {
					t.Fatalf("connect to a closed port answered %q, want the client's refused error", body)
				}
				_, body = get(t, fmtURL(s, "/wrongtype?c=%s&port=%d&key=wt%s", c, port, c))
				if !strings.HasPrefix(body, "error: WRONGTYPE") {
					t.Fatalf("LPUSH on a string answered %q, want Redis's WRONGTYPE error", body)
				}
				start := time.Now()
				key := fmt.Sprintf("to%s%v", c, on)
				waiting := inBackground(1, func(int) string { return fmtURL(s, "/blpop?c=%s&port=%d&key=%s&t=20&rt=0.5", c, port, key) })
				if on {
					// Served while the other waits for its timeout: the BLPOP is seen blocked.
					pollUntil(t, s, fmtURL(s, "/blocked?port=%d", port), "1")
				}
				f := <-waiting
				if f.err != nil {
					t.Fatal(f.err)
				}
				if took := time.Since(start); !strings.HasPrefix(f.bodies[0], "error: ") || took < 500*time.Millisecond {
					t.Fatalf("a BLPOP of 20 s with a read timeout of 0.5 s answered %q after %v, want the client's read error after 0.5 s", f.bodies[0], took)
				}
				resp, body := get(t, s.url+"/hello")
				expectStatus(t, resp, body, 200)
			})
		}
	}
}

// A Redis killed (kill -9) while requests wait in BLPOP: each gets its client's error, the
// worker goes on serving, and a request after it gets the refused error.
func TestFiberIORedisKilledMidCommand(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	clients := redisClients(t)
	d, port := startRedis(t)
	s := startFerry(t, fiberIOApp(true, "fiberio_redis.php"))
	done := inBackground(len(clients), func(i int) string {
		return fmtURL(s, "/blpop?c=%s&port=%d&key=kill&t=20", clients[i], port)
	})
	pollUntil(t, s, fmtURL(s, "/blocked?port=%d", port), fmt.Sprint(len(clients)))
	d.kill()
	f := <-done
	if f.err != nil {
		t.Fatalf("%v\n%s", f.err, s.logText())
	}
	for i, b := range f.bodies {
		if !strings.HasPrefix(b, "error: ") {
			t.Fatalf("%s's BLPOP on a killed Redis answered %q, want its client's error", clients[i], b)
		}
	}
	resp, body := get(t, s.url+"/hello")
	expectStatus(t, resp, body, 200)
	_, body = get(t, fmtURL(s, "/blpop?port=%d&key=kill", port))
	if !strings.Contains(strings.ToLower(body), "refused") {
		t.Fatalf("after the kill a connect answered %q, want refused", body)
	}
}

// One connection kept in a static and used by two requests at once: while the first waits
// in BLPOP, the second's command fails with fiber_io's warning instead of writing into the
// connection the first is reading; the first gets its value, and the connection serves the
// next request. phpredis keeps the connection after the failed write; predis closes it
// (fclose() while the first request's Fiber waits in it).
func TestFiberIORedisSharedHandle(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	clients := redisClients(t)
	_, port := startRedis(t)
	s := startFerry(t, fiberIOApp(true, "fiberio_redis.php"))
	for _, c := range clients {
		t.Run(c, func(t *testing.T) {
			key := "sh" + c
			first := inBackground(1, func(int) string { return fmtURL(s, "/shared?c=%s&port=%d&key=%s&t=10", c, port, key) })
			pollUntil(t, s, fmtURL(s, "/blocked?port=%d", port), "1")
			_, body := get(t, fmtURL(s, "/shared?c=%s&port=%d&key=%s2&t=0.05", c, port, key))
			if !strings.Contains(body, "another Fiber is waiting in this stream") && !strings.Contains(body, "Error while writing bytes") {
				t.Fatalf("the second user of a shared connection answered %q, want fiber_io's warning\n%s", body, s.logText())
			}
			resp, body := get(t, fmtURL(s, "/push?port=%d&key=%s&n=1", port, key))
			expectStatus(t, resp, body, 200)
			f := <-first
			// predis's close may end the first one's wait: its error, never a crash or a
			// reply meant for another command.
			closed := c == "predis" && f.err == nil && strings.HasPrefix(f.bodies[0], "error: ")
			if (f.err != nil || f.bodies[0] != "v0") && !closed {
				t.Fatalf("the first user answered %q (%v), want v0\n%s", f.bodies, f.err, s.logText())
			}
			_, body = get(t, fmtURL(s, "/shared?c=%s&port=%d&key=%s3&t=0.05", c, port, key))
			if body != "timeout" {
				t.Fatalf("the shared connection then answered %q, want an ordinary BLPOP timeout\n%s", body, s.logText())
			}
		})
	}
}
