package gateway

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

// rejection is a request that must not reach PHP: the status and the reason
// the client is told.
type rejection struct {
	status int
	msg    string
}

// checkRequest applies the rules of RFC 9112 that fasthttp leaves to its
// handler, the way net/http applies them. Everything it rejects closes the
// connection: after a framing error the next request's start is unknown.
func checkRequest(ctx *fasthttp.RequestCtx, maxHeaders int) *rejection {
	if _, ok := ctx.Conn().(*conn); !ok {
		if _, std := stdContext(ctx.Conn()); std {
			return checkStd(ctx, maxHeaders)
		}
	}
	h := &ctx.Request.Header
	proto := h.Protocol()
	http11 := string(proto) == "HTTP/1.1"
	if !http11 && string(proto) != "HTTP/1.0" {
		return &rejection{fasthttp.StatusHTTPVersionNotSupported, "HTTP version not supported"}
	}
	if h.IsConnect() {
		return &rejection{fasthttp.StatusMethodNotAllowed, "CONNECT is not supported"}
	}
	for _, c := range h.RequestURI() {
		if c <= ' ' || c == 0x7f {
			return &rejection{fasthttp.StatusBadRequest, "invalid character in the request target"}
		}
	}
	lines, hosts, lengths, encodings := scanRawHeaders(h.RawHeaders())
	switch {
	case lines > maxHeaders:
		return &rejection{fasthttp.StatusRequestHeaderFieldsTooLarge, "too many request header fields"}
	case hosts > 1:
		return &rejection{fasthttp.StatusBadRequest, "more than one Host header"}
	case hosts == 0 && http11:
		return &rejection{fasthttp.StatusBadRequest, "missing required Host header"}
	case lengths > 0 && encodings > 0:
		// RFC 9112 §6.1: a request with both is a smuggling attempt or a
		// broken proxy; serving it and keeping the connection lets a body
		// run as a second request.
		return &rejection{fasthttp.StatusBadRequest, "both Content-Length and Transfer-Encoding"}
	}
	return nil
}

// scanRawHeaders counts header lines and the fields whose repetition or
// combination changes how the request is framed or routed. One pass, no
// allocation.
func scanRawHeaders(raw []byte) (lines, hosts, lengths, encodings int) {
	for len(raw) > 0 {
		nl := bytes.IndexByte(raw, '\n')
		line := raw
		if nl >= 0 {
			line, raw = raw[:nl], raw[nl+1:]
		} else {
			raw = nil
		}
		if len(line) == 0 || line[0] == '\r' || line[0] == ' ' || line[0] == '\t' {
			continue
		}
		lines++
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			continue
		}
		switch name := line[:colon]; len(name) {
		case 4:
			if bytes.EqualFold(name, []byte("Host")) {
				hosts++
			}
		case 14:
			if bytes.EqualFold(name, []byte("Content-Length")) {
				lengths++
			}
		case 17:
			if bytes.EqualFold(name, []byte("Transfer-Encoding")) {
				encodings++
			}
		}
	}
	return
}
