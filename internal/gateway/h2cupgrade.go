package gateway

import (
	"bytes"
	"encoding/base64"
	"net"
	"net/http"
	"time"

	"github.com/valyala/fasthttp"
	"golang.org/x/net/http2"
)

// UpgradeH2C wraps the plain front's handler so that a request asking to
// switch to HTTP/2 (Upgrade: h2c with HTTP2-Settings, RFC 7540 §3.2, as curl
// --http2 sends it on http://) gets a 101 and continues as an HTTP/2
// connection served by srv, whose handler answers that first request as
// stream 1. A request with a body, or an incomplete upgrade, is served over
// HTTP/1.1 as if it had not asked: the server may ignore Upgrade.
func UpgradeH2C(next fasthttp.RequestHandler, srv *http.Server) fasthttp.RequestHandler {
	h2 := &http2.Server{MaxConcurrentStreams: uint32(srv.HTTP2.MaxConcurrentStreams), IdleTimeout: srv.IdleTimeout}
	return func(ctx *fasthttp.RequestCtx) {
		settings, ok := h2cUpgrade(ctx)
		if !ok {
			next(ctx)
			return
		}
		req, err := upgradeRequest(ctx)
		if err != nil {
			next(ctx)
			return
		}
		ctx.HijackSetNoResponse(true)
		ctx.Hijack(func(c net.Conn) {
			c.SetDeadline(time.Time{}) // HTTP/2 keeps its own timeouts from here
			if _, err := c.Write([]byte("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n")); err != nil {
				return
			}
			h2.ServeConn(c, &http2.ServeConnOpts{Handler: srv.Handler, BaseConfig: srv, UpgradeRequest: req, Settings: settings})
		})
	}
}

// h2cUpgrade reports whether the request asks for h2c and has nothing in
// its body (the body would have to be read whole first), with the settings
// it carries.
func h2cUpgrade(ctx *fasthttp.RequestCtx) ([]byte, bool) {
	h := &ctx.Request.Header
	if !h.IsHTTP11() || !hasToken(h.Peek("Upgrade"), "h2c") || !hasToken(h.Peek("Connection"), "upgrade") {
		return nil, false
	}
	raw := h.Peek("Http2-Settings")
	if raw == nil || h.ContentLength() > 0 || h.ContentLength() == -1 {
		return nil, false
	}
	settings, err := base64.RawURLEncoding.DecodeString(string(bytes.TrimRight(raw, "=")))
	if err != nil || len(settings)%6 != 0 {
		return nil, false
	}
	return settings, true
}

func hasToken(v []byte, token string) bool {
	for _, t := range bytes.Split(v, []byte(",")) {
		if bytes.EqualFold(bytes.TrimSpace(t), []byte(token)) {
			return true
		}
	}
	return false
}

// upgradeRequest is the upgrading request as net/http would have read it.
func upgradeRequest(ctx *fasthttp.RequestCtx) (*http.Request, error) {
	req, err := http.NewRequest(string(ctx.Method()), "http://"+string(ctx.Host())+string(ctx.RequestURI()), nil)
	if err != nil {
		return nil, err
	}
	req.RequestURI = string(ctx.RequestURI())
	req.RemoteAddr = remoteAddr(ctx)
	ctx.Request.Header.VisitAll(func(k, v []byte) {
		switch string(k) {
		case "Host", "Connection", "Upgrade", "Http2-Settings", "Keep-Alive", "Transfer-Encoding", "Te":
			return
		}
		req.Header.Add(string(k), string(v))
	})
	// The Host field as sent, not fasthttp's reading of the target: the
	// HTTP/2 side checks it and settles the host as for any request.
	req.Host = string(ctx.Request.Header.Host())
	return req, nil
}
