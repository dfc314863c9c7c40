package main

import (
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// startTarantool runs testdata/fiberio_tarantool.lua on a free port; its address.
func startTarantool(t *testing.T) (*serverProc, string) {
	t.Helper()
	bin, err := exec.LookPath("tarantool")
	if err != nil {
		t.Skip("tarantool not found (Debian: tarantool)")
	}
	if out, err := exec.Command("php", "-m").Output(); err != nil || !strings.Contains(string(out), "msgpack") {
		t.Skip("php has no msgpack, which testdata/SyncIproto.php packs with (Debian: php8.2-msgpack)")
	}
	port := freePort(t)
	lua, _ := filepath.Abs("testdata/fiberio_tarantool.lua")
	cmd := exec.Command(bin, lua, fmt.Sprint(port), t.TempDir())
	return startServerProc(t, cmd, "tarantool ready"), fmt.Sprintf("127.0.0.1:%d", port)
}

func tntURL(s *server, path, addr, fn string, args ...any) string {
	a := "["
	for i, v := range args {
		if i > 0 {
			a += ","
		}
		a += fmt.Sprint(v)
	}
	return fmtURL(s, "%s?addr=%s&fn=%s&args=%s", path, addr, fn, url.QueryEscape(a+"]"))
}

// Tarantool through SyncIproto, a synchronous IPROTO client on stream_socket_client(): with
// pool.fiber_io, eight calls from eight requests of ONE worker are inside Tarantool at once
// (a Lua procedure answers none of them before it holds all eight, and counts them); without
// it, the Lua side never sees two at once, and eight fiber.sleep(0.05) take eight times
// 50 ms.
func TestFiberIOTarantoolConcurrent(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	_, addr := startTarantool(t)
	const n = 8
	t.Run("on", func(t *testing.T) {
		s := startFerry(t, fiberIOApp(true, "fiberio_tarantool.php"))
		expectBodies(t, s, <-inBackground(n, func(int) string { return tntURL(s, "/call", addr, "gate", n) }), fmt.Sprint(n))
		_, body := get(t, tntURL(s, "/call", addr, "most_and_reset"))
		if body != fmt.Sprint(n) {
			t.Fatalf("Tarantool held at most %s calls at once, want %d", body, n)
		}
	})
	t.Run("off", func(t *testing.T) {
		s := startFerry(t, fiberIOApp(false, "fiberio_tarantool.php"))
		start := time.Now()
		expectBodies(t, s, <-inBackground(n, func(int) string { return tntURL(s, "/call", addr, "slow", 0.05) }), `"slept"`)
		took := time.Since(start)
		if _, body := get(t, tntURL(s, "/call", addr, "most_and_reset")); body != "1" {
			t.Fatalf("without fiber_io Tarantool held %s calls at once, want 1", body)
		}
		if took < n*50*time.Millisecond {
			t.Fatalf("%d serialized fiber.sleep(0.05) took %v", n, took)
		}
	})
}

// A Lua error, a refused connect and a read timeout reach the app as they do without the
// hooks; with them, the worker serves others while a call waits for its timeout.
func TestFiberIOTarantoolErrors(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	_, addr := startTarantool(t)
	refused := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprint(on), func(t *testing.T) {
			s := startFerry(t, fiberIOApp(on, "fiberio_tarantool.php"))
			if _, body := get(t, tntURL(s, "/call", addr, "fail")); !strings.HasPrefix(body, "error: server error: ") || !strings.Contains(body, "boom from Lua") {
				t.Fatalf("a Lua error answered %q", body)
			}
			if _, body := get(t, tntURL(s, "/call", refused, "slow", 0)); body != "error: connect: 111 Connection refused" {
				t.Fatalf("a closed port answered %q", body)
			}
			start := time.Now()
			waiting := inBackground(1, func(int) string { return tntURL(s, "/call", addr, "slow", 3) + "&to=0.3" })
			if on {
				pollUntil(t, s, tntURL(s, "/call", addr, "inside_now"), "1")
			}
			f := <-waiting
			if took := time.Since(start); f.err != nil || f.bodies[0] != "error: read timed out" || took < 300*time.Millisecond {
				t.Fatalf("a 3 s call with a 0.3 s read timeout answered %q (%v) after %v", f.bodies, f.err, took)
			}
		})
	}
}

// A Tarantool killed (kill -9) while calls wait in it: each gets the client's error, and the
// worker goes on serving.
func TestFiberIOTarantoolKilledMidCall(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	d, addr := startTarantool(t)
	s := startFerry(t, fiberIOApp(true, "fiberio_tarantool.php"))
	const n = 3
	done := inBackground(n, func(int) string { return tntURL(s, "/call", addr, "slow", 20) })
	pollUntil(t, s, tntURL(s, "/call", addr, "inside_now"), fmt.Sprint(n))
	d.kill()
	expectBodies(t, s, <-done, "error: connection closed")
	resp, body := get(t, s.url+"/hello")
	expectStatus(t, resp, body, 200)
}

// One SyncIproto connection kept in a static and used by two requests at once: while the
// first waits for its answer, the second's write fails with fiber_io's warning instead of
// putting its request into the connection; the first gets its own answer (its sync checked),
// and the connection then serves the next request.
func TestFiberIOTarantoolSharedHandle(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	_, addr := startTarantool(t)
	s := startFerry(t, fiberIOApp(true, "fiberio_tarantool.php"))
	first := inBackground(1, func(int) string { return tntURL(s, "/shared", addr, "gate", 99) })
	pollUntil(t, s, tntURL(s, "/call", addr, "inside_now"), "1")
	if _, body := get(t, tntURL(s, "/shared", addr, "inside_now")); !strings.Contains(body, "another Fiber is waiting in this stream") {
		t.Fatalf("the second user of a shared connection answered %q, want fiber_io's warning\n%s", body, s.logText())
	}
	get(t, tntURL(s, "/call", addr, "release"))
	if f := <-first; f.err != nil || f.bodies[0] != "1" {
		t.Fatalf("the first user answered %q (%v), want 1 (the gate's count)\n%s", f.bodies, f.err, s.logText())
	}
	if _, body := get(t, tntURL(s, "/shared", addr, "inside_now")); body != "0" {
		t.Fatalf("the shared connection then answered %q, want 0\n%s", body, s.logText())
	}
}
