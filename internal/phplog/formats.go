package phplog

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// logHead is what the first line of a framework's log record says: its level,
// the channel Monolog names, and how many leading bytes are the date the
// framework printed (dropped: the record has its own time, and without it two
// identical errors are one kind for the rate limiter).
type logHead struct {
	level   slog.Level
	name    string // upper-case level name, kept when slog has no exact match
	exact   bool
	channel string
	date    int
}

// frameworkLevels maps PSR-3's (and Monolog's) eight level names onto slog's;
// NOTICE and the levels above ERROR have no slog match, so the record keeps
// their name beside the nearest level.
var frameworkLevels = map[string]struct {
	level slog.Level
	exact bool
}{
	"DEBUG": {slog.LevelDebug, true}, "INFO": {slog.LevelInfo, true}, "NOTICE": {slog.LevelInfo, false},
	"WARNING": {slog.LevelWarn, true}, "ERROR": {slog.LevelError, true}, "CRITICAL": {slog.LevelError, false},
	"ALERT": {slog.LevelError, false}, "EMERGENCY": {slog.LevelError, false},
}

// parseHead recognises the two line formats PHP frameworks write to stderr:
// Monolog's LineFormatter, "[2026-11-27T10:00:00.000000+00:00] app.ERROR: msg
// {context} {extra}" (Laravel prints "[2026-11-27 10:00:00] production.ERROR:"),
// and Symfony's HttpKernel Logger, "[critical] msg", preceded by an RFC 3339
// date when it writes to a stream itself. PHP's own "[27-Nov-2026 10:00:00 UTC] "
// stamp, which error_log() adds when it writes to a file such as /dev/stderr,
// may come first. Anything else is not a framework's record.
func parseHead(s string) (logHead, bool) {
	skip := phpStamp(s)
	t := s[skip:]
	if len(t) < 4 {
		return logHead{}, false
	}
	if t[0] == '[' {
		if end := strings.IndexByte(t, ']'); end > 0 && isDateTime(t[1:end], true) && strings.HasPrefix(t[end+1:], " ") {
			if h, ok := monologHead(t[end+2:]); ok {
				h.date = skip + end + 2
				return h, true
			}
			return logHead{}, false
		}
		if h, ok := symfonyHead(t); ok {
			h.date = skip
			return h, true
		}
		return logHead{}, false
	}
	if sp := strings.IndexByte(t, ' '); sp > 0 && isDateTime(t[:sp], false) {
		if h, ok := symfonyHead(t[sp+1:]); ok {
			h.date = skip + sp + 1
			return h, true
		}
	}
	return logHead{}, false
}

// monologHead reads "channel.LEVEL: " (the message may be empty).
func monologHead(t string) (logHead, bool) {
	colon := strings.IndexByte(t, ':')
	if colon < 0 || colon+1 < len(t) && t[colon+1] != ' ' {
		return logHead{}, false
	}
	dot := strings.LastIndexByte(t[:colon], '.')
	if dot <= 0 || strings.ContainsAny(t[:dot], " \t[]") {
		return logHead{}, false
	}
	name := t[dot+1 : colon]
	lv, ok := frameworkLevels[name]
	if !ok {
		return logHead{}, false
	}
	return logHead{level: lv.level, exact: lv.exact, name: name, channel: t[:dot]}, true
}

// symfonyHead reads "[level] " with one of PSR-3's lower-case names.
func symfonyHead(t string) (logHead, bool) {
	end := strings.IndexByte(t, ']')
	if end < 2 || t[0] != '[' || !strings.HasPrefix(t[end+1:], " ") {
		return logHead{}, false
	}
	name := t[1:end]
	if strings.ToLower(name) != name {
		return logHead{}, false
	}
	lv, ok := frameworkLevels[strings.ToUpper(name)]
	if !ok {
		return logHead{}, false
	}
	return logHead{level: lv.level, exact: lv.exact, name: strings.ToUpper(name)}, true
}

// isDateTime accepts "YYYY-MM-DD", then "T" (or, where Monolog's date format
// allows it, a space), "HH:MM:SS", optional fractional seconds and an optional
// zone: "Z", "+HH:MM" or "+HHMM".
func isDateTime(s string, spaceOK bool) bool {
	if len(s) < 19 || !digits(s, 0, 4) || s[4] != '-' || !digits(s, 5, 2) || s[7] != '-' || !digits(s, 8, 2) ||
		!(s[10] == 'T' || spaceOK && s[10] == ' ') || !digits(s, 11, 2) || s[13] != ':' || !digits(s, 14, 2) ||
		s[16] != ':' || !digits(s, 17, 2) {
		return false
	}
	r := s[19:]
	if len(r) > 1 && r[0] == '.' {
		i := 1
		for i < len(r) && r[i] >= '0' && r[i] <= '9' {
			i++
		}
		if i == 1 {
			return false
		}
		r = r[i:]
	}
	switch {
	case r == "", r == "Z":
		return true
	case r[0] != '+' && r[0] != '-':
		return false
	case len(r) == 6:
		return digits(r, 1, 2) && r[3] == ':' && digits(r, 4, 2)
	case len(r) == 5:
		return digits(r, 1, 4)
	}
	return false
}

// phpStamp is the length of a leading "[27-Nov-2026 10:00:00 UTC] ", or 0.
func phpStamp(s string) int {
	if len(s) < 23 || s[0] != '[' || !digits(s, 1, 2) || s[3] != '-' || s[7] != '-' || !digits(s, 8, 4) ||
		s[12] != ' ' || !digits(s, 13, 2) || s[15] != ':' || !digits(s, 16, 2) || s[18] != ':' || !digits(s, 19, 2) || s[21] != ' ' {
		return 0
	}
	end := strings.Index(s[22:], "] ")
	if end <= 0 || strings.ContainsAny(s[22:22+end], " []") {
		return 0
	}
	return 22 + end + 2
}

func digits(s string, at, n int) bool {
	if at+n > len(s) {
		return false
	}
	for i := at; i < at+n; i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// logContinues tells whether t, which did not arrive in the same burst as the
// record, still belongs to a framework's record: Monolog with inline line
// breaks (Laravel's setting) prints an exception's "[stacktrace]" and
// "[previous exception]" on lines of their own, and the JSON context's closing
// quote and brace after the trace.
func logContinues(t string) bool {
	return strings.HasPrefix(t, "[stacktrace]") || strings.HasPrefix(t, "[previous exception] ") || strings.HasPrefix(t, `"}`)
}

// startsRecord tells whether t opens a record of its own, so that it never
// joins the record before it even within one burst.
func startsRecord(t string) bool {
	if t == "" {
		return false
	}
	if _, ok := parseHead(t); ok {
		return true
	}
	if t[0] == '{' || isHTMLStart(t) {
		return true
	}
	rest, _ := strings.CutPrefix(unstamp(t), "PHP ")
	for _, k := range phpLabels {
		if strings.HasPrefix(rest, k.label+":") {
			return true
		}
	}
	return false
}

// isHTMLStart tells whether a line opens an HTML page: what a framework's
// error handler prints on the CLI's stdout when a fatal error ends a request.
func isHTMLStart(t string) bool { return isDocStart(t) || isHTMLComment(t) }

// isHTMLComment tells whether a line is one whole HTML comment.
func isHTMLComment(t string) bool {
	t = strings.TrimSpace(t)
	return len(t) >= 7 && strings.HasPrefix(t, "<!--") && strings.HasSuffix(t, "-->")
}

func isDocStart(t string) bool {
	t = strings.TrimLeft(t, " \t")
	for _, p := range []string{"<!doctype html", "<html"} {
		if len(t) >= len(p) && strings.EqualFold(t[:len(p)], p) {
			return len(t) == len(p) || t[len(p)] == '>' || t[len(p)] == ' '
		}
	}
	return false
}

// isHTMLEnd tells whether a line closes the document.
func isHTMLEnd(t string) bool {
	for i := strings.IndexByte(t, '<'); i >= 0 && i+7 <= len(t); {
		if strings.EqualFold(t[i:i+7], "</html>") {
			return true
		}
		j := strings.IndexByte(t[i+1:], '<')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// logFramework logs a framework's record, or a page, with its level.
func (l *Writer) logFramework(r *phpRecord) {
	text := strings.Join(r.lines, "\n")
	attrs := make([]slog.Attr, 0, 4)
	attrs = append(attrs, slog.Int("pid", l.pid))
	if h := r.head; h != nil {
		text = text[h.date:]
		if h.channel != "" {
			attrs = append(attrs, slog.String("channel", h.channel))
		}
		if !h.exact {
			attrs = append(attrs, slog.String("level_name", h.name))
		}
	}
	if r.cut > 0 {
		text += fmt.Sprintf("\n[%d more bytes cut]", r.cut)
	}
	attrs = append(attrs, slog.String("line", text))
	l.log.LogAttrs(context.Background(), r.level, "worker output", attrs...)
}
