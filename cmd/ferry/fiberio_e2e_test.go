package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// gateServer is the slow TCP server of the pool.fiber_io tests: it reads one line per
// connection and answers "ok <line>" once gate lines are in hand (all of them at once), or
// after delay when gate is 1. It records the most connections it ever held open together,
// which is what tells a worker that suspends Fibers from one that blocks.
type gateServer struct {
	ln      net.Listener
	gate    int
	delay   time.Duration
	mu      sync.Mutex
	open    int
	maxOpen int
	waiting []net.Conn
	lines   []string
}

func startGateServer(t *testing.T, gate int, delay time.Duration) *gateServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveGate(t, ln, gate, delay)
}

// serveGate runs the gate server on ln (plain TCP, or TLS: fiberio_tls_e2e_test.go).
func serveGate(t *testing.T, ln net.Listener, gate int, delay time.Duration) *gateServer {
	g := &gateServer{ln: ln, gate: gate, delay: delay}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go g.serve(c)
		}
	}()
	return g
}

// held counts a request from its line read to its answer written: a client that got its
// answer is not waiting, even if its connection is not closed yet.
func (g *gateServer) held(d int) {
	g.mu.Lock()
	g.open += d
	g.maxOpen = max(g.maxOpen, g.open)
	g.mu.Unlock()
}

func (g *gateServer) serve(c net.Conn) {
	// A gate that never fills must not hang the test: the connection then fails.
	c.SetDeadline(time.Now().Add(5 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		c.Close()
		return
	}
	g.held(1)
	if g.gate <= 1 {
		time.Sleep(g.delay) // the slow server's own work, not a wait for the test's sake
		g.held(-1)
		fmt.Fprintf(c, "ok %s\n", strings.TrimSpace(line))
		io.Copy(io.Discard, c)
		c.Close()
		return
	}
	g.mu.Lock()
	g.waiting = append(g.waiting, c)
	g.lines = append(g.lines, strings.TrimSpace(line))
	var release []net.Conn
	var lines []string
	if len(g.waiting) == g.gate {
		release, lines = g.waiting, g.lines
		g.waiting, g.lines = nil, nil
	}
	g.mu.Unlock()
	for i, w := range release {
		g.held(-1)
		fmt.Fprintf(w, "ok %s\n", lines[i])
	}
	io.Copy(io.Discard, c)
	c.Close()
}

func (g *gateServer) most() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.maxOpen
}

// fiberIOConfig serves testdata/fiberio.php with one Fiber-mode worker.
func fiberIOConfig(io bool, env string) string {
	extra := "  fibers: true\n  max_concurrency: 16\n" + env
	if io {
		extra += "  fiber_io: true\n"
	}
	yaml := strings.Replace(appConfig(extra), "testdata/app.php", "testdata/fiberio.php", 1)
	return strings.Replace(yaml, "num_workers: 2", "num_workers: 1", 1)
}

// getAll sends n GETs at once and returns their bodies (status other than 200: the test fails).
func getAll(t *testing.T, n int, url func(i int) string) []string {
	t.Helper()
	bodies, err := fetchAll(n, url)
	if err != nil {
		t.Fatal(err)
	}
	return bodies
}

// fetchAll is getAll for a goroutine other than the test's.
func fetchAll(n int, url func(i int) string) ([]string, error) {
	bodies := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := client.Get(url(i))
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			bodies[i] = string(b)
			if resp.StatusCode != 200 {
				errs[i] = fmt.Errorf("status %d: %s", resp.StatusCode, b)
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return bodies, fmt.Errorf("request %d: %w", i, err)
		}
	}
	return bodies, nil
}

// fiberIORunners are the two ways a Fiber-mode worker runs a job: ext/ferry's own Fibers
// (the job promoted to PHP's runner once it waits) and php/worker's FiberRunner alone.
var fiberIORunners = map[string]string{"ext": "", "php": "  env:\n    FERRY_EXT_LOOP: \"0\"\n"}

// With pool.fiber_io, eight requests whose handler connects with stream_socket_client(),
// writes a line and waits in fgets() are all waiting at once in ONE worker: the server
// answers none until it holds all eight. Without it, the worker serves them one by one:
// the server never sees two connections at once.
func TestFiberIOStreamsSuspendOnlyTheirFiber(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	const n = 8
	for via, env := range fiberIORunners {
		t.Run(via+"/on", func(t *testing.T) {
			g := startGateServer(t, n, 0)
			s := startFerry(t, fiberIOConfig(true, env))
			bodies := getAll(t, n, func(i int) string {
				return fmt.Sprintf("%s/tcp?addr=%s&id=%d", s.url, g.ln.Addr(), i)
			})
			for i, b := range bodies {
				if b != fmt.Sprintf("ok %d", i) {
					t.Fatalf("request %d answered %q, want %q\n%s", i, b, fmt.Sprintf("ok %d", i), s.logText())
				}
			}
			if got := g.most(); got != n {
				t.Fatalf("the server held at most %d requests at once, want %d", got, n)
			}
		})
		t.Run(via+"/off", func(t *testing.T) {
			g := startGateServer(t, 1, 50*time.Millisecond)
			s := startFerry(t, fiberIOConfig(false, env))
			start := time.Now()
			bodies := getAll(t, n, func(i int) string {
				return fmt.Sprintf("%s/tcp?addr=%s&id=%d", s.url, g.ln.Addr(), i)
			})
			for i, b := range bodies {
				if b != fmt.Sprintf("ok %d", i) {
					t.Fatalf("request %d answered %q\n%s", i, b, s.logText())
				}
			}
			if got := g.most(); got != 1 {
				t.Fatalf("without fiber_io the server held %d requests at once, want 1 (the worker blocks)", got)
			}
			if took := time.Since(start); took < n*50*time.Millisecond {
				t.Fatalf("%d serialized 50 ms waits took %v", n, took)
			}
		})
	}
}

// usleep() in a handler sleeps on the loop with pool.fiber_io: all eight requests have
// started sleeping before the first wakes (the worker's log, one pipe, keeps their order).
// Without it, each sleep ends before the next request starts.
func TestFiberIOUsleepSuspendsOnlyItsFiber(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	const n = 8
	for via, env := range fiberIORunners {
		for _, on := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/%v", via, on), func(t *testing.T) {
				s := startFerry(t, fiberIOConfig(on, env))
				getAll(t, n, func(i int) string { return fmt.Sprintf("%s/usleep?ms=200&id=%d", s.url, i) })
				if !waitLog(s, "usleep end") {
					t.Fatalf("no usleep in the log:\n%s", s.logText())
				}
				starts, firstEnd := 0, -1
				for i, line := range strings.Split(s.logText(), "\n") {
					if strings.Contains(line, "usleep start") && firstEnd < 0 {
						starts++
					}
					if strings.Contains(line, "usleep end") && firstEnd < 0 {
						firstEnd = i
					}
				}
				want := 1
				if on {
					want = n
				}
				if starts != want {
					t.Fatalf("%d sleeps started before the first ended, want %d\n%s", starts, want, s.logText())
				}
			})
		}
	}
}

// A write that a server does not read times out after the stream's timeout, as without
// the hooks, not once more for each few bytes the kernel still takes after the wait ran out
// (the hook used to send again after its wait timed out: the loopback peer's buffer took
// 90 KiB more, and the write waited a second full timeout).
func TestFiberIOWriteTimeoutHonoured(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	ln := holdingListener(t) // accepts, never reads
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprint(on), func(t *testing.T) {
			s := startFerry(t, fiberIOConfig(on, ""))
			_, body := get(t, fmt.Sprintf("%s/bigwrite?addr=%s&to=1", s.url, ln.Addr()))
			var got struct {
				TimedOut bool `json:"timed_out"`
				Notice   string
				Took     float64
			}
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatalf("%v: %s\n%s", err, body, s.logText())
			}
			if !got.TimedOut || got.Notice != "fwrite(): Send of N bytes failed with errno=11 Resource temporarily unavailable" {
				t.Fatalf("a write to a server that reads nothing answered %s, want timed_out and PHP's notice", body)
			}
			// One timeout of 1 s; the defect took two or more.
			if got.Took < 1 || got.Took > 1.8 {
				t.Fatalf("a write with a 1 s timeout took %.2f s", got.Took)
			}
		})
	}
}

// fullListener is a TCP port whose accept queue is full (backlog 0, one connection queued and
// never accepted): Linux drops the SYNs of further connects, which then time out.
func fullListener(t *testing.T) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	for range 4 {
		c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
		if err != nil {
			return addr // the queue is full: this connect timed out
		}
		t.Cleanup(func() { c.Close() })
	}
	t.Skip("the kernel kept accepting connects on a backlog of 0: no way to make a connect time out here")
	return ""
}

// A connect to a port that never answers fails after stream_socket_client()'s timeout with
// PHP's own error (110 Connection timed out), as without the hooks; with them, the worker
// serves another request while the connect waits.
func TestFiberIOConnectTimeout(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	addr := fullListener(t)
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprint(on), func(t *testing.T) {
			s := startFerry(t, fiberIOConfig(on, ""))
			start := time.Now()
			waiting := inBackground(1, func(int) string { return fmt.Sprintf("%s/tcp?addr=%s&ct=0.5", s.url, addr) })
			if on {
				servedBeside(t, s.url+"/hello", "fiberio", waiting)
			}
			f := <-waiting
			took := time.Since(start)
			if f.err == nil || !strings.Contains(f.err.Error(), "connect failed: 110 Connection timed out") || took < 500*time.Millisecond {
				t.Fatalf("a connect with a 0.5 s timeout to a full backlog answered %v after %v", f.err, took)
			}
		})
	}
}
