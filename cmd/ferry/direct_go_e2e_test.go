package main

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// The Go server's side of server.mode: direct, with testdata/direct.php, a
// pure-PHP stand-in for ext/ferry's loop: it accepts on the socket it
// inherits and answers each connection with its pid. No C loop is needed.

func directConfig(boot string, workers int, extra string) string {
	return fmt.Sprintf(`server:
  address: "%%ADDR%%"
  mode: direct
  max_connections: 100
  trusted_proxies: [10.0.0.1, "10.1.0.0/16"]
admin:
  socket: "%%ADMIN%%"
log:
  level: info
pool:
  command: ["php", "%%DIR%%/testdata/direct.php"]
  num_workers: %d
  boot: %s
  php:
    extension: "off"
%s`, workers, boot, extra)
}

// directAnswer is what testdata/direct.php answers.
type directAnswer struct {
	PID, PPID int
	FD        string
	Via       string
	Flags     string
	Limits    map[string]any
}

// directGet sends one request on a new connection and reads the answer,
// whoever gives it: a worker (200) or, at shutdown, the server (503).
func directGet(addr, target string) (int, directAnswer, error) {
	var a directAnswer
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return 0, a, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", target); err != nil {
		return 0, a, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, a, err
	}
	b, err := readAllErr(resp)
	if err != nil {
		return 0, a, err
	}
	if resp.StatusCode == 200 {
		if err := json.Unmarshal(b, &a); err != nil {
			return 0, a, fmt.Errorf("%v: %q", err, b)
		}
	}
	return resp.StatusCode, a, nil
}

func (s *server) host() string { return strings.TrimPrefix(s.url, "http://") }

// byEachWorker sends slow requests two at a time until want workers have
// answered: one that holds a worker leaves the next connection to another.
func byEachWorker(t *testing.T, s *server, want int) map[int]directAnswer {
	t.Helper()
	got := map[int]directAnswer{}
	var mu sync.Mutex
	until(t, fmt.Sprintf("answers from %d workers", want), 20*time.Second, func() bool {
		var wg sync.WaitGroup
		for range want {
			wg.Go(func() {
				code, a, err := directGet(s.host(), "/slow?ms=100")
				if err != nil || code != 200 {
					t.Errorf("a request failed: %d %v", code, err)
					return
				}
				mu.Lock()
				got[a.PID] = a
				mu.Unlock()
			})
		}
		wg.Wait()
		return len(got) >= want
	})
	return got
}

// The server never serves server.address: the workers do, each on fd 3,
// named in FERRY_DIRECT_FD, with the socket non-blocking however many
// workers were started since, and their limits in FERRY_DIRECT_LIMITS. In
// fork boot they are the zygote's children and inherited it from there.
func TestDirectSocketReachesEveryWorker(t *testing.T) {
	for _, c := range []struct{ name, boot, extra string }{
		{"exec", "exec", ""}, {"fork", "fork", ""},
		{"exec over a unix socket relay", "exec", "  relay: unix\n"}, // the socket is fd 3 whatever the relay
	} {
		boot := c.boot
		t.Run(c.name, func(t *testing.T) {
			s := startFerry(t, directConfig(boot, 2, c.extra))
			ws := byEachWorker(t, s, 2)
			var zygote int
			if boot == "fork" {
				zs := zygotePIDs(s)
				if len(zs) != 1 {
					t.Fatalf("zygotes %v, want one", zs)
				}
				zygote = zs[0]
			}
			for pid, a := range ws {
				if a.Via != "direct" || a.FD != "3" {
					t.Errorf("worker %d: via %q on fd %q, want direct on 3", pid, a.Via, a.FD)
				}
				if pid == s.cmd.Process.Pid {
					t.Errorf("the server answered on server.address")
				}
				if fl, _ := strconv.ParseInt(a.Flags, 8, 64); fl&syscall.O_NONBLOCK == 0 {
					t.Errorf("worker %d: the shared socket is blocking (flags %s)", pid, a.Flags)
				}
				if boot == "fork" && a.PPID != zygote {
					t.Errorf("worker %d: parent %d, want the zygote %d", pid, a.PPID, zygote)
				}
				l := a.Limits
				if l["max_connections"] != float64(50) || l["max_header_size"] != float64(64<<10) || l["max_headers"] != float64(100) ||
					l["read_header_timeout_ms"] != float64(10000) || l["idle_timeout_ms"] != float64(120000) || l["max_jobs"] != float64(0) ||
					fmt.Sprint(l["trusted_proxies"]) != "[10.0.0.1/32 10.1.0.0/16]" {
					t.Errorf("worker %d: FERRY_DIRECT_LIMITS %v", pid, l)
				}
			}
		})
	}
}

// A worker that does not say "direct":true in its handshake would never
// accept: the start fails, saying why, as any failed boot does.
func TestDirectWorkerWithoutDirectFailsToBoot(t *testing.T) {
	for _, boot := range []string{"exec", "fork"} {
		t.Run(boot, func(t *testing.T) {
			out := failToStart(t, directConfig(boot, 2, "  env:\n    DIRECT_SAY: \"no\"\n"))
			for _, want := range []string{"failed to start", `server.mode: direct needs ext/ferry loaded in the workers`, `"direct":true`} {
				if !strings.Contains(out, want) {
					t.Errorf("the failure does not say %q:\n%s", want, out)
				}
			}
		})
	}
}

// directLoad opens a new connection per request from n clients until stop
// closes, and counts the answers and the failures (a reset, an EOF, a
// status other than 200).
func directLoad(addr string, n int, stop <-chan struct{}) (ok, failed *atomic.Int64, pids *sync.Map, wait func()) {
	ok, failed, pids = new(atomic.Int64), new(atomic.Int64), new(sync.Map)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				code, a, err := directGet(addr, "/")
				if err != nil || code != 200 {
					failed.Add(1)
					continue
				}
				ok.Add(1)
				pids.Store(a.PID, true)
			}
		})
	}
	return ok, failed, pids, wg.Wait
}

// A reload under a steady stream of new connections loses none: the new
// generation accepts on the same socket before the old one is told to stop,
// and a worker that stops leaves what waits in the queue to the others.
func TestDirectReloadUnderNewConnectionsLosesNone(t *testing.T) {
	for _, boot := range []string{"exec", "fork"} {
		t.Run(boot, func(t *testing.T) {
			s := startFerry(t, directConfig(boot, 2, ""))
			stop := make(chan struct{})
			ok, failed, pids, wait := directLoad(s.host(), 6, stop)
			until(t, "answers", 10*time.Second, func() bool { return ok.Load() > 50 })
			for round := range 2 {
				var old []int
				for _, w := range s.workers(t) {
					old = append(old, w.PID)
				}
				s.reloadTo(t, old)
				until(t, "the old generation gone", 20*time.Second, func() bool {
					for _, pid := range old {
						if running(pid) {
							return false
						}
					}
					return true
				})
				before := ok.Load()
				until(t, fmt.Sprintf("answers after reload %d", round+1), 10*time.Second, func() bool { return ok.Load() > before+50 })
			}
			close(stop)
			wait()
			if n := failed.Load(); n != 0 {
				t.Errorf("%d connections failed (of %d) across two reloads", n, ok.Load()+n)
			}
			n := 0
			pids.Range(func(any, any) bool { n++; return true })
			if n < 6 {
				t.Errorf("answers came from %d workers, want three generations of two", n)
			}
		})
	}
}

// SIGTERM with connections waiting in the accept queue: the worker finishes
// the request it serves, stops taking from the queue, exits; the server
// then answers what is left in the queue with a 503 (never a reset) and
// exits 0.
func TestDirectSIGTERMAnswersTheAcceptQueue(t *testing.T) {
	s := startFerry(t, directConfig("exec", 1, ""))
	type result struct {
		code int
		err  error
	}
	first := make(chan result, 1)
	go func() {
		code, _, err := directGet(s.host(), "/slow?ms=1000")
		first <- result{code, err}
	}()
	until(t, "the worker holding the slow request", 10*time.Second, func() bool {
		return strings.Contains(s.logText(), "direct.php: serving a slow request")
	})
	// The only worker is busy: these wait in the kernel's accept queue.
	const queued = 4
	conns := make([]net.Conn, queued)
	for i := range conns {
		c, err := net.Dial("tcp", s.host())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
		conns[i] = c
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	if r := <-first; r.err != nil || r.code != 200 {
		t.Fatalf("the request in progress at SIGTERM: %d %v", r.code, r.err)
	}
	codes := map[int]int{}
	for i, c := range conns {
		c.SetDeadline(time.Now().Add(20 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("queued connection %d got no answer: %v", i, err)
		}
		resp.Body.Close()
		c.Close()
		codes[resp.StatusCode]++
		if resp.StatusCode == 503 && resp.Header.Get("Retry-After") == "" {
			t.Errorf("a 503 without Retry-After")
		}
	}
	if codes[200]+codes[503] != queued || codes[503] == 0 {
		t.Errorf("queued connections got %v, want 200s from the worker before it stopped and 503s for the rest", codes)
	}
	if code, _ := s.waitExit(t, 20*time.Second); code != 0 {
		t.Errorf("ferry exited %d, want 0:\n%s", code, s.logText())
	}
	if strings.Contains(s.logText(), "worker ignored stop") {
		t.Errorf("the worker did not exit on its stop frame:\n%s", s.logText())
	}
	if !strings.Contains(s.logText(), "answered 503 to connections left in the accept queue") {
		t.Errorf("the 503s were not logged:\n%s", s.logText())
	}
}

// max_jobs is counted by the worker, which asks to be retired ({"stop":true})
// once it has served that many connections; each is replaced, and no
// connection fails meanwhile (it waits in the queue for the replacement).
func TestDirectMaxJobsRetiresThroughTheWorker(t *testing.T) {
	s := startFerry(t, directConfig("fork", 1, "  max_jobs: 3\n"))
	pids := map[int]int{}
	for i := range 10 {
		code, a, err := directGet(s.host(), "/")
		if err != nil || code != 200 {
			t.Fatalf("request %d: %d %v", i, code, err)
		}
		if a.Limits["max_jobs"] != float64(3) {
			t.Fatalf("FERRY_DIRECT_LIMITS max_jobs %v, want 3", a.Limits["max_jobs"])
		}
		pids[a.PID]++
	}
	if len(pids) < 4 {
		t.Errorf("10 connections were served by %v, want a new worker every 3", pids)
	}
	for pid, n := range pids {
		if n > 3 {
			t.Errorf("worker %d served %d connections, past max_jobs", pid, n)
		}
	}
	until(t, "the retirements recorded", 10*time.Second, func() bool {
		n := 0
		for _, why := range s.retired(t) {
			if why == "worker_stop" {
				n++
			}
		}
		return n >= 3
	})
}

// The front still serves its TLS listener in direct mode, through the pool:
// a direct worker gets those requests over the relay.
func TestDirectWorkersStillServeTheTLSListenerOverTheRelay(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	roots := writeCert(t, certFile, keyFile, "first")
	cfg := strings.Replace(directConfig("exec", 2, ""), "  mode: direct\n",
		"  mode: direct\n  tls:\n    address: \"127.0.0.1:0\"\n    cert: \""+certFile+"\"\n    key: \""+keyFile+"\"\n", 1)
	s := startFerry(t, cfg)
	m := httpsLine.FindStringSubmatch(s.logText())
	if m == nil {
		t.Fatalf("no HTTPS line in the log:\n%s", s.logText())
	}
	c := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true}}
	resp, err := c.Get(m[1] + "/over-tls")
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp)
	var a directAnswer
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &a) != nil || a.Via != "relay" || a.PID == 0 {
		t.Fatalf("over TLS: %s %s, want a worker's answer over the relay", resp.Status, body)
	}
	if code, d, err := directGet(s.host(), "/"); err != nil || code != 200 || d.Via != "direct" {
		t.Fatalf("on server.address: %d %+v %v", code, d, err)
	}
}
