package phplog

import (
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ferry-php/ferry/internal/logtest"
)

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
	l := &Writer{log: slog.New(h)}
	l.SetPID(4242)
	cmd := exec.Command("php", "-n", "-d", "display_errors=stderr", "-d", "log_errors=1", script)
	cmd.Stderr = l
	cmd.Run()
	h.Wait(t, "with the uncaught exception", func(r outRec) bool { return strings.Contains(r.Attrs["line"], "Uncaught RuntimeException") })

	recs := h.All()
	var levels []string
	for _, r := range recs {
		levels = append(levels, r.Level.String())
		if r.Attrs["pid"] != "4242" {
			t.Errorf("record without the worker pid: %+v", r)
		}
	}
	if got, want := strings.Join(levels, " "), "INFO WARN INFO INFO ERROR ERROR"; got != want {
		t.Fatalf("levels %q, want %q (booting, warning, notice, deprecated, JSON error, fatal; each once):\n%s", got, want, h.Dump())
	}
	if !strings.Contains(recs[1].Attrs["line"], "careful") {
		t.Errorf("warning record: %+v", recs[1])
	}
	j := recs[4]
	if j.Attrs["message"] != "db down" || j.Attrs["channel"] != "app" || j.Attrs["context"] != "[code=2002 host=db1]" {
		t.Errorf("Monolog fields lost: %+v", j)
	}
	fatal := recs[5].Attrs["line"]
	for _, part := range []string{"PHP Fatal error:  Uncaught RuntimeException: boom", "Stack trace:", "#0 ", "#2 {main}", "  thrown in"} {
		if !strings.Contains(fatal, part) {
			t.Errorf("fatal record lacks %q:\n%s", part, fatal)
		}
	}
	if n := strings.Count(h.Dump(), "Uncaught RuntimeException"); n != 1 {
		t.Errorf("the fatal error appears %d times", n)
	}
}

func TestOutputGroupsContinuationLines(t *testing.T) {
	h := &outRecs{}
	l := &Writer{log: slog.New(h)}
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
	recs := h.All()
	if len(recs) != 5 {
		t.Fatalf("want 5 records, got:\n%s", h.Dump())
	}
	want := []struct {
		level slog.Level
		lines int
	}{{slog.LevelError, 8}, {slog.LevelWarn, 3}, {slog.LevelInfo, 3}, {slog.LevelInfo, 1}, {slog.LevelInfo, 2}}
	for i, w := range want {
		if recs[i].Level != w.level || strings.Count(recs[i].Attrs["line"], "\n")+1 != w.lines {
			t.Errorf("record %d: %v with %q, want %v with %d lines", i, recs[i].Level, recs[i].Attrs["line"], w.level, w.lines)
		}
	}
}

func TestOutputDropsOnlyPHPsSecondCopy(t *testing.T) {
	h := &outRecs{}
	l := &Writer{log: slog.New(h)}
	l.Write([]byte("PHP Warning:  loop in /a.php on line 1\nWarning: loop in /a.php on line 1\n" +
		"PHP Warning:  loop in /a.php on line 1\nPHP Warning:  loop in /a.php on line 1\n" +
		"Fatal error: Allowed memory size of 8 bytes exhausted\nPHP Fatal error:  Allowed memory size of 8 bytes exhausted\n"))
	l.Close()
	var got []string
	for _, r := range h.All() {
		got = append(got, r.Attrs["line"])
	}
	want := []string{"PHP Warning:  loop in /a.php on line 1", "PHP Warning:  loop in /a.php on line 1", "PHP Warning:  loop in /a.php on line 1", "Fatal error: Allowed memory size of 8 bytes exhausted"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}

func TestOutputMonologLevels(t *testing.T) {
	h := &outRecs{}
	l := &Writer{log: slog.New(h)}
	l.Write([]byte(`{"message":"m1","context":[],"level":500,"level_name":"CRITICAL","channel":"c","datetime":"x","extra":[]}
{"message":"m2","level":100}
{"message":"m3","level_name":"warning","context":{"a":{"b":1.5}},"extra":{"uid":"u"}}
{"not":"monolog"}
`))
	l.Close()
	recs := h.All()
	if len(recs) != 4 {
		t.Fatalf("want 4 records:\n%s", h.Dump())
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
		if recs[i].Level != c.level {
			t.Errorf("record %d level %v, want %v", i, recs[i].Level, c.level)
		}
		for k, v := range c.attrs {
			if recs[i].Attrs[k] != v {
				t.Errorf("record %d %s=%q, want %q", i, k, recs[i].Attrs[k], v)
			}
		}
	}
	if _, ok := recs[0].Attrs["context"]; ok {
		t.Errorf("empty context logged: %+v", recs[0])
	}
}

func TestOutputFlushesAfterAQuietPeriodAndOnClose(t *testing.T) {
	h := &outRecs{}
	l := &Writer{log: slog.New(h)}
	l.Write([]byte("PHP Fatal error:  Uncaught Exception: x\nStack trace:\n#0 {main}\n"))
	h.Wait(t, "for the pending stack trace", func(r outRec) bool { return strings.HasSuffix(r.Attrs["line"], "#0 {main}") })
	l.Write([]byte("PHP Notice:  held\nno newline at exit"))
	l.Close()
	got := h.All()
	if len(got) != 3 || got[1].Attrs["line"] != "PHP Notice:  held" || got[2].Attrs["line"] != "no newline at exit" {
		t.Fatalf("Close must log what is held back:\n%s", h.Dump())
	}
}

func TestOutputDeathQuotesOnlyRecentFatals(t *testing.T) {
	now := time.Unix(1000, 0)
	l := &Writer{log: slog.New(&outRecs{}), now: func() time.Time { return now }}
	l.Write([]byte("PHP Fatal error:  from a child process long ago\n"))
	now = now.Add(time.Minute)
	l.Write([]byte("PHP Warning:  unrelated\n"))
	if a := l.Died(); !a.Equal(slog.Attr{}) {
		t.Fatalf("an old fatal error was blamed: %v", a)
	}
	l.Write([]byte("PHP Fatal error:  printed by a child\n"))
	now = now.Add(2 * time.Second)
	l.JobDone(l.clock()) // the worker went on answering: that fatal did not kill it
	now = now.Add(2 * time.Second)
	l.Write([]byte("PHP Fatal error:  Allowed memory size of 134217728 bytes exhausted (tried to allocate 20480 bytes) in /app/a.php on line 3\n"))
	if got := l.Died().Value.String(); got != "PHP Fatal error:  Allowed memory size of 134217728 bytes exhausted (tried to allocate 20480 bytes) in /app/a.php on line 3" {
		t.Fatalf("death quote %q", got)
	}
}
