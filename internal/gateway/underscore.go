package gateway

import (
	"bytes"
	"slices"

	"github.com/valyala/fasthttp"
)

// dropUnderscored removes the request header fields whose name holds "_",
// as nginx does before FastCGI unless underscores_in_headers is on. PHP
// spells "-" and "_" alike in $_SERVER (HTTP_X_FORWARDED_FOR), so a client's
// X_Forwarded_For would stand in for the X-Forwarded-For its proxy wrote, in
// the application and in any library that reads $_SERVER. It returns the
// names it dropped.
func dropUnderscored(h *fasthttp.RequestHeader) []string {
	// A request fasthttp read keeps its header block: one scan of it settles
	// the common request, and a look at each name the one whose values hold
	// "_" (a User-Agent's x86_64, a _ga cookie). A request net/http read
	// (HTTP/2, TLS) has no block and is visited field by field.
	if raw := h.RawHeaders(); len(raw) > 0 && !underscoredName(raw) {
		return nil
	}
	var names []string
	h.VisitAll(func(k, _ []byte) {
		if bytes.IndexByte(k, '_') >= 0 && !slices.Contains(names, string(k)) {
			names = append(names, string(k))
		}
	})
	for _, k := range names {
		h.Del(k)
	}
	return names
}

// underscoredName tells whether a name in the header block holds "_". It
// looks only at the lines where a "_" appears: a false yes (a line without a
// colon) costs the slow path, never a field.
func underscoredName(raw []byte) bool {
	for {
		i := bytes.IndexByte(raw, '_')
		if i < 0 {
			return false
		}
		start := bytes.LastIndexByte(raw[:i], '\n') + 1
		if colon := bytes.IndexByte(raw[start:], ':'); colon < 0 || start+colon > i {
			return true
		}
		nl := bytes.IndexByte(raw[i:], '\n')
		if nl < 0 {
			return false
		}
		raw = raw[i+nl+1:]
	}
}
