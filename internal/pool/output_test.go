package pool

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// outRecs is a slog.Handler keeping every record, flattened to text.
type outRecs struct {
	mu   sync.Mutex
	recs []outRec
}

type outRec struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

func (h *outRecs) Enabled(context.Context, slog.Level) bool { return true }
func (h *outRecs) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *outRecs) WithGroup(string) slog.Handler            { return h }
func (h *outRecs) Handle(_ context.Context, r slog.Record) error {
	rec := outRec{level: r.Level, msg: r.Message, attrs: map[string]string{}}
	r.Attrs(func(a slog.Attr) bool { rec.attrs[a.Key] = a.Value.String(); return true })
	h.mu.Lock()
	h.recs = append(h.recs, rec)
	h.mu.Unlock()
	return nil
}

func (h *outRecs) all() []outRec {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]outRec(nil), h.recs...)
}

// wait polls until some record satisfies ok.
func (h *outRecs) wait(t *testing.T, what string, ok func(outRec) bool) outRec {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, r := range h.all() {
			if ok(r) {
				return r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no record %s; got:\n%s", what, h.dump())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (h *outRecs) dump() string {
	var b strings.Builder
	for _, r := range h.all() {
		b.WriteString(r.level.String() + " " + r.msg)
		for k, v := range r.attrs {
			b.WriteString(" " + k + "=" + strings.ReplaceAll(v, "\n", `\n`))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func writePHP(t *testing.T, name, code string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A real PHP process with both log_errors (to stderr) and display_errors=stderr
// on, as a php.ini-less CLI has them: every error arrives twice.
func TestOutputPHPErrorsKeepTheirLevelAndStackTracesStayWhole(t *testing.T) {
	script := writePHP(t, "noisy.php", `<?php
fwrite(STDERR, "booting\n");
trigger_error("careful", E_USER_WARNING);
trigger_error("fyi", E_USER_NOTICE);
trigger_error("old api", E_USER_DEPRECATED);
fwrite(STDERR, json_encode(["message" => "db down", "context" => ["code" => 2002, "host" => "db1"],
    "level" => 400, "level_name" => "ERROR", "channel" => "app", "datetime" => "2024-01-01T00:00:00+00:00", "extra" => new stdClass]) . "\n");
function f() { throw new RuntimeException("boom"); }
function g() { f(); }
g();
`)
	h := &outRecs{}
	l := &lineLog{log: slog.New(h)}
	l.setPID(4242)
	cmd := exec.Command("php", "-n", "-d", "display_errors=stderr", "-d", "log_errors=1", script)
	cmd.Stderr = l
	cmd.Run()
	h.wait(t, "with the uncaught exception", func(r outRec) bool { return strings.Contains(r.attrs["line"], "Uncaught RuntimeException") })

	recs := h.all()
	var levels []string
	for _, r := range recs {
		levels = append(levels, r.level.String())
		if r.attrs["pid"] != "4242" {
			t.Errorf("record without the worker pid: %+v", r)
		}
	}
	if got, want := strings.Join(levels, " "), "INFO WARN INFO INFO ERROR ERROR"; got != want {
		t.Fatalf("levels %q, want %q (booting, warning, notice, deprecated, JSON error, fatal; each once):\n%s", got, want, h.dump())
	}
	if !strings.Contains(recs[1].attrs["line"], "careful") {
		t.Errorf("warning record: %+v", recs[1])
	}
	j := recs[4]
	if j.attrs["message"] != "db down" || j.attrs["channel"] != "app" || j.attrs["context"] != "[code=2002 host=db1]" {
		t.Errorf("Monolog fields lost: %+v", j)
	}
	fatal := recs[5].attrs["line"]
	for _, part := range []string{"PHP Fatal error:  Uncaught RuntimeException: boom", "Stack trace:", "#0 ", "#2 {main}", "  thrown in"} {
		if !strings.Contains(fatal, part) {
			t.Errorf("fatal record lacks %q:\n%s", part, fatal)
		}
	}
	if n := strings.Count(h.dump(), "Uncaught RuntimeException"); n != 1 {
		t.Errorf("the fatal error appears %d times", n)
	}
}

func TestOutputGroupsContinuationLines(t *testing.T) {
	h := &outRecs{}
	l := &lineLog{log: slog.New(h)}
	l.Write([]byte(strings.Join([]string{
		"[01-Jan-2024 00:00:00 UTC] PHP Fatal error:  Uncaught Exception: inner in /a.php:3",
		"Stack trace:",
		"#0 {main}",
		"",
		"Next RuntimeException: outer in /a.php:5",
		"Stack trace:",
		"#0 {main}",
		"  thrown in /a.php on line 5",
		"[01-Jan-2024 00:00:01 UTC] PHP Warning:  xdebug style in /b.php on line 2",
		"[01-Jan-2024 00:00:01 UTC] PHP Stack trace:",
		"[01-Jan-2024 00:00:01 UTC] PHP   1. {main}() /b.php:0",
		"array(1) {",
		"  [0]=>",
		"\tint(1)",
		"}",
		"#not a frame",
		"#12 /c.php(4): h()",
	}, "\n") + "\n"))
	l.Close()
	recs := h.all()
	if len(recs) != 5 {
		t.Fatalf("want 5 records, got:\n%s", h.dump())
	}
	want := []struct {
		level slog.Level
		lines int
	}{{slog.LevelError, 8}, {slog.LevelWarn, 3}, {slog.LevelInfo, 3}, {slog.LevelInfo, 1}, {slog.LevelInfo, 2}}
	for i, w := range want {
		if recs[i].level != w.level || strings.Count(recs[i].attrs["line"], "\n")+1 != w.lines {
			t.Errorf("record %d: %v with %q, want %v with %d lines", i, recs[i].level, recs[i].attrs["line"], w.level, w.lines)
		}
	}
}

func TestOutputDropsOnlyPHPsSecondCopy(t *testing.T) {
	h := &outRecs{}
	l := &lineLog{log: slog.New(h)}
	l.Write([]byte("PHP Warning:  loop in /a.php on line 1\nWarning: loop in /a.php on line 1\n" +
		"PHP Warning:  loop in /a.php on line 1\nPHP Warning:  loop in /a.php on line 1\n" +
		"Fatal error: Allowed memory size of 8 bytes exhausted\nPHP Fatal error:  Allowed memory size of 8 bytes exhausted\n"))
	l.Close()
	var got []string
	for _, r := range h.all() {
		got = append(got, r.attrs["line"])
	}
	want := []string{"PHP Warning:  loop in /a.php on line 1", "PHP Warning:  loop in /a.php on line 1", "PHP Warning:  loop in /a.php on line 1", "Fatal error: Allowed memory size of 8 bytes exhausted"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestOutputMonologLevels(t *testing.T) {
	h := &outRecs{}
	l := &lineLog{log: slog.New(h)}
	l.Write([]byte(`{"message":"m1","context":[],"level":500,"level_name":"CRITICAL","channel":"c","datetime":"x","extra":[]}
{"message":"m2","level":100}
{"message":"m3","level_name":"warning","context":{"a":{"b":1.5}},"extra":{"uid":"u"}}
{"not":"monolog"}
`))
	l.Close()
	recs := h.all()
	if len(recs) != 4 {
		t.Fatalf("want 4 records:\n%s", h.dump())
	}
	checks := []struct {
		level slog.Level
		attrs map[string]string
	}{
		{slog.LevelError, map[string]string{"message": "m1", "level_name": "CRITICAL", "channel": "c"}},
		{slog.LevelDebug, map[string]string{"message": "m2"}},
		{slog.LevelWarn, map[string]string{"message": "m3", "context": "[a=[b=1.5]]", "extra": "[uid=u]"}},
		{slog.LevelInfo, map[string]string{"line": `{"not":"monolog"}`}},
	}
	for i, c := range checks {
		if recs[i].level != c.level {
			t.Errorf("record %d level %v, want %v", i, recs[i].level, c.level)
		}
		for k, v := range c.attrs {
			if recs[i].attrs[k] != v {
				t.Errorf("record %d %s=%q, want %q", i, k, recs[i].attrs[k], v)
			}
		}
	}
	if _, ok := recs[0].attrs["context"]; ok {
		t.Errorf("empty context logged: %+v", recs[0])
	}
}

func TestOutputFlushesAfterAQuietPeriodAndOnClose(t *testing.T) {
	h := &outRecs{}
	l := &lineLog{log: slog.New(h)}
	l.Write([]byte("PHP Fatal error:  Uncaught Exception: x\nStack trace:\n#0 {main}\n"))
	h.wait(t, "for the pending stack trace", func(r outRec) bool { return strings.HasSuffix(r.attrs["line"], "#0 {main}") })
	l.Write([]byte("PHP Notice:  held\nno newline at exit"))
	l.Close()
	got := h.all()
	if len(got) != 3 || got[1].attrs["line"] != "PHP Notice:  held" || got[2].attrs["line"] != "no newline at exit" {
		t.Fatalf("Close must log what is held back:\n%s", h.dump())
	}
}

func TestOutputDeathQuotesOnlyRecentFatals(t *testing.T) {
	now := time.Unix(1000, 0)
	l := &lineLog{log: slog.New(&outRecs{}), now: func() time.Time { return now }}
	l.Write([]byte("PHP Fatal error:  from a child process long ago\n"))
	now = now.Add(time.Minute)
	l.Write([]byte("PHP Warning:  unrelated\n"))
	if a := l.died(); !a.Equal(slog.Attr{}) {
		t.Fatalf("an old fatal error was blamed: %v", a)
	}
	l.Write([]byte("PHP Fatal error:  printed by a child\n"))
	now = now.Add(2 * time.Second)
	l.jobDone(l.clock()) // the worker went on answering: that fatal did not kill it
	now = now.Add(2 * time.Second)
	l.Write([]byte("PHP Fatal error:  Allowed memory size of 134217728 bytes exhausted (tried to allocate 20480 bytes) in /app/a.php on line 3\n"))
	if got := l.died().Value.String(); got != "PHP Fatal error:  Allowed memory size of 134217728 bytes exhausted (tried to allocate 20480 bytes) in /app/a.php on line 3" {
		t.Fatalf("death quote %q", got)
	}
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
	died := h.wait(t, "worker died", func(r outRec) bool { return r.msg == "worker died" })
	all := strings.Join(mapValues(died.attrs), "\n")
	if strings.Contains(all, "noise") || strings.Contains(all, "booting") {
		t.Errorf("the death record quotes output of earlier requests: %+v", died.attrs)
	}
	if n := strings.Count(all, "Allowed memory size of 33554432 bytes exhausted"); n != 1 {
		t.Errorf("the death record names the memory error %d times: %+v", n, died.attrs)
	}
	if died.attrs["status"] == "" {
		t.Errorf("no exit status: %+v", died.attrs)
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
