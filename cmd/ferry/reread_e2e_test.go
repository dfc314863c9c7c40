package main

import (
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// edit replaces old by new in the config file, as an operator's editor does.
func edit(t *testing.T, cfg, old, new string) {
	t.Helper()
	b := mustRead(t, cfg)
	if !strings.Contains(b, old) {
		t.Fatalf("%q not in %s", old, b)
	}
	if err := os.WriteFile(cfg, []byte(strings.Replace(b, old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// settled waits until n workers serve, none of them in old, and returns them.
func (s *server) settled(t *testing.T, n int, old map[int]bool) map[int]bool {
	t.Helper()
	got := map[int]bool{}
	until(t, "the new generation alone", 20*time.Second, func() bool {
		ws := s.workers(t)
		clear(got)
		for _, w := range ws {
			if old[w.PID] || (w.State != "ready" && w.State != "working") {
				return false
			}
			got[w.PID] = true
		}
		return len(ws) == n
	})
	return got
}

// `ferry reload` reads ferry.yaml again, as nginx and caddy do, and starts
// the new workers with what it says. Before, it replaced the workers with
// copies of the old ones: num_workers 1 -> 2 still said "reloaded 1 workers".
func TestReloadRereadsTheConfig(t *testing.T) {
	cfg := appDir(t, "")
	s := serveFrom(t, cfg, t.TempDir())
	old := s.settled(t, 1, nil)

	edit(t, cfg, "  num_workers: 1\n", "  num_workers: 2\n  env: {RELOADED: \"yes\"}\n  max_jobs: 1000\n")
	out, err := ferryCmd(t, t.TempDir(), "reload", "-c", cfg)
	if err != nil || !strings.Contains(out, "reloaded 2 workers") {
		t.Fatalf("ferry reload: %v\n%s", err, out)
	}
	s.settled(t, 2, old)
	if _, body := get(t, s.url+"/env?name=RELOADED"); body != "yes" {
		t.Fatalf("pool.env of the new workers: %q", body)
	}
	if strings.Contains(s.logText(), "needs a restart") {
		t.Fatalf("a pool change was called a restart:\n%s", s.logText())
	}
}

// An invalid file changes nothing: the reload says why and fails, and the
// old workers go on serving. Before, the file was never read, so a reload
// "succeeded" with a config that the next start would refuse.
func TestReloadRefusesAnInvalidConfig(t *testing.T) {
	cfg := appDir(t, "")
	s := serveFrom(t, cfg, t.TempDir())
	old := s.settled(t, 1, nil)
	edit(t, cfg, "  num_workers: 1\n", "  num_workers: -1\n")
	const why = "pool.num_workers: must be >= 0, got -1"

	// The server's own check, whatever the client thinks of the file.
	if code, body := s.adminPost(t, "/reload"); code != http.StatusInternalServerError || !strings.Contains(body, why) {
		t.Fatalf("POST /reload: %d %s", code, body)
	}
	out, err := ferryCmd(t, t.TempDir(), "reload", "-c", cfg)
	if err == nil || !strings.Contains(out, why) {
		t.Fatalf("ferry reload: %v\n%s", err, out)
	}
	s.cmd.Process.Signal(syscall.SIGHUP)
	until(t, "the SIGHUP's refusal in the log", 10*time.Second, func() bool {
		return strings.Count(s.logText(), "reload refused") == 2
	})
	if got := s.settled(t, 1, nil); !mapsEqual(got, old) {
		t.Fatalf("workers %v after refused reloads, want the old %v", got, old)
	}
	if resp, _ := get(t, s.url+"/pid"); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

// A key that only a restart can change is named, and the running value
// stays: the server still answers on its old address.
func TestReloadNamesKeysThatNeedARestart(t *testing.T) {
	cfg := appDir(t, "")
	s := serveFrom(t, cfg, t.TempDir())
	old := s.settled(t, 1, nil)
	edit(t, cfg, `address: "`+anyPort+`"`, `address: "127.0.0.1:1"`)
	edit(t, cfg, "  num_workers: 1\n", "  num_workers: 2\n")
	c := newCmd(t.TempDir(), "reload", "-c", cfg)
	var stderr strings.Builder
	c.Stderr = &stderr
	out, err := c.Output()
	if err != nil || !strings.Contains(string(out), "reloaded 2 workers") ||
		!strings.Contains(stderr.String(), "server.address changed in the config file and needs a restart") {
		t.Fatalf("ferry reload: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	if !strings.Contains(s.logText(), "key=server.address") {
		t.Fatalf("no warning naming server.address in the log:\n%s", s.logText())
	}
	s.settled(t, 2, old)
	if resp, _ := get(t, s.url+"/pid"); resp.StatusCode != 200 {
		t.Fatalf("old address: status %d", resp.StatusCode)
	}
}

func mapsEqual(a, b map[int]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}
