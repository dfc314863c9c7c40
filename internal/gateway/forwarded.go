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

// parseForwarded splits a Forwarded value into its elements, left to right.
// Pairs are token=token or token="quoted" (with \-escapes); parameters are
// case-insensitive; anything malformed makes ok false, and then the header is
// not believed at all.
func parseForwarded(v []byte) (elems []forwardedElem, ok bool) {
	var cur forwardedElem
	for len(v) > 0 {
		v = bytes.TrimLeft(v, " \t")
		eq := bytes.IndexByte(v, '=')
		if eq <= 0 {
			return nil, false
		}
		name := bytes.TrimSpace(v[:eq])
		v = v[eq+1:]
		var val []byte
		if len(v) > 0 && v[0] == '"' {
			var rest []byte
			if val, rest, ok = unquoteForwarded(v[1:]); !ok {
				return nil, false
			}
			v = rest
		} else {
			end := bytes.IndexAny(v, ";,")
			if end < 0 {
				end = len(v)
			}
			val, v = bytes.TrimSpace(v[:end]), v[end:]
			if len(val) == 0 {
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
		v = bytes.TrimLeft(v, " \t")
		switch {
		case len(v) == 0:
		case v[0] == ';':
			v = v[1:]
		case v[0] == ',':
			elems = append(elems, cur)
			cur = forwardedElem{}
			v = v[1:]
		default:
			return nil, false
		}
	}
	return append(elems, cur), true
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
