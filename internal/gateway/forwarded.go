package gateway

import (
	"bytes"
	"net/netip"
)

// forwardedElem is one element of an RFC 7239 Forwarded header: what one
// proxy saw of the request it received.
type forwardedElem struct {
	addr  netip.Addr // from for=; invalid for "unknown", an obfuscated name or garbage
	proto []byte
	host  []byte
}

// parseForwarded appends the elements of one Forwarded field line to elems,
// left to right. The grammar is RFC 7239's: elements split by ",", pairs by
// ";", token=token or token="quoted" (with \-escapes), parameter names
// case-insensitive; whitespace around the separators is tolerated. Empty
// elements and empty pairs are allowed and ignored (the list rule of RFC 9110
// §5.6.1), which is what makes several field lines, joined with ", ", read as
// one value. Anything malformed makes ok false: the line is not believed.
func parseForwarded(elems []forwardedElem, v []byte) (_ []forwardedElem, ok bool) {
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
				elems = append(elems, cur)
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
			return nil, false
		}
		name := v[:n]
		v = fwdTrimOWS(v[n:])
		if len(v) == 0 || v[0] != '=' {
			return nil, false
		}
		v = fwdTrimOWS(v[1:])
		var val []byte
		if len(v) > 0 && v[0] == '"' {
			if val, v, ok = unquoteForwarded(v[1:]); !ok {
				return nil, false
			}
		} else {
			end := bytes.IndexAny(v, ";,")
			if end < 0 {
				end = len(v)
			}
			// Not strictly a token: proxies write for=[v6]:port unquoted.
			val, v = bytes.TrimRight(v[:end], " \t"), v[end:]
			if !fwdBareValue(val) {
				return nil, false
			}
		}
		switch {
		case bytes.EqualFold(name, []byte("for")):
			cur.addr = forwardedNode(val)
		case bytes.EqualFold(name, []byte("proto")):
			cur.proto = val
		case bytes.EqualFold(name, []byte("host")):
			cur.host = val
		}
		pairs++
		if v = fwdTrimOWS(v); len(v) > 0 && v[0] != ';' && v[0] != ',' {
			return nil, false
		}
	}
	if pairs > 0 {
		elems = append(elems, cur)
	}
	return elems, true
}

// unquoteForwarded reads a quoted-string body up to its closing quote.
func unquoteForwarded(v []byte) (val, rest []byte, ok bool) {
	var out []byte
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '"':
			return out, v[i+1:], true
		case c == '\\' && i+1 < len(v):
			i++
			out = append(out, v[i])
		case c < ' ' && c != '\t', c == 0x7f:
			return nil, nil, false
		default:
			out = append(out, c)
		}
	}
	return nil, nil, false
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
