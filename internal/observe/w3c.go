package observe

import (
	"encoding/hex"
	"strings"
)

// spanContext is the part of a W3C Trace Context (www.w3.org/TR/trace-context)
// that crosses a process boundary.
type spanContext struct {
	traceID [16]byte
	spanID  [8]byte
	flags   byte
}

// The trace flags a traceparent defines: sampled, and (Trace Context level 2)
// a random trace id. Other bits are not passed on.
const (
	flagSampled byte = 0x01
	flagRandom  byte = 0x02
)

// parseTraceparent reads "version-traceid-parentid-flags". Version 00 has
// exactly these four fields and no reserved flag bits; a later version
// (up to fe) may append fields after a dash, which are ignored. Hex digits
// are lower case; an all-zero trace or span id is invalid.
func parseTraceparent(h string) (spanContext, bool) {
	var sc spanContext
	whole := len(h)
	var ver [1]byte
	if !hexPart(ver[:], &h) || ver[0] == 0xff {
		return sc, false
	}
	var flags [1]byte
	if !hexPart(sc.traceID[:], &h) || !hexPart(sc.spanID[:], &h) || !hexPart(flags[:], &h) {
		return sc, false
	}
	if ver[0] == 0 && (whole != 55 || flags[0] > flagSampled|flagRandom) {
		return sc, false
	}
	if sc.traceID == ([16]byte{}) || sc.spanID == ([8]byte{}) {
		return sc, false
	}
	sc.flags = flags[0] & (flagSampled | flagRandom)
	return sc, true
}

// hexPart decodes the next dash-separated field of *h into dst, which it
// must fill exactly, and leaves the rest in *h.
func hexPart(dst []byte, h *string) bool {
	part, rest, _ := strings.Cut(*h, "-")
	if len(part) != 2*len(dst) {
		return false
	}
	for i := 0; i < len(part); i++ {
		if c := part[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	hex.Decode(dst, []byte(part))
	*h = rest
	return true
}

// appendTraceparent writes sc as a version 00 traceparent.
func appendTraceparent(b []byte, sc spanContext) []byte {
	b = append(b, "00-"...)
	b = hex.AppendEncode(b, sc.traceID[:])
	b = append(b, '-')
	b = hex.AppendEncode(b, sc.spanID[:])
	b = append(b, '-')
	return hex.AppendEncode(b, []byte{sc.flags & (flagSampled | flagRandom)})
}

// normalTracestate returns the tracestate header's list-members joined by
// commas without the optional white space, or "" when the header breaks
// the grammar: then it is nobody's state, and a trace's parsing must not
// fail for it. At most 32 members, keys unique.
func normalTracestate(h string) string {
	if h == "" {
		return ""
	}
	var out []byte
	seen := make(map[string]struct{}, 4)
	for m := range strings.SplitSeq(h, ",") {
		m = strings.Trim(m, " \t")
		if m == "" {
			continue // an empty list-member is allowed
		}
		k, v, ok := strings.Cut(m, "=")
		if !ok || !tracestateKey(k) || !tracestateValue(v) {
			return ""
		}
		if _, dup := seen[k]; dup || len(seen) == 32 {
			return ""
		}
		seen[k] = struct{}{}
		if out != nil {
			out = append(out, ',')
		}
		out = append(out, m...)
	}
	return string(out)
}

// tracestateKey: a simple key is a lower-case letter and up to 255 of
// [a-z0-9_*/-]; a multi-tenant key is tenant@system, the tenant a letter or
// digit and up to 240 of those, the system a letter and up to 13.
func tracestateKey(k string) bool {
	tenant, system, multi := strings.Cut(k, "@")
	if !multi {
		return keyPart(k, false, 256)
	}
	return keyPart(tenant, true, 241) && keyPart(system, false, 14)
}

func keyPart(s string, digitFirst bool, max int) bool {
	if s == "" || len(s) > max {
		return false
	}
	if c := s[0]; !('a' <= c && c <= 'z' || digitFirst && '0' <= c && c <= '9') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '*' || c == '/') {
			return false
		}
	}
	return true
}

// tracestateValue: 1 to 256 printable ASCII bytes other than ',' and '=',
// spaces allowed except last.
func tracestateValue(v string) bool {
	if v == "" || len(v) > 256 || v[len(v)-1] == ' ' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c > 0x7e || c == ',' || c == '=' {
			return false
		}
	}
	return true
}
