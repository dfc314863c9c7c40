package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// adminGet asks the admin socket.
func (s *server) adminGet(t testing.TB, path string) string {
	t.Helper()
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", s.admin)
		}}}
	resp, err := c.Get("http://ferry" + path)
	if err != nil {
		t.Fatal(err)
	}
	return readAll(t, resp)
}

// metric reads one gauge from /metrics.
func (s *server) metric(t testing.TB, name string) int {
	t.Helper()
	for _, line := range strings.Split(s.adminGet(t, "/metrics"), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// until polls cond until it holds or the deadline passes.
func until(t testing.TB, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *server) waitExit(t testing.TB, d time.Duration) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	select {
	case <-s.exited:
	case <-time.After(d):
		t.Fatalf("ferry did not exit within %s", d)
	}
	return s.cmd.ProcessState.ExitCode(), time.Since(start)
}

// getAll sends one GET per path at once; wait returns, for each request that
// did not get a 200, its path and what it got instead.
func (s *server) getAll(paths ...string) (wait func() []string) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []string
	for _, path := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got := ""
			if resp, err := client.Get(s.url + path); err != nil {
				got = err.Error()
			} else {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					got = strconv.Itoa(resp.StatusCode)
				}
			}
			if got != "" {
				mu.Lock()
				bad = append(bad, path+": "+got)
				mu.Unlock()
			}
		}()
	}
	return func() []string { wg.Wait(); return bad }
}

func repeat(path string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = path
	}
	return out
}

// A deploy drains: requests already accepted, those waiting in the pool's
// queue for a worker included, are answered after SIGTERM
// (drain_e2e_test.go), and ferry then exits 0.
func TestSIGTERMDrainsQueuedRequests(t *testing.T) {
	frontOnly(t, "the pool's queue is the front's; direct mode's queue is the kernel's (TestDirectSIGTERMAnswersTheAcceptQueue)")
	s := drainQueuedThroughSIGTERM(t)
	if code, _ := s.waitExit(t, 20*time.Second); code != 0 {
		t.Fatalf("exit code %d after a clean drain", code)
	}
}

// An idle keep-alive connection must not hold the shutdown.
func TestSIGTERMWithIdleKeepAliveClient(t *testing.T) {
	s := startFerry(t, appConfig(""))
	c, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET /pid HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	s.cmd.Process.Signal(syscall.SIGTERM)
	// The drain budget is 65 s; an idle connection closes at once.
	code, took := s.waitExit(t, 30*time.Second)
	if code != 0 || took > 10*time.Second {
		t.Fatalf("exit %d after %s with an idle keep-alive client", code, took)
	}
}

// When the drain budget runs out the workers are killed and ferry says so.
func TestShutdownTimeoutKillsWorkers(t *testing.T) {
	frontOnly(t, "it waits for the front's jobs-in-flight gauge")
	s := startFerry(t, strings.Replace(appConfig("  destroy_timeout: 500ms\n  exec_ttl: 0s\n"), "max_body_size: 1MiB", "max_body_size: 1MiB\n  write_timeout: 500ms", 1))
	go http.Get(s.url + "/sleep?ms=20000")
	until(t, "the job to run", 10*time.Second, func() bool { return s.metric(t, "ferry_jobs_in_flight") == 1 })
	s.cmd.Process.Signal(syscall.SIGTERM)
	code, took := s.waitExit(t, 15*time.Second)
	if code != 1 {
		t.Fatalf("exit code %d, want 1 when the drain budget ran out", code)
	}
	if took > 10*time.Second {
		t.Fatalf("took %s to stop with a 1 s budget", took)
	}
	if !strings.Contains(s.logText(), "stopped before every request was answered") {
		t.Fatalf("the log does not say requests were cut:\n%s", s.logText())
	}
}

func TestSIGHUPReloadsThroughTheBinary(t *testing.T) {
	s := startFerry(t, appConfig(""))
	pids := func() []string {
		var out []string
		for _, f := range strings.Split(s.adminGet(t, "/workers"), "\"PID\":")[1:] {
			pid, _, _ := strings.Cut(f, ",")
			out = append(out, pid)
		}
		return out
	}
	before := pids()
	s.cmd.Process.Signal(syscall.SIGHUP)
	until(t, "a new generation", 20*time.Second, func() bool {
		now := pids()
		if len(now) != 2 {
			return false
		}
		for _, p := range now {
			for _, b := range before {
				if p == b {
					return false
				}
			}
		}
		return true
	})
	resp, body := get(t, s.url+"/pid")
	expectStatus(t, resp, body, 200)
}

func TestAdminSocket(t *testing.T) {
	s := startFerry(t, appConfig(""))
	st, err := os.Stat(s.admin)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Fatalf("admin socket mode %v, want 0600", st.Mode().Perm())
	}
	if h := s.adminGet(t, "/health"); !strings.HasPrefix(h, "ok: 2 workers ready") {
		t.Fatalf("/health: %q", h)
	}
	m := s.adminGet(t, "/metrics")
	for _, want := range []string{`ferry_workers{state="ready"} 2`, "ferry_jobs_queued 0", "\nferry_workers_rss_bytes "} {
		if !strings.Contains(m, want) {
			t.Fatalf("/metrics lacks %q:\n%s", want, m)
		}
	}
}

// admin.socket naming a regular file must not delete it.
func TestAdminSocketNeverDeletesAFile(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "important.txt")
	os.WriteFile(victim, []byte("keep me"), 0o644)
	cfg := filepath.Join(dir, "ferry.yaml")
	wd, _ := os.Getwd()
	os.WriteFile(cfg, []byte(fmt.Sprintf("server:\n  address: %q\nadmin:\n  socket: %q\npool:\n  command: [php, %s/testdata/app.php]\n  num_workers: 1\n", anyPort, victim, wd)), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, ferryBin, "serve", "-c", cfg).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ctx.Err() != nil {
		t.Fatalf("ferry started with admin.socket on a regular file: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "keep me" {
		t.Fatalf("the file at admin.socket was removed or changed: %v %q", err, b)
	}
	if !strings.Contains(string(out), "not a socket") {
		t.Fatalf("unclear error: %s", out)
	}
}

func TestReadHeaderAndIdleTimeouts(t *testing.T) {
	s := startFerry(t, strings.Replace(appConfig(""), "max_body_size: 1MiB", "max_body_size: 1MiB\n  read_header_timeout: 300ms\n  idle_timeout: 300ms", 1))
	addr := strings.TrimPrefix(s.url, "http://")
	// Slowloris: a header that never ends gets 408 and the connection closes.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
	b, _ := io.ReadAll(c)
	if !strings.HasPrefix(string(b), "HTTP/1.1 408") {
		t.Fatalf("slow header: %q, want 408", b)
	}
	// An idle keep-alive connection is closed after idle_timeout.
	c2, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c2.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c2, "GET /pid HTTP/1.1\r\nHost: x\r\n\r\n")
	r := bufio.NewReader(c2)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	if _, err := r.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection: %v, want EOF from the server closing it", err)
	}
}

// A connection that sends nothing is refused at read_header_timeout with a
// 408, as one that sends half a header is: idle_timeout is the wait between
// two requests, not before the first. (In direct mode it waited idle_timeout,
// so a flood of silent connections held every worker's share of
// max_connections for that long.)
func TestSilentConnectionTimesOutAtReadHeaderTimeout(t *testing.T) {
	s := startFerry(t, strings.Replace(appConfig(""), "max_body_size: 1MiB", "max_body_size: 1MiB\n  read_header_timeout: 300ms\n  idle_timeout: 60s", 1))
	c, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(c)
	if !strings.HasPrefix(string(b), "HTTP/1.1 408") {
		t.Fatalf("a connection that sent nothing: %q %v, want 408", b, err)
	}
}

// idle_timeout 0 means read_timeout, as documented, not read_header_timeout.
func TestIdleTimeoutZeroUsesReadTimeout(t *testing.T) {
	s := startFerry(t, strings.Replace(appConfig(""), "max_body_size: 1MiB", "max_body_size: 1MiB\n  read_header_timeout: 300ms\n  read_timeout: 20s\n  idle_timeout: 0s", 1))
	c, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	for i := range 2 {
		c.SetDeadline(time.Now().Add(5 * time.Second))
		fmt.Fprintf(c, "GET /pid HTTP/1.1\r\nHost: x\r\n\r\n")
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("request %d on the kept-alive connection: %v", i+1, err)
		}
		io.Copy(io.Discard, resp.Body)
		if i == 0 {
			// Idle for three read_header_timeouts: the connection must still be open.
			c.SetReadDeadline(time.Now().Add(time.Second))
			if _, err := r.ReadByte(); !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("idle connection after 1 s with idle_timeout 0 and read_timeout 20s: %v, want it still open", err)
			}
		}
	}
}

// max_memory becomes PHP's memory_limit: one request cannot grow past it.
func TestMaxMemoryBoundsOneRequest(t *testing.T) {
	s := startFerry(t, appConfig("  max_memory: 64MiB\n"))
	resp, body := get(t, s.url+"/alloc?mb=200")
	// The fatal error ends the worker, as it ends a PHP process anywhere; the
	// request failed in the application, a 500 as under FPM.
	expectStatus(t, resp, body, 500)
	if !waitLog(s, "Allowed memory size") {
		t.Fatalf("no memory_limit error in the log:\n%s", s.logText())
	}
	resp, body = get(t, s.url+"/pid")
	expectStatus(t, resp, body, 200)
}

func rawExchange(t *testing.T, addr, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, raw)
	b, _ := io.ReadAll(c)
	return string(b)
}

func TestMalformedRequestsNeverReachPHP(t *testing.T) {
	s := startFerry(t, appConfig(""))
	addr := strings.TrimPrefix(s.url, "http://")
	cases := []struct{ name, raw, status string }{
		{"smuggling", "POST /counter HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET /counter HTTP/1.1\r\nHost: a\r\n\r\n", "HTTP/1.1 400"},
		{"no Host", "GET /counter HTTP/1.1\r\n\r\n", "HTTP/1.1 400"},
		{"two Hosts", "GET /counter HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "HTTP/1.1 400"},
		{"NUL", "GET /counter\x00 HTTP/1.1\r\nHost: a\r\n\r\n", "HTTP/1.1 400"},
		{"version", "GET /counter HTTP/9.9\r\nHost: a\r\n\r\n", "HTTP/1.1 505"},
		{"CONNECT", "CONNECT a:443 HTTP/1.1\r\nHost: a:443\r\n\r\n", "HTTP/1.1 405"},
		{"no colon", "GET /counter HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n", "HTTP/1.1 400"},
		{"7000 headers", "GET /counter HTTP/1.1\r\nHost: a\r\n" + strings.Repeat("X:\r\n", 7000) + "\r\n", "HTTP/1.1 431"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			resp := rawExchange(t, addr, c.raw)
			if !strings.HasPrefix(resp, c.status) || strings.Count(resp, "HTTP/1.1 ") != 1 {
				t.Fatalf("got %q, want one %s and a close", resp, c.status)
			}
			if d := time.Since(start); d > 4*time.Second {
				t.Fatalf("answered after %s", d)
			}
		})
	}
}

func TestWorkerHeadersAreChecked(t *testing.T) {
	s := startFerry(t, strings.Replace(appConfig(""), "testdata/app.php", "testdata/raw.php", 1))
	addr := strings.TrimPrefix(s.url, "http://")
	for _, path := range []string{"/crlf", "/nul", "/103"} {
		resp := rawExchange(t, addr, "GET "+path+" HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
		if !strings.HasPrefix(resp, "HTTP/1.1 502") || strings.Contains(resp, "evil") {
			t.Errorf("%s: %q, want 502 and no injected header", path, resp)
		}
	}
	if resp := rawExchange(t, addr, "GET /ok HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"); !strings.Contains(resp, "X-A: fine") {
		t.Errorf("/ok: %q", resp)
	}
}

// An app writing to STDOUT must not corrupt the relay: no request, its own
// or another's, fails.
func TestStdoutWritesFailNoRequest(t *testing.T) {
	s := startFerry(t, appConfig(""))
	paths := repeat("/pid", 40)
	for i := 0; i < len(paths); i += 4 {
		paths[i] = "/stdout"
	}
	for _, bad := range s.getAll(paths...)() {
		t.Error(bad)
	}
	if !waitLog(s, "log line on stdout") {
		t.Fatalf("the app's stdout did not reach the log:\n%s", s.logText())
	}
}

// Each job's exec_ttl clock runs from its own start: a queue of healthy
// one-second jobs on one worker is never killed as a batch.
func TestExecTTLTimesEachJob(t *testing.T) {
	s := startFerry(t, strings.Replace(appConfig("  exec_ttl: 1500ms\n"), "num_workers: 2", "num_workers: 1", 1))
	for _, bad := range s.getAll(repeat("/sleep?ms=500", 6)...)() {
		t.Errorf("a 500 ms job under exec_ttl 1.5s failed: %s", bad)
	}
}
