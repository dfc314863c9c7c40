package main

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// leakConfig serves one of php/worker's leak fixtures on one worker with the
// leak watch on, checking after every request (in direct mode too, where
// php/worker then serves each request whole: the C path does not stop between
// requests for the checks).
func leakConfig(fixture, extra string) string {
	cfg := appConfig("  leak_watch: true\n  leak_watch_every: 1\n  leak_watch_warmup: 3\n" + extra)
	cfg = strings.Replace(cfg, "%DIR%/testdata/app.php", "%DIR%/../../php/worker/tests/fixtures/leak/"+fixture, 1)
	return strings.Replace(cfg, "num_workers: 2", "num_workers: 1", 1)
}

func TestLeakWatchNamesTheRequest(t *testing.T) {
	s := startFerry(t, leakConfig("static-array.php", ""))
	for i := 0; i < 3; i++ {
		expectBody(t, s, "/", "ok\n")
	}
	for i := 0; i < 6; i++ {
		expectBody(t, s, "/add", "ok\n")
	}
	want := `App\\Registry::$items grows by 1 element per request`
	until(t, "the leak finding in the log", 10*time.Second, func() bool { return strings.Contains(s.logText(), want) })
	stopsInTime(t, s)
	if !strings.Contains(s.logText(), "first by GET /add") {
		t.Fatalf("the finding does not name GET /add:\n%s", s.logText())
	}
}

// stopsInTime sends SIGTERM while the test's client holds an idle keep-alive
// connection, and requires the worker to stop when asked, not when killed.
func stopsInTime(t *testing.T, s *server) {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	<-s.exited
	if strings.Contains(s.logText(), "worker ignored stop") {
		t.Fatalf("a worker did not stop when asked:\n%s", s.logText())
	}
}

// A replayed request's answer goes to no client: each client gets its own.
func TestLeakWatchReplayAnswersNoClient(t *testing.T) {
	s := startFerry(t, leakConfig("replay.php", "  leak_watch_replay: [\"/page\"]\n"))
	for i := 0; i < 3; i++ {
		expectBody(t, s, "/", "home\n")
	}
	page := "<html><body><h1>Welcome</h1><p>theme: light</p></body></html>\n"
	expectBody(t, s, "/page", page)
	for i := 0; i < 120; i++ {
		expectBody(t, s, "/", "home\n")
		expectBody(t, s, "/stats", "sets 0\n")
	}
	resp, err := client.Post(s.url+"/set", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	expectStatus(t, resp, readAll(t, resp), 200)
	for i := 0; i < 120; i++ {
		expectBody(t, s, "/", "home\n")
	}
	until(t, "the replay finding in the log", 10*time.Second, func() bool {
		return strings.Contains(s.logText(), "GET /page answers differently when replayed after other requests")
	})
	expectBody(t, s, "/stats", "sets 1\n")
	stopsInTime(t, s)
}
