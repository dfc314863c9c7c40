package gateway

import (
	"bytes"
	"net/netip"
)

// The request-target and Host grammar of RFC 9112 §3.2 and RFC 9110 §7.2,
// with RFC 3986's productions, as Ferry applies it. nginx is the reference for
// what to refuse; where the RFC and nginx differ, Ferry takes the stricter of
// the two when that is safe for real clients, and otherwise the one clients
// need (docs/deploy.md lists each choice). In ABNF, beyond the RFCs:
//
//	segment   = *( pchar / tolerated )           ; RFC: *pchar
//	query     = *( pchar / "/" / "?" / tolerated / "%" )
//	tolerated = DQUOTE / "<" / ">" / "[" / "\" / "]" / "^" / "`" / "{" / "|" / "}" / %x80-FF
//	reg-name  = 1*( unreserved / sub-delims )    ; RFC: *( unreserved / pct-encoded / sub-delims )
//	absolute-form = ( "http" / "https" ) "://" host [ ":" port ] path-abempty [ "?" query ]
//
// tolerated are the bytes browsers leave unencoded (WHATWG URL: PHP's a[]=1,
// JSON in a query) and nginx passes; a '%' in the query that starts no escape
// is what a user typed, and PHP's decoder keeps it. And the rules nginx adds
// on top of the syntax: the path, percent-decoded, holds no NUL and no ".."
// segment that climbs above the root; a registered name has no empty label
// ("a..b", "."); a port is at most 65535.

// targetForm is which of RFC 9112 §3.2's four forms a request-target has.
type targetForm uint8

const (
	formInvalid targetForm = iota
	formOrigin
	formAbsolute
	formAuthority
	formAsterisk
)

const (
	cPchar     = 1 << iota // unreserved, sub-delims, ':' and '@': pchar but for pct-encoded
	cTolerated             // outside RFC 3986, passed in path and query (see above)
	cHex                   // HEXDIG
	cRegName               // unreserved and sub-delims
	cPathFast              // a path byte that needs no closer look: '/', cPchar and cTolerated but '.'
	cNameFast              // a reg-name byte but '.'
	cQuery                 // any byte of a query
)

var uriClass = func() (t [256]uint8) {
	set := func(chars string, c uint8) {
		for i := 0; i < len(chars); i++ {
			t[chars[i]] |= c
		}
	}
	const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	const unreserved, subDelims = alnum + "-._~", "!$&'()*+,;="
	set(unreserved+subDelims+":@", cPchar|cQuery)
	set(unreserved+subDelims, cRegName)
	set(`"<>[\]^`+"`{|}", cTolerated|cQuery)
	for c := 0x80; c <= 0xff; c++ {
		t[c] |= cTolerated | cQuery
	}
	set("/?%", cQuery)
	set("0123456789abcdefABCDEF", cHex)
	for c := range t {
		if t[c]&(cPchar|cTolerated) != 0 && c != '.' || c == '/' {
			t[c] |= cPathFast
		}
		if t[c]&cRegName != 0 && c != '.' {
			t[c] |= cNameFast
		}
	}
	return
}()

// parseTarget reports the form of a request-target and whether it is valid
// for the method: authority-form only for CONNECT and CONNECT only with it,
// asterisk-form only for OPTIONS (RFC 9112 §3.2.3, §3.2.4).
func parseTarget(method, t []byte) targetForm {
	if string(method) == "CONNECT" {
		if validHostPort(t, true) {
			return formAuthority
		}
		return formInvalid
	}
	switch {
	case len(t) == 0:
	case t[0] == '/':
		if validOrigin(t) {
			return formOrigin
		}
	case len(t) == 1 && t[0] == '*':
		if string(method) == "OPTIONS" {
			return formAsterisk
		}
	default:
		if _, _, ok := splitAbsolute(t); ok {
			return formAbsolute
		}
	}
	return formInvalid
}

// validOrigin checks origin-form = absolute-path [ "?" query ]. The first
// loop is the whole cost for the usual target: with no escape and no segment
// that starts with a dot ('/' then '.'), a path can hold neither a NUL nor a
// dot-segment.
func validOrigin(t []byte) bool {
	for i := 0; i < len(t); i++ {
		c := t[i]
		if uriClass[c]&cPathFast != 0 || c == '.' && t[i-1] != '/' { // t[0] is '/'
			continue
		}
		if c == '?' {
			return validQuery(t[i+1:])
		}
		break
	}
	path, query, _ := bytes.Cut(t, []byte("?"))
	return validPath(path) && validQuery(query)
}

// validPath checks an absolute-path or path-abempty: segments of pchar and
// tolerated bytes, each '%' starting a pct-encoded octet. Decoded, as fasthttp
// and nginx resolve it (an escaped '/' separates segments too), it must hold no
// NUL and no ".." above the root.
func validPath(p []byte) bool {
	depth, segLen, dots := 0, 0, 0
	for i := 0; i <= len(p); i++ {
		d := byte('/') // the end closes the last segment
		if i < len(p) {
			switch c := p[i]; {
			case c == '%':
				if i+2 >= len(p) || uriClass[p[i+1]]&cHex == 0 || uriClass[p[i+2]]&cHex == 0 {
					return false
				}
				d = unhex(p[i+1])<<4 | unhex(p[i+2])
				i += 2
				if d == 0 {
					return false
				}
			case c == '/' || uriClass[c]&(cPchar|cTolerated) != 0:
				d = c
			default:
				return false
			}
		}
		if d != '/' {
			segLen++
			if d == '.' {
				dots++
			}
			continue
		}
		switch {
		case segLen == 0, segLen == 1 && dots == 1:
		case segLen == 2 && dots == 2:
			if depth--; depth < 0 {
				return false
			}
		default:
			depth++
		}
		segLen, dots = 0, 0
	}
	return true
}

func validQuery(q []byte) bool {
	for _, c := range q {
		if uriClass[c]&cQuery == 0 {
			return false
		}
	}
	return true
}

// splitAbsolute checks absolute-form (only the http and https schemes: an
// origin server serves no other) and returns the authority that replaces
// Host and the rest of the target, path-abempty [ "?" query ].
func splitAbsolute(t []byte) (authority, rest []byte, ok bool) {
	switch {
	case len(t) >= 7 && bytes.EqualFold(t[:7], []byte("http://")):
		rest = t[7:]
	case len(t) >= 8 && bytes.EqualFold(t[:8], []byte("https://")):
		rest = t[8:]
	default:
		return nil, nil, false
	}
	end := bytes.IndexAny(rest, "/?")
	if end < 0 {
		end = len(rest)
	}
	authority, rest = rest[:end], rest[end:]
	path, query, _ := bytes.Cut(rest, []byte("?"))
	// An empty host is invalid in an http URI (RFC 9110 §4.2.1) and
	// userinfo an error (§4.2.4): neither passes validHostPort.
	if !validHostPort(authority, false) || !validPath(path) || !validQuery(query) {
		return nil, nil, false
	}
	return authority, rest, true
}

// validHostField checks a Host field value (or HTTP/2's :authority):
// uri-host [ ":" port ].
func validHostField(h []byte) bool { return validHostPort(h, false) }

// validHostPort checks uri-host [ ":" port ], or with needPort the
// authority-form of CONNECT, uri-host ":" port, where the port may not be
// empty either (RFC 9110 §9.3.6: there is no default port).
func validHostPort(b []byte, needPort bool) bool {
	host, port := b, []byte(nil)
	if len(b) > 0 && b[0] == '[' {
		end := bytes.IndexByte(b, ']')
		if end < 0 || !validIPLiteral(b[1:end]) {
			return false
		}
		if rest := b[end+1:]; len(rest) > 0 {
			if rest[0] != ':' {
				return false
			}
			port = rest[1:]
		}
	} else {
		i := regNameEnd(b)
		if i < len(b) {
			if b[i] != ':' {
				return false
			}
			port = b[i+1:]
		}
		if host = b[:i]; len(host) == 0 || len(host) == 1 && host[0] == '.' {
			return false
		}
	}
	if needPort && len(port) == 0 {
		return false
	}
	return validPort(port)
}

// regNameEnd returns where the registered name at the start of b ends (an
// IPv4address is one too). Its caller refuses an empty name and "."; an empty
// label ("a..b") ends the name early, so that what follows is refused: all
// three as nginx does. A percent-encoded name is refused although RFC 3986
// allows it: clients send IDNA A-labels, and fasthttp would decode it into the
// host PHP is given.
func regNameEnd(b []byte) int {
	for i, c := range b {
		if uriClass[c]&cNameFast != 0 || c == '.' && (i == 0 || b[i-1] != '.') {
			continue
		}
		return i
	}
	return len(b)
}

func validPort(p []byte) bool {
	if len(p) > 5 {
		p = bytes.TrimLeft(p, "0")
	}
	n := 0
	for _, c := range p {
		if c < '0' || c > '9' {
			return false
		}
		if n = n*10 + int(c-'0'); n > 65535 {
			return false
		}
	}
	return true
}

// validIPLiteral checks what lies between '[' and ']': IPv6address or
// IPvFuture. IPv6 zone identifiers (RFC 6874) are not part of HTTP's grammar.
func validIPLiteral(s []byte) bool {
	if len(s) > 0 && (s[0] == 'v' || s[0] == 'V') {
		// IPvFuture = "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )
		i := 1
		for i < len(s) && uriClass[s[i]]&cHex != 0 {
			i++
		}
		if i == 1 || i+1 >= len(s) || s[i] != '.' {
			return false
		}
		for _, c := range s[i+1:] {
			if uriClass[c]&cRegName == 0 && c != ':' {
				return false
			}
		}
		return true
	}
	for _, c := range s {
		if uriClass[c]&cHex == 0 && c != ':' && c != '.' {
			return false
		}
	}
	a, err := netip.ParseAddr(string(s))
	return err == nil && a.Is6()
}
