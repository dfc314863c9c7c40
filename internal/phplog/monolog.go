package phplog

import (
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"
)

// monolog logs a line written by Monolog's JsonFormatter with its level and
// fields, and reports whether t was one.
func (l *Writer) monolog(t string) bool {
	if len(t) < 2 || t[0] != '{' || t[len(t)-1] != '}' {
		return false
	}
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(t))
	d.UseNumber()
	if d.Decode(&m) != nil || d.InputOffset() != int64(len(t)) {
		return false
	}
	msg, ok := m["message"].(string)
	name, _ := m["level_name"].(string)
	num, _ := m["level"].(json.Number)
	if !ok || (name == "" && num == "") {
		return false
	}
	level, exact := monologLevel(name, num)
	attrs := []slog.Attr{slog.Int("pid", l.pid), slog.String("message", msg)}
	if c, ok := m["channel"].(string); ok {
		attrs = append(attrs, slog.String("channel", c))
	}
	if !exact {
		attrs = append(attrs, slog.String("level_name", name))
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch k {
		case "message", "channel", "level", "level_name", "datetime":
		default:
			if a := jsonAttr(k, m[k]); !a.Equal(slog.Attr{}) {
				attrs = append(attrs, a)
			}
		}
	}
	l.prev.ok = false
	if level > slog.LevelInfo {
		l.errLevel, l.errAt = level, time.Now()
	}
	l.log.LogAttrs(context.Background(), level, "worker output", attrs...)
	return true
}

// monologLevels maps Monolog's level names onto slog's; where slog has no
// match (NOTICE, CRITICAL, ALERT, EMERGENCY) the record keeps the name too.
var monologLevels = map[string]slog.Level{"DEBUG": slog.LevelDebug, "INFO": slog.LevelInfo,
	"WARNING": slog.LevelWarn, "ERROR": slog.LevelError}

func monologLevel(name string, num json.Number) (slog.Level, bool) {
	if name != "" {
		if l, ok := monologLevels[strings.ToUpper(name)]; ok {
			return l, true
		}
		if strings.EqualFold(name, "NOTICE") {
			return slog.LevelInfo, false
		}
		return slog.LevelError, false
	}
	n, _ := num.Int64()
	switch {
	case n < 200:
		return slog.LevelDebug, true
	case n < 300:
		return slog.LevelInfo, true
	case n < 400:
		return slog.LevelWarn, true
	}
	return slog.LevelError, true
}

// jsonAttr converts a decoded JSON value; objects become groups, and an empty
// object or array (Monolog writes "context":[] for no context) the empty Attr.
func jsonAttr(k string, v any) slog.Attr {
	switch x := v.(type) {
	case map[string]any:
		var as []any
		for _, kk := range slices.Sorted(maps.Keys(x)) {
			as = append(as, jsonAttr(kk, x[kk]))
		}
		if len(as) == 0 {
			return slog.Attr{}
		}
		return slog.Group(k, as...)
	case []any:
		if len(x) == 0 {
			return slog.Attr{}
		}
		return slog.Any(k, x)
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return slog.Int64(k, i)
		}
		f, _ := x.Float64()
		return slog.Float64(k, f)
	}
	return slog.Any(k, v)
}
