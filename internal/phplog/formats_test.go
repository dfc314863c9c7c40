package phplog

import (
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ferry-php/ferry/internal/lograte"
)

type wantRec struct {
	level  slog.Level
	prefix string // the line starts so
	has    []string
	attrs  map[string]string
}

// feed writes the capture to a Writer either at once, as one burst, or one
// line per write, as a slow reader would see it; both must give the same
// records.
func feed(t *testing.T, data string, perLine bool) []outRec {
	t.Helper()
	h := &outRecs{}
	l := &Writer{log: slog.New(h)}
	l.SetPID(7)
	if perLine {
		for _, s := range strings.SplitAfter(data, "\n") {
			l.Write([]byte(s))
		}
	} else {
		l.Write([]byte(data))
	}
	l.Close()
	return h.All()
}

func checkRecs(t *testing.T, recs []outRec, want []wantRec) {
	t.Helper()
	var dump strings.Builder
	for _, r := range recs {
		fmt.Fprintf(&dump, "%v %q %v\n", r.Level, r.Attrs["line"], r.Attrs)
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d:\n%s", len(recs), len(want), dump.String())
	}
	for i, w := range want {
		r := recs[i]
		if r.Level != w.level || r.Msg != "worker output" || r.Attrs["pid"] != "7" || !strings.HasPrefix(r.Attrs["line"], w.prefix) {
			t.Errorf("record %d: %v %q, want %v starting %q", i, r.Level, r.Attrs["line"], w.level, w.prefix)
		}
		for _, s := range w.has {
			if !strings.Contains(r.Attrs["line"], s) {
				t.Errorf("record %d lacks %q: %q", i, s, r.Attrs["line"])
			}
		}
		for k, v := range w.attrs {
			if r.Attrs[k] != v {
				t.Errorf("record %d: %s=%q, want %q", i, k, r.Attrs[k], v)
			}
		}
	}
}

func capture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/frameworks/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// What the php/symfony test app's worker wrote for /fail (an uncaught
// exception: Symfony's Logger says "[critical]") and /fatal (memory exhausted:
// PHP's error twice, Symfony's "[critical]", then its HTML error page).
func TestOutputSymfony54Records(t *testing.T) {
	crit := map[string]string{"level_name": "CRITICAL"}
	want := []wantRec{
		{slog.LevelError, `[critical] Uncaught PHP Exception RuntimeException: "controller failed on purpose"`, nil, crit},
		{slog.LevelError, "PHP Fatal error:  Allowed memory size of 67108864 bytes exhausted", nil, nil},
		{slog.LevelError, `[critical] Uncaught PHP Exception Symfony\Component\ErrorHandler\Error\OutOfMemoryError`, nil, crit},
		{slog.LevelError, "<!DOCTYPE html>\n<html", []string{"Oops! An Error Occurred", "</body>\n</html>"}, nil},
	}
	for _, perLine := range []bool{false, true} {
		checkRecs(t, feed(t, capture(t, "symfony54.txt"), perLine), want)
	}
}

// What the php/laravel test app's worker wrote for /boom (Monolog's line with
// the trace on lines of its own, as Laravel configures it) and for a route
// that exhausts memory (PHP's error, Laravel's report, its 9 KiB error page).
func TestOutputLaravel883Records(t *testing.T) {
	prod := map[string]string{"channel": "production"}
	want := []wantRec{
		{slog.LevelError, "production.ERROR: boom from the test app {\"exception\":\"[object] (RuntimeException(code: 0)", []string{"\n[stacktrace]\n#0 ", "\n#38 {main}\n\"}"}, prod},
		{slog.LevelError, "PHP Fatal error:  Allowed memory size", nil, nil},
		{slog.LevelError, "production.ERROR: Allowed memory size", []string{"FatalError(code: 0)", "[stacktrace]\n#0 {main}\n\"}"}, prod},
		{slog.LevelError, "<!DOCTYPE html>\n<html", []string{"<title>Server Error</title>", "more bytes cut]"}, nil},
	}
	for _, perLine := range []bool{false, true} {
		recs := feed(t, capture(t, "laravel883.txt"), perLine)
		checkRecs(t, recs, want)
		if len(recs) == 4 {
			page := recs[3].Attrs["line"]
			body, note, _ := strings.Cut(page, "\n[")
			var cut int
			fmt.Sscanf(note, "%d more bytes cut]", &cut)
			if len(body) > 4<<10 || cut == 0 || len(body)+cut < 6000 {
				t.Errorf("page kept %d bytes and says %d were cut", len(body), cut)
			}
		}
	}
}

// Symfony's Logger writing to a stream itself (an RFC 3339 date first) and
// Monolog with its default LineFormatter, from capture.php.
func TestOutputFrameworkLineFormats(t *testing.T) {
	checkRecs(t, feed(t, capture(t, "formats.txt"), false), []wantRec{
		{slog.LevelError, `[critical] Uncaught PHP Exception RuntimeException: "boom"`, nil, map[string]string{"level_name": "CRITICAL"}},
		{slog.LevelWarn, "[warning] User Deprecated: old api", nil, nil},
		{slog.LevelDebug, `[debug] matched route "home"`, nil, nil},
		{slog.LevelInfo, `app.NOTICE: user logged in {"id":7} []`, nil, map[string]string{"channel": "app", "level_name": "NOTICE"}},
		{slog.LevelError, "app.ALERT: disk full [] []", nil, map[string]string{"level_name": "ALERT"}},
		{slog.LevelError, "app.CRITICAL: payment failed", []string{"[previous exception]"}, map[string]string{"level_name": "CRITICAL"}},
	})
}

// Only what really has a framework's format gets its level; the rest stays
// as it was, one INFO record a line, however it arrives.
func TestOutputLookalikesStayInfo(t *testing.T) {
	lines := []string{
		"[info]no space", "[Critical] capitalised", "[fatal] not a PSR-3 level", "an [error] inside",
		"[2026-11-27 10:00:00] app.FATAL: not Monolog's", "[2026-11-27 10:00:00] ERROR: no channel",
		"[2026-11-27] app.ERROR: no time", "2026-11-27 10:00:00 [error] not RFC 3339", "[error]",
		"<htmlx>", "<!-- <html> -->",
	}
	want := make([]wantRec, len(lines))
	for i, s := range lines {
		want[i] = wantRec{level: slog.LevelInfo, prefix: s}
	}
	for _, perLine := range []bool{false, true} {
		recs := feed(t, strings.Join(lines, "\n")+"\n", perLine)
		checkRecs(t, recs, want)
		for _, r := range recs {
			if r.Attrs["line"] != strings.TrimSpace(r.Attrs["line"]) || strings.Contains(r.Attrs["line"], "\n") {
				t.Errorf("lookalike lines joined: %q", r.Attrs["line"])
			}
		}
	}
}

// A page is one record from its first line to </html>, even when its lines
// arrive in several reads, with the whole-line comments just around it; what
// follows is not part of it, and a lone comment does not swallow the lines
// after it. A page with no error before it keeps INFO.
func TestOutputHTMLPageIsOneRecord(t *testing.T) {
	h := &outRecs{}
	l := &Writer{log: slog.New(h)}
	l.SetPID(7)
	l.Write([]byte("<!-- Error: x -->\n<!DOCTYPE html>\n<html>\n<body>\n[error] quoted in the page\n"))
	l.Write([]byte("#0 {main}\n</body>\n</html>\n"))
	l.Write([]byte("<!-- Error: x -->\n"))
	l.Write([]byte("after the page\n<!-- lone comment -->\nplain\n"))
	l.Close()
	checkRecs(t, h.All(), []wantRec{
		{slog.LevelInfo, "<!-- Error: x -->\n<!DOCTYPE html>\n<html>\n<body>\n[error] quoted in the page\n#0 {main}\n</body>\n</html>\n<!-- Error: x -->", nil, nil},
		{slog.LevelInfo, "after the page", nil, nil},
		{slog.LevelInfo, "<!-- lone comment -->", nil, nil},
		{slog.LevelInfo, "plain", nil, nil},
	})
}

// Symfony's debug error page (APP_DEBUG=1): 50 KiB between two comments
// naming the error, after its "[info]" lines and the fatal error.
func TestOutputSymfony54DebugPage(t *testing.T) {
	want := []wantRec{
		{slog.LevelInfo, `[info] Matched route "home".`, nil, nil},
		{slog.LevelInfo, `[info] Matched route "fatal".`, nil, nil},
		{slog.LevelError, "PHP Fatal error:  Allowed memory size", nil, nil},
		{slog.LevelError, `[critical] Uncaught PHP Exception Symfony\Component\ErrorHandler\Error\OutOfMemoryError`, nil, map[string]string{"level_name": "CRITICAL"}},
		{slog.LevelError, "<!-- Error: Allowed memory size", []string{"\n<!DOCTYPE html>\n", "more bytes cut]"}, nil},
	}
	for _, perLine := range []bool{false, true} {
		checkRecs(t, feed(t, capture(t, "symfony54-debug.txt"), perLine), want)
	}
}

// A page that never ends is still logged, in records of bounded size, one
// per MiB.
func TestOutputEndlessPageIsBounded(t *testing.T) {
	h := &outRecs{}
	l := &Writer{log: slog.New(h)}
	l.Write([]byte("<html>\n"))
	row := strings.Repeat("<p>filler</p>", 8) + "\n"
	for range 29000 { // 2.9 MiB
		l.Write([]byte(row))
	}
	l.Close()
	recs := h.All()
	if len(recs) != 3 {
		t.Fatalf("%d records for 2.9 MiB of page, want 3", len(recs))
	}
	for _, r := range recs {
		if len(r.Attrs["line"]) > 4<<10+64 {
			t.Fatalf("a record of %d bytes", len(r.Attrs["line"]))
		}
	}
}

// lograte still limits these records: a failing endpoint's page and its
// Monolog line, once per request, are logged a few times, then counted
// (Monolog's date is not part of the line, so they are one kind).
func TestOutputFrameworkRecordsAreRateLimited(t *testing.T) {
	h := &outRecs{}
	l := &Writer{log: slog.New(lograte.NewWithOptions(h, lograte.Options{Window: time.Minute}))}
	l.SetPID(7)
	page := capture(t, "symfony54.txt")
	for i := range 20 {
		l.Write(fmt.Appendf(nil, "[2026-11-27T10:00:%02d.%06d+00:00] app.ERROR: db down [] []\n", i, i))
		l.Write([]byte(page[strings.Index(page, "<!DOCTYPE"):]))
	}
	l.Close()
	pages, lines := 0, 0
	for _, r := range h.All() {
		switch {
		case strings.HasPrefix(r.Attrs["line"], "<!DOCTYPE"):
			pages++
		case strings.HasPrefix(r.Attrs["line"], "app.ERROR: db down"):
			lines++
		}
	}
	if pages != 5 || lines != 5 {
		t.Fatalf("%d pages and %d Monolog records passed of 20 each, want 5:\n%s", pages, lines, h.Dump())
	}
}
