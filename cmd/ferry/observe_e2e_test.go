package main

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// opsConfig is appConfig with keys added to server, admin and pool.
func opsConfig(server, admin, pool string) string {
	return `server:
  address: "%ADDR%"
` + server + `admin:
  socket: "%ADMIN%"
` + admin + `pool:
  command: ["php", "%DIR%/testdata/app.php"]
  num_workers: 2
` + pool
}

// scrape parses the exposition format as Prometheus would.
func scrape(t *testing.T, body string) map[string]*dto.MetricFamily {
	t.Helper()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, body)
	}
	return fams
}

// sample finds the value of name with the given labels (a counter, gauge or
// the count of a histogram); ok is false when there is no such sample.
func sample(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, l := range m.Label {
				if l.GetName() == labels[i] && l.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Histogram != nil:
			return float64(m.Histogram.GetSampleCount()), true
		}
	}
	return 0, false
}

// logged waits for a line of ferry's log containing all of parts and
// returns it.
func (s *server) logged(t *testing.T, parts ...string) string {
	t.Helper()
	var hit string
	until(t, "a log line with "+strings.Join(parts, ", "), 10*time.Second, func() bool {
		for _, line := range strings.Split(s.logText(), "\n") {
			all := true
			for _, p := range parts {
				all = all && strings.Contains(line, p)
			}
			if all {
				hit = line
				return true
			}
		}
		return false
	})
	return hit
}

// tcpAdmin is the address of the admin TCP listener, from the log.
func (s *server) tcpAdmin(t *testing.T) string {
	line := s.logged(t, "admin listening")
	m := regexp.MustCompile(`address=(\S+)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no address in %q", line)
	}
	return "http://" + m[1]
}

func TestPrometheusMetrics(t *testing.T) {
	s := startFerry(t, opsConfig("", "  metrics_address: 127.0.0.1:0\n", "  max_jobs: 3\n"))
	for range 5 {
		resp, body := get(t, s.url+"/echo?x=1")
		expectStatus(t, resp, body, 200)
	}
	resp, err := client.Post(s.url+"/echo", "text/plain", strings.NewReader("twelve bytes"))
	if err != nil {
		t.Fatal(err)
	}
	expectStatus(t, resp, readAll(t, resp), 200)
	resp, body := get(t, s.url+"/crash")
	expectStatus(t, resp, body, 502)

	// The 502 reaches the client before the worker's exit is accounted for.
	var fams map[string]*dto.MetricFamily
	until(t, "the crash counted", 10*time.Second, func() bool {
		_, body = get(t, s.tcpAdmin(t)+"/metrics")
		fams = scrape(t, body)
		v, _ := sample(fams, "ferry_worker_restarts_total", "reason", "crash")
		return v == 1
	})
	want := func(name string, min float64, labels ...string) {
		t.Helper()
		v, ok := sample(fams, name, labels...)
		if !ok || v < min {
			t.Errorf("%s%v = %v (present %v), want >= %v", name, labels, v, ok, min)
		}
	}
	want("ferry_http_requests_total", 5, "method", "GET", "code", "2xx")
	want("ferry_http_requests_total", 1, "method", "POST", "code", "2xx")
	want("ferry_http_requests_total", 1, "method", "GET", "code", "5xx")
	want("ferry_http_request_duration_seconds", 7)
	want("ferry_job_wait_seconds", 6)
	want("ferry_job_php_seconds", 6)
	want("ferry_http_request_body_bytes_total", 12)
	want("ferry_http_response_body_bytes_total", 100)
	want("ferry_worker_restarts_total", 1, "reason", "crash")
	want("ferry_worker_restarts_total", 1, "reason", "max_jobs")
	want("ferry_workers", 0, "state", "ready")
	want("ferry_worker_restarts_total", 0, "reason", "scale_down")
	// The first generation, then a replacement for each worker gone.
	want("ferry_worker_spawns_total", 1, "reason", "start")
	want("ferry_worker_spawns_total", 2, "reason", "replace")
	want("ferry_worker_spawns_total", 0, "reason", "scale_up")
	want("ferry_worker_spawn_seconds", 3)
	want("ferry_workers_uss_bytes", 1)
	want("ferry_workers_pss_bytes", 1)
	want("ferry_jobs_queued", 0)
	want("go_goroutines", 1)
	want("process_resident_memory_bytes", 1)
	// Six answers from workers retired for max_jobs and a crash: a sum over
	// the live workers (the old ferry_worker_jobs) would have lost them.
	want("ferry_jobs_total", 6)
	for _, name := range []string{"ferry_jobs_total", "ferry_relay_writes_total", "ferry_worker_restarts_total", "ferry_http_requests_total"} {
		if f := fams[name]; f == nil || f.GetType() != dto.MetricType_COUNTER {
			t.Errorf("%s is not a counter: %v", name, f.GetType())
		}
	}
	for _, name := range []string{"ferry_worker_rss_bytes", "ferry_worker_pss_bytes", "ferry_worker_uss_bytes"} {
		if f := fams[name]; f == nil || len(f.Metric) == 0 || f.Metric[0].Label[0].GetName() != "pid" {
			t.Errorf("%s has no sample per worker pid: %v", name, f)
		}
	}
	if f := fams["ferry_worker_spawns_total"]; f == nil || f.GetType() != dto.MetricType_COUNTER {
		t.Errorf("ferry_worker_spawns_total is not a counter: %v", f)
	}
	// The socket serves the same registry.
	if _, ok := sample(scrape(t, s.adminGet(t, "/metrics")), "ferry_jobs_total"); !ok {
		t.Error("the admin socket's /metrics lacks ferry_jobs_total")
	}
}

func TestRequestIDs(t *testing.T) {
	s := startFerry(t, opsConfig("  request_id: true\n", "", ""))
	idOf := func(header string) (sent, echoed string) {
		t.Helper()
		req, _ := http.NewRequest("GET", s.url+"/echo", nil)
		if header != "" {
			req.Header.Set("X-Request-Id", header)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		e := decode(t, readAll(t, resp))
		return strings.Join(e.Headers["X-Request-Id"], ","), resp.Header.Get("X-Request-Id")
	}
	made := regexp.MustCompile(`^[0-9a-f]{16}-[0-9a-z]+$`)
	php1, out1 := idOf("")
	php2, out2 := idOf("")
	if !made.MatchString(out1) || php1 != out1 || out1 == out2 || php2 != out2 {
		t.Errorf("generated ids: PHP saw %q and %q, responses carried %q and %q", php1, php2, out1, out2)
	}
	if php, out := idOf("trace-42:abc"); php != "trace-42:abc" || out != "trace-42:abc" {
		t.Errorf("a client's id: PHP saw %q, the response carried %q", php, out)
	}
	for _, bad := range []string{strings.Repeat("a", 129), "has space", "quote\"d", "<script>"} {
		if php, out := idOf(bad); !made.MatchString(out) || php != out {
			t.Errorf("invalid id %q: PHP saw %q, the response carried %q; want a new id for both", bad, php, out)
		}
	}
	// HTTP_X_REQUEST_ID, as a framework's $_SERVER-shaped request reads it; and a response's own X-Request-Id gives way to the echo.
	for _, sent := range []string{"", "from-client"} {
		req, _ := http.NewRequest("GET", s.url+"/server-id", nil)
		if sent != "" {
			req.Header.Set("X-Request-Id", sent)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp)
		if out := resp.Header.Values("X-Request-Id"); len(out) != 1 || body != out[0] || sent != "" && body != sent {
			t.Errorf("sent %q: HTTP_X_REQUEST_ID %q, the response carried %q", sent, body, out)
		}
	}
}

func TestAccessLogReopensOnSIGUSR1(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "access.log")
	s := startFerry(t, opsConfig("  request_id: true\n  access_log: {enabled: true, format: json, path: \""+path+"\"}\n", "", ""))
	req, _ := http.NewRequest("GET", s.url+"/echo?q=\"x\"", nil)
	req.Header.Set("X-Request-Id", "first-request")
	req.Header.Set("User-Agent", `tést "agent"`)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	line := waitLine(t, path, "first-request")
	var e struct {
		ID       string  `json:"request_id"`
		Method   string  `json:"method"`
		URI      string  `json:"uri"`
		Status   int     `json:"status"`
		Bytes    int     `json:"bytes"`
		Duration float64 `json:"duration"`
		Wait     float64 `json:"queue_wait"`
		PHP      float64 `json:"php"`
		PID      int     `json:"pid"`
		UA       string  `json:"user_agent"`
	}
	if err := json.Unmarshal([]byte(line), &e); err != nil {
		t.Fatalf("access log line is not JSON: %v\n%s", err, line)
	}
	if e.Method != "GET" || e.Status != 200 || e.Bytes == 0 || e.PID == 0 || e.PHP <= 0 || e.Duration < e.PHP || e.UA != `tést "agent"` {
		t.Errorf("access log entry: %+v", e)
	}
	// logrotate: move the file away, then SIGUSR1.
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	s.cmd.Process.Signal(syscall.SIGUSR1)
	s.logged(t, "access log reopened")
	req.Header.Set("X-Request-Id", "second-request")
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	waitLine(t, path, "second-request")
	if old, _ := os.ReadFile(path + ".1"); strings.Contains(string(old), "second-request") {
		t.Error("a line went to the rotated file after SIGUSR1")
	}
}

// waitLine waits for a line containing want in the file at path.
func waitLine(t *testing.T, path, want string) string {
	t.Helper()
	var hit string
	until(t, want+" in "+path, 10*time.Second, func() bool {
		b, _ := os.ReadFile(path)
		for _, l := range strings.Split(string(b), "\n") {
			if strings.Contains(l, want) {
				hit = l
				return true
			}
		}
		return false
	})
	return hit
}

// On SIGTERM /ready fails first, while the listener still takes requests, so
// a load balancer polling it stops sending before connections are refused.
// systemd, here a unixgram socket of the test's, hears READY and STOPPING.
func TestReadyAndSystemdDuringDrain(t *testing.T) {
	dir := t.TempDir()
	notify := filepath.Join(dir, "notify.sock")
	nc, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: notify, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	t.Setenv("NOTIFY_SOCKET", notify)
	s := startFerry(t, opsConfig("  drain_delay: 3s\n", "  health_address: 127.0.0.1:0\n", ""))
	nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	msg := func() string {
		t.Helper()
		buf := make([]byte, 512)
		n, err := nc.Read(buf)
		if err != nil {
			t.Fatalf("no sd_notify message: %v", err)
		}
		return string(buf[:n])
	}
	if m := msg(); !strings.Contains(m, "READY=1") {
		t.Fatalf("first notification %q, want READY=1", m)
	}
	health := s.tcpAdmin(t)
	for _, p := range []string{"/ready", "/health"} {
		resp, body := get(t, health+p)
		expectStatus(t, resp, body, 200)
	}
	if got := s.adminGet(t, "/ready"); got != "ready\n" {
		t.Errorf("socket /ready: %q", got)
	}

	s.cmd.Process.Signal(syscall.SIGTERM)
	if m := msg(); m != "STOPPING=1" {
		t.Errorf("notification on SIGTERM %q, want STOPPING=1", m)
	}
	until(t, "/ready to fail", 3*time.Second, func() bool {
		resp, err := client.Get(health + "/ready")
		if err != nil {
			t.Fatal(err)
		}
		return readAll(t, resp) != "" && resp.StatusCode == 503
	})
	// Still inside drain_delay: the front serves.
	resp, body := get(t, s.url+"/pid")
	expectStatus(t, resp, body, 200)
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		t.Fatal("ferry did not stop after the drain delay")
	}
}

// The worker must not inherit NOTIFY_SOCKET: systemd would hear it.
func TestNotifySocketNotInherited(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", filepath.Join(t.TempDir(), "absent.sock"))
	s := startFerry(t, appConfig(""))
	resp, body := get(t, s.url+"/env?name=NOTIFY_SOCKET")
	expectStatus(t, resp, body, 200)
	if body != "" {
		t.Errorf("the worker sees NOTIFY_SOCKET: %q", body)
	}
}

// server.watch: changing a PHP file the workers loaded at boot reloads them,
// and the next request sees the new code.
func TestWatchReloadsOnChange(t *testing.T) {
	app := t.TempDir()
	wd, _ := os.Getwd()
	os.WriteFile(filepath.Join(app, "answer.php"), []byte("<?php return 'first';"), 0o644)
	os.WriteFile(filepath.Join(app, "worker.php"), []byte(`<?php
require '`+wd+`/../../php/worker/autoload.php';
$answer = require __DIR__ . '/answer.php';
Ferry\Worker\Http\HttpWorker::create()->run(static fn ($r) => Ferry\Worker\Http\Response::text($answer));
`), 0o644)
	s := startFerry(t, `server:
  address: "%ADDR%"
  watch: ["`+app+`/**/*.php"]
admin:
  socket: "%ADMIN%"
pool:
  command: ["php", "`+app+`/worker.php"]
  num_workers: 2
`)
	if _, body := get(t, s.url+"/"); body != "first" {
		t.Fatalf("before the change: %q", body)
	}
	os.WriteFile(filepath.Join(app, "answer.php"), []byte("<?php return 'second';"), 0o644)
	until(t, "the new answer", 15*time.Second, func() bool {
		_, body := get(t, s.url+"/")
		return body == "second"
	})
	s.logged(t, "files changed: reloading the workers")
	// A file no glob names changes nothing.
	os.WriteFile(filepath.Join(app, "notes.txt"), []byte("x"), 0o644)
	if _, body := get(t, s.url+"/"); body != "second" {
		t.Fatalf("after an unrelated change: %q", body)
	}
}
