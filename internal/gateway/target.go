package gateway

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

// target returns the path, query string and host PHP is given: those of
// fasthttp's parsed URI. Parsing it (host checks, unescaping, path
// normalizing, copies) is the largest part of encoding a small request, and
// for the usual request it changes nothing: an origin-form target of plain
// characters, with no escapes, dot segments or doubled slashes, and a Host of
// lower-case name characters and a port. Those are read straight from the
// request line and the Host header; anything else goes through the parser.
func target(req *fasthttp.Request) (path, query, host []byte) {
	uri, h := req.Header.RequestURI(), req.Header.Host()
	if p, q, ok := plainTarget(uri); ok && plainHost(h) {
		return p, q, h
	}
	u := req.URI()
	return u.Path(), u.QueryString(), u.Host()
}

// pathByte are the characters fasthttp's path decoding and normalizing leave
// as they are: RFC 3986 unreserved and sub-delims, ':', '@' and '/', but not
// '%', which is decoded.
var pathByte = func() (t [256]bool) {
	for _, c := range []byte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=:@/") {
		t[c] = true
	}
	return
}()

func plainTarget(uri []byte) (path, query []byte, ok bool) {
	if len(uri) == 0 || uri[0] != '/' {
		return nil, nil, false
	}
	q := len(uri)
	for i, c := range uri {
		if c == '?' {
			q = i
			break
		}
		if !pathByte[c] || c == '/' && i+1 < len(uri) && (uri[i+1] == '/' || uri[i+1] == '.') {
			return nil, nil, false
		}
	}
	if q == len(uri) {
		return uri, nil, true
	}
	query = uri[q+1:]
	for _, c := range query {
		// '#' starts a fragment; control bytes and non-ASCII fail the parse.
		if c <= ' ' || c >= 0x7f || c == '#' {
			return nil, nil, false
		}
	}
	// "://" anywhere makes fasthttp read the target as an absolute URI.
	if bytes.Contains(query, []byte("://")) {
		return nil, nil, false
	}
	return uri[:q], query, true
}

// plainHost reports a Host fasthttp keeps as it is: a name of lower-case
// letters, digits, dots and dashes, then maybe a colon and digits.
func plainHost(h []byte) bool {
	if len(h) == 0 {
		return false
	}
	port := false
	for _, c := range h {
		switch {
		case c >= '0' && c <= '9':
		case port:
			return false
		case c >= 'a' && c <= 'z', c == '.', c == '-':
		case c == ':':
			port = true
		default:
			return false
		}
	}
	return true
}
