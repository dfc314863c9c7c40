package gateway

import (
	"bytes"

	"github.com/ferry-php/ferry/internal/listen"
	"github.com/valyala/fasthttp"
)

// checkStd is checkRequest for a request net/http has already parsed and
// framed: the target and Host grammar and the limits that are Ferry's own.
func checkStd(ctx *fasthttp.RequestCtx, maxHeaders int) *rejection {
	h := &ctx.Request.Header
	form := parseTarget(h.Method(), h.RequestURI())
	if form == formAbsolute && string(h.Protocol()) == "HTTP/2.0" {
		form = formInvalid // RFC 9113 §8.3.1: :path is origin-form or "*"
	}
	if form == formInvalid {
		return &rejection{fasthttp.StatusBadRequest, "invalid request target"}
	}
	if h.Len() > maxHeaders {
		return &rejection{fasthttp.StatusRequestHeaderFieldsTooLarge, "too many request header fields"}
	}
	// net/http gives :authority, or else the Host field, as the host;
	// HTTP/1.1 it has checked for one Host line already.
	host := h.Host()
	switch {
	case len(host) == 0 && string(h.Protocol()) != "HTTP/1.0":
		return &rejection{fasthttp.StatusBadRequest, "missing required Host header"}
	case len(host) > 0 && !validHostField(host):
		return &rejection{fasthttp.StatusBadRequest, "invalid Host header"}
	}
	// HTTP/2 keeps a Host field beside :authority in the header; it must
	// name the same host (RFC 9113 §8.3.1) and be valid and single.
	if lines := listen.StdHostLines(ctx.Conn()); len(lines) > 1 {
		return &rejection{fasthttp.StatusBadRequest, "more than one Host header"}
	} else if len(lines) == 1 && !bytes.EqualFold([]byte(lines[0]), host) {
		return &rejection{fasthttp.StatusBadRequest, "Host header differs from :authority"}
	}
	return settleTarget(ctx, form)
}
