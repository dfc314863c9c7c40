package gateway

import (
	"bytes"
	"net/netip"
)

// forwardedElem is one element of an RFC 7239 Forwarded header: what one
// proxy saw of the request it received. Values stay as they stand in the
// header until the walk reaches the element: most elements of a long line
// are never looked at, and reading them must cost no allocation.
type forwardedElem struct {
	node, proto, host fwdValue
}

// fwdValue is a value as written: a token, or a quoted-string's body.
type fwdValue struct {
	raw     []byte
	escaped bool // raw holds \-escapes
}

func (v fwdValue) bytes() []byte {
	if !v.escaped {
		return v.raw
	}
	out := make([]byte, 0, len(v.raw))
	for i := 0; i < len(v.raw); i++ {
		if v.raw[i] == '\\' && i+1 < len(v.raw) {
			i++
		}
		out = append(out, v.raw[i])
	}
	return out
}

// addr is the for= address: invalid for "unknown", an obfuscated name or garbage.
func (e forwardedElem) addr() netip.Addr {
	return forwardedNode(e.node.bytes())
}

// forwardedRing keeps the last elements of one Forwarded line. The walk from
// the right needs no more than the chain of proxies wrote, and one: a line of
// thousands of elements from a client costs no more than a short one.
type forwardedRing struct {
	elems [16]forwardedElem
	n     int // elements parsed; the last min(n, len(elems)) are kept
}

func (r *forwardedRing) push(e forwardedElem) {
	r.elems[r.n%len(r.elems)] = e
	r.n++
}

// fromRight is the i-th element from the right end of the line, if kept.
func (r *forwardedRing) fromRight(i int) (forwardedElem, bool) {
	if i >= r.n || i >= len(r.elems) {
		return forwardedElem{}, false
	}
	return r.elems[(r.n-1-i)%len(r.elems)], true
}

// parseForwarded reads the elements of one Forwarded field line into r, left
// to right. The grammar is RFC 7239's: elements split by ",", pairs by
// ";", token=token or token="quoted" (with \-escapes), parameter names
// case-insensitive; whitespace around the separators is tolerated. Empty
// elements and empty pairs are allowed and ignored (the list rule of RFC 9110
// §5.6.1), which is what makes several field lines, joined with ", ", read as
// one value. Anything malformed makes ok false: the line is not believed.
func parseForwarded(r *forwardedRing, v []byte) (ok bool) {
	r.n = 0
	var cur forwardedElem
	pairs := 0
	for {
		v = fwdTrimOWS(v)
		if len(v) == 0 {
			break
		}
		switch v[0] {
		case ',':
			if pairs > 0 {
				r.push(cur)
			}
			cur, pairs = forwardedElem{}, 0
			v = v[1:]
			continue
		case ';':
			v = v[1:]
			continue
		}
		n := fwdTokenLen(v)
		if n == 0 {
			return false
		}
		name := v[:n]
		v = fwdTrimOWS(v[n:])
		if len(v) == 0 || v[0] != '=' {
			return false
		}
		v = fwdTrimOWS(v[1:])
		var val fwdValue
		if len(v) > 0 && v[0] == '"' {
			if val, v, ok = quotedForwarded(v[1:]); !ok {
				return false
			}
		} else {
			end := bytes.IndexAny(v, ";,")
			if end < 0 {
				end = len(v)
			}
			// Not strictly a token: proxies write for=[v6]:port unquoted.
			val.raw, v = bytes.TrimRight(v[:end], " \t"), v[end:]
			if !fwdBareValue(val.raw) {
				return false
			}
		}
		switch {
		case bytes.EqualFold(name, []byte("for")):
			cur.node = val
		case bytes.EqualFold(name, []byte("proto")):
			cur.proto = val
		case bytes.EqualFold(name, []byte("host")):
			cur.host = val
		}
		pairs++
		if v = fwdTrimOWS(v); len(v) > 0 && v[0] != ';' && v[0] != ',' {
			return false
		}
	}
	if pairs > 0 {
		r.push(cur)
	}
	return true
}

// quotedForwarded finds a quoted-string body up to its closing quote.
func quotedForwarded(v []byte) (val fwdValue, rest []byte, ok bool) {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
			val.raw = v[:i]
			return val, v[i+1:], true
		case c == '\\' && i+1 < len(v):
			i++
			val.escaped = true
			if c = v[i]; c < ' ' && c != '\t' || c == 0x7f {
				return val, nil, false
			}
		case c < ' ' && c != '\t', c == 0x7f:
			return val, nil, false
		}
	}
	return val, nil, false
}

// forwardedNode reads for=: an IPv4 address, "[IPv6]", either with a port.
// "unknown" and obfuscated names give no address.
func forwardedNode(v []byte) netip.Addr {
	if ap, err := netip.ParseAddrPort(string(v)); err == nil {
		return ap.Addr().Unmap()
	}
	s := string(v)
	if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
		s = s[1 : len(s)-1]
	}
	if a, err := netip.ParseAddr(s); err == nil && (a.Is4() || s != string(v)) {
		return a.Unmap()
	}
	return netip.Addr{}
}

func fwdTrimOWS(v []byte) []byte {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	return v
}

// fwdTokenLen is the length of the RFC 9110 token v starts with.
func fwdTokenLen(v []byte) int {
	for i, c := range v {
		if !fwdTchar(c) {
			return i
		}
	}
	return len(v)
}

func fwdTchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return bytes.IndexByte([]byte("!#$%&'*+-.^_`|~"), c) >= 0
}

// fwdBareValue accepts an unquoted value: not empty, and no space, control
// or quote that would make the pair mean something else to another parser.
func fwdBareValue(v []byte) bool {
	for _, c := range v {
		if c <= ' ' || c == 0x7f || c == '"' {
			return false
		}
	}
	return len(v) > 0
}
