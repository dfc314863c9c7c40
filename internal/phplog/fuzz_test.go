package phplog

import (
	"log/slog"
	"os"
	"strings"
	"testing"
)

// FuzzOutputFormats checks the framework line parser and the record
// grouping: no panic, a recognised head within the line, no record past the
// bound, whatever the bytes and however they are split into reads.
func FuzzOutputFormats(f *testing.F) {
	for _, name := range []string{"symfony54.txt", "symfony54-debug.txt", "laravel883.txt", "formats.txt"} {
		b, err := os.ReadFile("testdata/frameworks/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b), 100)
	}
	f.Add("[27-Nov-2026 10:00:00 UTC] [error] x\n2026-11-27T10:00:00Z [info] y\n[2026-11-27 10:00:00.5+0100] a.b.DEBUG: z\n", 3)
	f.Fuzz(func(t *testing.T, s string, split int) {
		if h, ok := parseHead(s); ok {
			if h.date < 0 || h.date > len(s) || h.name == "" || (h.channel != "" && !strings.HasSuffix(s[h.date:h.date+len(h.channel)], h.channel)) {
				t.Fatalf("parseHead(%q) = %+v", s, h)
			}
		}
		rec := &outRecs{}
		l := &Writer{log: slog.New(rec)}
		if split < 0 || split > len(s) {
			split = len(s) / 2
		}
		l.Write([]byte(s[:split]))
		l.Write([]byte(s[split:]))
		l.Close()
		for _, r := range rec.All() {
			if len(r.Attrs["line"]) > maxRecord+64 {
				t.Fatalf("a record of %d bytes", len(r.Attrs["line"]))
			}
		}
	})
}
