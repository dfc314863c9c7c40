package gateway

import (
	"bytes"

	"github.com/ferry-php/ferry/internal/listen"
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
		if listen.IsStd(ctx.Conn()) {
			return checkStd(ctx, maxHeaders)
		}
	}
	h := &ctx.Request.Header
	proto := h.Protocol()
	http11 := string(proto) == "HTTP/1.1"
	if !http11 && string(proto) != "HTTP/1.0" {
		return &rejection{fasthttp.StatusHTTPVersionNotSupported, "HTTP version not supported"}
	}
	form := parseTarget(h.Method(), h.RequestURI())
	if form == formInvalid {
		return &rejection{fasthttp.StatusBadRequest, "invalid request target"}
	}
	lines, folds, hosts, lengths, encodings := scanRawHeaders(h.RawHeaders())
	switch {
	case folds > 0:
		// RFC 9112 §5.2 lets a server refuse obs-fold (400); fasthttp's
		// unfolding moves bytes in its read buffer and leaves some of the head
		// behind, which the connection's next request would be parsed after.
		return &rejection{fasthttp.StatusBadRequest, "obsolete line folding in a header field"}
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
	case hosts == 1 && !validHostField(h.Host()):
		return &rejection{fasthttp.StatusBadRequest, "invalid Host header"}
	}
	return settleTarget(ctx, form)
}

// settleTarget refuses CONNECT, now that its request is known to be well
// formed, and leaves fasthttp's URI, which the static files, PHP's path and
// host and the redirect read, the one the target names.
func settleTarget(ctx *fasthttp.RequestCtx, form targetForm) *rejection {
	req := &ctx.Request
	switch form {
	case formAuthority:
		// A CONNECT with the target its method requires: the method is what
		// is refused (the front is no proxy), as nginx answers a CONNECT it
		// parses. Any other target with CONNECT was a 400 above.
		return &rejection{fasthttp.StatusMethodNotAllowed, "CONNECT is not supported"}
	case formAbsolute:
		// RFC 9112 §3.2.2: the target's authority replaces Host, and PHP
		// gets the origin-form as its request URI, as nginx gives it.
		authority, rest, _ := splitAbsolute(req.Header.RequestURI())
		req.Header.SetHostBytes(authority) // before rest, which shares its bytes, is moved
		if len(rest) == 0 || rest[0] != '/' {
			rest = append([]byte{'/'}, rest...)
		}
		req.SetRequestURIBytes(rest)
	}
	if uri := req.Header.RequestURI(); len(uri) > 1 && uri[0] == '/' && uri[1] == '/' {
		// fasthttp reads a target starting with "//" as scheme-relative when
		// Host is empty or "://" follows anywhere in it, and takes its first
		// segment for the host ("//evil/x?u=http://y" gave PHP the host
		// "evil"). Leading slashes collapse in the path it gives anyway, so
		// its URI is parsed from the target with one.
		i := 1
		for i < len(uri) && uri[i] == '/' {
			i++
		}
		u := req.URI()
		u.Parse(req.Header.Host(), uri[i-1:])
		if ctx.IsTLS() {
			u.SetScheme("https")
		}
	}
	return nil
}

// answerAsterisk answers OPTIONS * (the only method checkRequest lets
// through with it): it asks about the server, not a resource of PHP's, and
// neither nginx nor Apache hands it to PHP.
func answerAsterisk(ctx *fasthttp.RequestCtx) bool {
	if uri := ctx.Request.Header.RequestURI(); len(uri) != 1 || uri[0] != '*' {
		return false
	}
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.Response.Header.SetContentLength(0)
	return true
}

// scanRawHeaders counts header lines, obs-fold continuation lines, and the
// fields whose repetition or combination changes how the request is framed or
// routed. One pass, no allocation.
func scanRawHeaders(raw []byte) (lines, folds, hosts, lengths, encodings int) {
	for len(raw) > 0 {
		nl := bytes.IndexByte(raw, '\n')
		line := raw
		if nl >= 0 {
			line, raw = raw[:nl], raw[nl+1:]
		} else {
			raw = nil
		}
		if len(line) > 0 && (line[0] == ' ' || line[0] == '\t') {
			folds++
			continue
		}
		if len(line) == 0 || line[0] == '\r' {
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
