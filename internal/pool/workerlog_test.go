package pool

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ferry-php/ferry/internal/logtest"
)

// These tests look at the worker's output through the pool: what a death
// record and a boot error quote. The parsing itself is tested in
// internal/phplog.

type (
	outRecs = logtest.Recorder
	outRec  = logtest.Record
)

func writePHP(t *testing.T, name, code string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The worker died of memory exhaustion long after a request that printed
// other things; the record must name the fatal error, once, and nothing else.
func TestOutputWorkerDiedNamesItsFatalErrorOnly(t *testing.T) {
	prepend := writePHP(t, "prepend.php", `<?php fwrite(STDERR, "debug: booting\nPHP Warning:  earlier request noise\n");`)
	h := &outRecs{}
	cmd := []string{"php", "-n", "-d", "display_errors=stderr", "-d", "log_errors=1", "-d", "memory_limit=32M", "-d", "auto_prepend_file=" + prepend, mustAbs(t, "testdata/worker.php")}
	p := newPool(t, Options{NumWorkers: 1, Command: cmd, Logger: slog.New(h)})
	must(t, p, "echo:x")
	if _, err := run(t, p, "leak:65536"); !errors.Is(err, ErrCrashed) {
		t.Fatalf("want ErrCrashed, got %v", err)
	}
	died := h.Wait(t, "worker died", func(r outRec) bool { return r.Msg == "worker died" })
	all := strings.Join(mapValues(died.Attrs), "\n")
	if strings.Contains(all, "noise") || strings.Contains(all, "booting") {
		t.Errorf("the death record quotes output of earlier requests: %+v", died.Attrs)
	}
	if n := strings.Count(all, "Allowed memory size of 33554432 bytes exhausted"); n != 1 {
		t.Errorf("the death record names the memory error %d times: %+v", n, died.Attrs)
	}
	if died.Attrs["status"] == "" {
		t.Errorf("no exit status: %+v", died.Attrs)
	}
}

// PHP printed "Hello before handshake\n" where the relay expected a frame;
// the error once read "Hello beforeHello before handshake\n".
func TestBootErrorQuotesWhatPHPPrintedExactly(t *testing.T) {
	noisy := writePHP(t, "exits.php", "<?php\necho \"debug: booting\\n\";\nfwrite(STDERR, \"about to fail\\n\");\nexit(2);\n")
	cases := []struct {
		name      string
		o         Options
		said, not string
	}{
		{"stray echo on the stdio relay", Options{Relay: "stdio", Env: []string{"STRAY_ECHO=1"}}, "\nPHP said:\nHello before handshake", "beforeHello"},
		{"output on stdout and stderr", Options{Command: []string{"php", "-n", noisy}}, "\nPHP said:\ndebug: booting\nabout to fail", "bootidebug"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.o.Command == nil {
				c.o.Command = phpCommand(t, "testdata/worker.php")
			}
			c.o.NumWorkers = 1
			c.o.AllocateTimeout = 5 * time.Second
			c.o.Logger = slog.New(&outRecs{})
			_, err := New(c.o)
			if err == nil || !strings.Contains(err.Error(), c.said) || strings.Contains(err.Error(), c.not) {
				t.Fatalf("want the error to quote %q, got:\n%v", c.said, err)
			}
		})
	}
}

// Only a script that finished normally is told it ran to its end: a crash or an
// exit(2) before the handshake is a different fault, which PHP's message names.
func TestBootErrorSaysAScriptRanToItsEndOnlyOnExitZero(t *testing.T) {
	for _, c := range []struct {
		code string
		hint bool
	}{
		{"<?php echo \"<html>page</html>\\n\";", true},
		{"<?php echo \"about to fail\\n\"; exit(2);", false},
	} {
		script := writePHP(t, "front.php", c.code)
		_, err := New(Options{NumWorkers: 1, Command: []string{"php", "-n", script}, AllocateTimeout: 5 * time.Second, Logger: slog.New(&outRecs{})})
		if err == nil {
			t.Fatalf("%s started", c.code)
		}
		if got := strings.Contains(err.Error(), script+" ran to its end without serving"); got != c.hint {
			t.Errorf("%s: hint %v, want %v:\n%v", c.code, got, c.hint, err)
		}
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

func mapValues(m map[string]string) []string {
	var vs []string
	for _, v := range m {
		vs = append(vs, v)
	}
	return vs
}
