package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Direct mode's access log and request ids (ext/ferry/ferry_direct_log.c) against the
// front's (internal/observe): a log pipeline must not care which mode served a request.

// logServer is a server of mode whose access log, in format, goes to log.
type logServer struct {
	*server
	log string
}

func startLogServer(t *testing.T, mode, format string, workers int) *logServer {
	t.Helper()
	log := filepath.Join(t.TempDir(), "access.log")
	fibers := ""
	if m, ok := strings.CutSuffix(mode, "+fibers"); ok {
		mode, fibers = m, "  fibers: true\n"
	}
	s := startFerry(t, fmt.Sprintf(`server:
  address: "%%ADDR%%"
  mode: %s
  request_id: true
  access_log: {enabled: true, format: %s, path: %q}
admin:
  socket: "%%ADMIN%%"
pool:
  command: ["php", "%%DIR%%/testdata/app.php"]
  num_workers: %d
%s`, mode, format, log, workers, fibers))
	return &logServer{server: s, log: log}
}

// lines waits until the log holds n lines and returns them.
func (s *logServer) lines(t *testing.T, n int) []string {
	t.Helper()
	var got []string
	until(t, fmt.Sprintf("%d lines in %s", n, s.log), 15*time.Second, func() bool {
		b, _ := os.ReadFile(s.log)
		got = strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		if len(b) == 0 {
			got = nil
		}
		return len(got) >= n
	})
	if len(got) != n {
		t.Fatalf("%d lines in the access log, want %d:\n%s", len(got), n, strings.Join(got, "\n"))
	}
	return got
}

// logExchange sends raw on a connection of its own and reads the answer (to method).
func logExchange(t *testing.T, addr, method, raw string) *http.Response {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte(raw)); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%q: %v", raw, err)
	}
	readAll(t, resp)
	return resp
}

func TestDirectAccessLogMatchesTheFront(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	for _, format := range []string{"json", "combined", "json/fibers"} {
		t.Run(format, func(t *testing.T) {
			mode := "direct"
			if f, ok := strings.CutSuffix(format, "/fibers"); ok {
				format, mode = f, "direct+fibers" // every request on the PHP path, answered from its Fiber
			}
			front, direct := startLogServer(t, "front", format, 1), startLogServer(t, mode, format, 1)
			cases := logCases()
			cases = append(cases, randomLogCases(34, len(cases), 120)...)
			logged := 0
			for i, raw := range cases {
				if !strings.Contains(raw, fmt.Sprintf("case=%d&", i)) && !strings.Contains(raw, fmt.Sprintf("case=%d ", i)) &&
					!strings.Contains(raw, fmt.Sprintf("case=%d\r", i)) {
					t.Fatalf("case %d is not named case=%d: %.60q", i, i, raw)
				}
				method, _, _ := strings.Cut(raw, " ")
				a := logExchange(t, front.host(), method, raw)
				b := logExchange(t, direct.host(), method, raw)
				if a.StatusCode != b.StatusCode {
					t.Errorf("case %d: status %d from the front, %d direct", i, a.StatusCode, b.StatusCode)
				}
				if a.StatusCode == http.StatusBadRequest && a.Header.Get("X-Request-Id") == "" {
					if b.Header.Get("X-Request-Id") != "" {
						t.Errorf("case %d: refused by the front's parser, given an id direct", i)
					}
					continue // fasthttp refuses it before the front's handler: no id, no line
				}
				logged++
				for j, r := range []*http.Response{a, b} {
					if id := r.Header.Values("X-Request-Id"); len(id) != 1 || !madeID.MatchString(id[0]) && !strings.Contains(raw, "X-Request-Id: "+id[0]+"\r\n") {
						t.Errorf("case %d: X-Request-Id %q in the %s answer %v", i, id, []string{"front's", "direct"}[j], r.Header)
					}
				}
			}
			t.Logf("%d of %d requests logged, compared", logged, len(cases))
			fl, dl := byCase(t, front.lines(t, logged)), byCase(t, direct.lines(t, logged))
			for i := range cases {
				k := fmt.Sprint(i)
				if fl[k] == "" {
					if dl[k] != "" {
						t.Errorf("case %d logged direct only: %s", i, dl[k])
					}
					continue
				}
				f, d := comparable(t, format, fl[k]), comparable(t, format, dl[k])
				for name, v := range f {
					if k == cutCase && (name == "uri" || name == "request" || name == "user_agent" || name == "referer") {
						v = strings.TrimSuffix(v, " HTTP/1.1")
						if cut := strings.TrimSuffix(strings.TrimSuffix(d[name], " HTTP/1.1"), `"`); len(dl[k]) > 4096 || len(cut) >= len(v) || !strings.HasPrefix(v, cut) {
							t.Errorf("case %s: %s %s direct, want a cut of the front's %s, the line (%d bytes) in PIPE_BUF",
								k, name, d[name], v, len(dl[k]))
						}
						continue
					}
					if name == "pid" && strings.HasPrefix(cases[i], "GET /parts") {
						continue // the front, which logs an answer in parts as it starts, knows no pid yet; a worker does
					}
					if d[name] != v {
						t.Errorf("case %d: %s %s from the front, %s direct\nfront:  %s\ndirect: %s", i, name, v, d[name], fl[k], dl[k])
					}
				}
			}
		})
	}
}

// Requests of many clients to two workers: every line whole, one per request, each with the
// id its client sent or one its worker made. Lines of ~0.9 KiB fill the workers' buffers and the pipe quickly.
func TestDirectAccessLogLinesNeverInterleave(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	s := startLogServer(t, "direct", "json", 2)
	const clients, each = 8, 150
	ua := strings.Repeat("agent/1.0 ", 70) + "end" // under the cut (FIELD_UA)
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for g := 0; g < clients; g++ {
		wg.Go(func() {
			for i := 0; i < each; i++ {
				req, _ := http.NewRequest("GET", fmt.Sprintf("%s/pid?client=%d&i=%d", s.url, g, i), nil)
				req.Header.Set("User-Agent", ua)
				if i%5 != 0 { // else the worker makes one
					req.Header.Set("X-Request-Id", fmt.Sprintf("c%d-%d", g, i))
				}
				resp, err := c.Do(req)
				if err != nil {
					errs <- err
					return
				}
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	pids := map[string]bool{}
	prefixes := map[int]string{} // of the ids each worker made
	for _, l := range s.lines(t, clients*each) {
		var e struct {
			ID  string `json:"request_id"`
			URI string `json:"uri"`
			PID int    `json:"pid"`
			UA  string `json:"user_agent"`
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("a line that does not parse (interleaved?): %v\n%q", err, l)
		}
		var g, i int
		_, err := fmt.Sscanf(e.URI, "/pid?client=%d&i=%d", &g, &i)
		if i%5 == 0 && madeID.MatchString(e.ID) {
			prefixes[e.PID] = e.ID[:16]
		} else if err != nil || e.ID != fmt.Sprintf("c%d-%d", g, i) || e.UA != ua {
			t.Fatalf("line of %q logs id %q: %s", e.URI, e.ID, l)
		}
		if seen[e.ID] {
			t.Fatalf("%s logged twice", e.ID)
		}
		seen[e.ID] = true
		pids[fmt.Sprint(e.PID)] = true
	}
	if len(pids) != 2 {
		t.Errorf("lines of workers %v, want both workers' lines", pids)
	}
	// Forked from one zygote, each worker still draws a prefix of its own.
	if len(prefixes) != 2 || prefixes[0] != "" {
		t.Errorf("the ids' prefixes by worker: %v, want two", prefixes)
	} else {
		var p []string
		for _, v := range prefixes {
			p = append(p, v)
		}
		if p[0] == p[1] {
			t.Errorf("two workers made ids with the same prefix %s", p[0])
		}
	}
}

// Off, the workers get no pipe: no FIFO is made, nothing is logged, no id is echoed.
func TestDirectAccessLogOffMakesNoPipe(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	for _, on := range []bool{false, true} {
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		log := filepath.Join(t.TempDir(), "access.log")
		s := startFerry(t, fmt.Sprintf(`server:
  address: "%%ADDR%%"
  mode: direct
  access_log: {enabled: %v, path: %q}
admin:
  socket: "%%ADMIN%%"
pool:
  command: ["php", "%%DIR%%/testdata/app.php"]
  num_workers: 1
`, on, log))
		resp, body := get(t, s.url+"/env?name=FERRY_DIRECT_LIMITS")
		pipes, _ := filepath.Glob(filepath.Join(tmp, "ferry-access-*", "access.fifo"))
		if strings.Contains(body, "access_log") != on || (len(pipes) == 1) != on || resp.Header.Get("X-Request-Id") != "" {
			t.Errorf("access log %v: pipes %v, X-Request-Id %q, FERRY_DIRECT_LIMITS %s", on, pipes, resp.Header.Get("X-Request-Id"), body)
		}
		if on {
			(&logServer{server: s, log: log}).lines(t, 1)
			s.cmd.Process.Signal(syscall.SIGTERM)
			<-s.exited
			if left, _ := filepath.Glob(filepath.Join(tmp, "ferry-access-*")); len(left) != 0 {
				t.Errorf("%v left behind after the server stopped", left)
			}
		} else if b, _ := os.ReadFile(log); len(b) != 0 {
			t.Errorf("access log off, yet: %s", b)
		}
	}
}

// A server that does not read the FIFO (stopped here with SIGSTOP, as a stalled disk would
// hold it) must not hold up serving: the workers' writes fail at once when the pipe is
// full, the lines of those writes are dropped, and a worker says so on its stderr.
func TestDirectAccessLogFullPipeDropsLinesNotRequests(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	s := startLogServer(t, "direct", "json", 1)
	ua := strings.Repeat("u", 700)
	c := &http.Client{Timeout: 10 * time.Second}
	send := func(n int) {
		t.Helper()
		for i := 0; i < n; i++ {
			req, _ := http.NewRequest("GET", s.url+"/pid", nil)
			req.Header.Set("User-Agent", ua)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatalf("request %d while the server is stopped: %v", i, err)
			}
			readAll(t, resp)
		}
	}
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	defer func() {
		if stopped {
			s.cmd.Process.Signal(syscall.SIGCONT)
		}
	}()
	const n = 1600 // ~1.4 MB of lines: past the FIFO's 1 MiB
	send(n)
	s.cmd.Process.Signal(syscall.SIGCONT)
	stopped = false
	s.logged(t, "[warning] access log:", "lines dropped so far")
	send(1) // served and logged as before
	var lines []string
	until(t, "the line of the request after SIGCONT", 10*time.Second, func() bool {
		b, _ := os.ReadFile(s.log)
		lines = strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		return len(lines) > 1 && len(lines) < n+1 && strings.Contains(lines[len(lines)-1], ua)
	})
	for _, l := range lines {
		var e map[string]any
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("a line that does not parse: %v\n%q", err, l)
		}
	}
	t.Logf("%d of %d lines kept", len(lines), n+1)
	// The workers count what they dropped on their stats page; the metrics add it up: with
	// the lines still on their way (another worker's buffer, the server's), every request.
	dropped, kept := 0, 0
	until(t, "the lines kept and ferry_direct_access_log_dropped_total to add up to the requests", 10*time.Second, func() bool {
		b, _ := os.ReadFile(s.log)
		kept = strings.Count(string(b), "\n")
		dropped = s.metric(t, "ferry_direct_access_log_dropped_total")
		return dropped > 0 && kept+dropped == n+1
	})
}
