package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var ferryBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ferry-e2e")
	if err != nil {
		panic(err)
	}
	ferryBin = filepath.Join(dir, "ferry")
	if out, err := exec.Command("go", "build", "-o", ferryBin, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	if directMode {
		// The matrix's second mode (Makefile, test-direct): the workers need ext/ferry.
		out, err := exec.Command("../../ext/ferry/build.sh").Output()
		if err != nil {
			panic("ext/ferry/build.sh: " + err.Error() + "\n" + string(out))
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		os.Setenv("FERRY_PHP_EXTENSION", lines[len(lines)-1])
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// directMode runs the tests in server.mode: direct (FERRY_E2E_MODE=direct): every test of
// HTTP/1.1 behaviour that applies to both modes is in the Makefile's test-direct list, and
// its configuration comes from appConfig, which then asks for direct mode.
var directMode = os.Getenv("FERRY_E2E_MODE") == "direct"

// frontOnly skips, in the direct-mode run, a test or subtest of what front mode alone does
// (docs/direct.md says what direct mode leaves out).
func frontOnly(t testing.TB, why string) {
	t.Helper()
	if directMode {
		t.Skip("front mode only: " + why)
	}
}

// inMode asks for direct mode in the direct-mode run, in every configuration
// that does not name its mode itself: whichever helper wrote it (appConfig,
// streamConfig, a test's own), a test in the matrix runs in the mode the run is
// for.
func inMode(yaml string) string {
	if !directMode || strings.Contains(yaml, "\n  mode:") {
		return yaml
	}
	if strings.HasPrefix(yaml, "server:\n") {
		return "server:\n  mode: direct\n" + yaml[len("server:\n"):]
	}
	if i := strings.Index(yaml, "\nserver:\n"); i >= 0 {
		return yaml[:i] + "\nserver:\n  mode: direct\n" + yaml[i+len("\nserver:\n"):]
	}
	return "server:\n  mode: direct\n" + yaml
}

// server is a real `ferry serve` process on a free port.
type server struct {
	url, admin, cfg string
	cmd             *exec.Cmd
	exited          chan struct{} // closed once the process has been waited for
	mu              sync.Mutex
	log             bytes.Buffer
}

// anyPort lets ferry pick a free port itself; startFerry learns which one
// from its "Ferry is serving on" line, so no other process can take it between
// a probe and the server's listen.
const anyPort = "127.0.0.1:0"

// startFerry writes yaml (with %ADDR%, %ADMIN%, %DIR% filled in) and waits for
// the server to accept requests.
func startFerry(t testing.TB, yaml string) *server {
	t.Helper()
	dir := t.TempDir()
	wd, _ := os.Getwd()
	addr := anyPort
	s := &server{admin: filepath.Join(dir, "admin.sock"), cfg: filepath.Join(dir, "ferry.yaml")}
	yaml = strings.NewReplacer("%ADDR%", addr, "%ADMIN%", s.admin, "%DIR%", wd).Replace(yaml)
	yaml = inMode(yaml)
	if err := os.WriteFile(s.cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	s.cmd = exec.Command(ferryBin, "serve", "-c", s.cfg)
	run(t, s)
	return s
}

// run starts s.cmd, gathers its log, stops it with SIGTERM when the test ends,
// and waits until it serves.
func run(t testing.TB, s *server) {
	t.Helper()
	s.exited = make(chan struct{})
	ready := make(chan struct{})
	once := sync.Once{}
	// exec copies stderr on a goroutine of its own, and Wait returns once the
	// copy has reached EOF: the last lines ferry wrote before exiting are in
	// the log when exited closes. (With StderrPipe, Wait may close the pipe
	// before they are read.) WaitDelay bounds the wait if a child kept it.
	s.cmd.Stderr = &lineWriter{line: func(line string) {
		s.mu.Lock()
		s.log.WriteString(line + "\n")
		s.mu.Unlock()
		if rest, ok := strings.CutPrefix(line, "Ferry is serving on "); ok {
			once.Do(func() {
				s.url, _, _ = strings.Cut(rest, " ")
				close(ready)
			})
		}
	}}
	s.cmd.WaitDelay = 5 * time.Second
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		s.cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(15 * time.Second):
			s.cmd.Process.Kill()
			t.Errorf("ferry did not stop within 15s after SIGTERM")
		}
		if t.Failed() {
			t.Logf("ferry log:\n%s", s.logText())
		}
	})
	select {
	case <-ready:
	case <-s.exited:
		t.Fatalf("ferry exited:\n%s", s.logText())
	case <-time.After(20 * time.Second):
		t.Fatalf("ferry did not start:\n%s", s.logText())
	}
}

// lineWriter hands each complete line written to it to line.
type lineWriter struct {
	part []byte
	line func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.part = append(w.part, p...)
	for {
		i := bytes.IndexByte(w.part, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.line(string(w.part[:i]))
		w.part = w.part[i+1:]
	}
}

func (s *server) logText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.log.String()
}

var client = &http.Client{Timeout: 30 * time.Second}

func get(t testing.TB, url string) (*http.Response, string) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	return resp, readAll(t, resp)
}

func readAll(t testing.TB, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func expectStatus(t testing.TB, resp *http.Response, body string, want int) {
	t.Helper()
	if resp.StatusCode != want {
		t.Fatalf("status %d, want %d; body: %s", resp.StatusCode, want, body)
	}
}

func appConfig(extra string) string {
	mode := ""
	if directMode {
		mode = "\n  mode: direct"
	}
	return fmt.Sprintf(`server:
  address: "%%ADDR%%"%s
  max_body_size: 1MiB
admin:
  socket: "%%ADMIN%%"
log:
  level: info
pool:
  command: ["php", "%%DIR%%/testdata/app.php"]
  num_workers: 2
%s`, mode, extra)
}
