package phplog

import (
	"log/slog"
	"strings"
)

// phpLabels are the error types PHP names in its messages, in the order they
// must be tried ("Recoverable fatal error" is not a "Fatal error").
var phpLabels = []struct {
	label string
	level slog.Level
	fatal bool
}{
	{"Fatal error", slog.LevelError, true},
	{"Parse error", slog.LevelError, true},
	{"Recoverable fatal error", slog.LevelError, true},
	{"Warning", slog.LevelWarn, false},
	{"Notice", slog.LevelInfo, false},
	{"Deprecated", slog.LevelInfo, false},
	{"Strict Standards", slog.LevelInfo, false},
	{"Unknown error", slog.LevelError, false},
}

// classify reads the level from PHP's error format: "PHP Warning:  msg" from
// log_errors, "Warning: msg" from display_errors; anything else is info.
func classify(t string) phpRecord {
	rest, logged := strings.CutPrefix(t, "PHP ")
	for _, k := range phpLabels {
		if m, ok := strings.CutPrefix(rest, k.label+":"); ok {
			return phpRecord{level: k.level, fatal: k.fatal, logged: logged, msg: strings.TrimSpace(m)}
		}
	}
	return phpRecord{level: slog.LevelInfo}
}

// unstamp drops the "[date] " that error_log adds when it names a file (such
// as /dev/stderr), so those lines read like the others.
func unstamp(s string) string {
	if len(s) > 0 && s[0] == '[' {
		if i := strings.Index(s, "] PHP "); i > 0 && !strings.ContainsRune(s[:i], '\n') {
			return s[i+2:]
		}
	}
	return s
}

// continues tells whether t belongs to the record before it: stack traces
// (PHP's own and Xdebug's), their "thrown in" and "Next" parts, and indented
// or blank lines.
func continues(t string, cur *phpRecord) bool {
	switch {
	case t == "", t[0] == ' ', t[0] == '\t':
		return true
	case strings.HasPrefix(t, "Stack trace:"), strings.HasPrefix(t, "PHP Stack trace:"), strings.HasPrefix(t, "PHP  "):
		return true
	case strings.HasPrefix(t, "Next ") && cur.level >= slog.LevelError:
		return true
	case t[0] == '#':
		i := 1
		for i < len(t) && t[i] >= '0' && t[i] <= '9' {
			i++
		}
		return i > 1 && i < len(t) && t[i] == ' '
	}
	return false
}
