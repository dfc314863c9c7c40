package gateway

import (
	"net"

	"github.com/valyala/fasthttp"
)

// RedirectTLS answers every request with a 308 to the same host and target
// on the HTTPS listener at tlsAddr (server.tls.redirect).
func RedirectTLS(tlsAddr string) fasthttp.RequestHandler {
	_, port, _ := net.SplitHostPort(tlsAddr)
	return func(ctx *fasthttp.RequestCtx) {
		if r := checkRequest(ctx, 1<<20); r != nil {
			ctx.Error(r.msg+"\n", r.status)
			ctx.SetConnectionClose()
			return
		}
		if answerAsterisk(ctx) {
			return
		}
		host := string(ctx.Host())
		if h, _, err := net.SplitHostPort(host); err == nil {
			host = h
		}
		if !redirectHost(host) {
			ctx.Error("a Host header naming this server is needed to redirect to HTTPS\n", fasthttp.StatusBadRequest)
			return
		}
		if net.ParseIP(host) != nil && net.ParseIP(host).To4() == nil {
			host = "[" + host + "]"
		}
		if port != "443" {
			host += ":" + port
		}
		ctx.Response.Header.Set("Location", "https://"+host+string(ctx.RequestURI()))
		ctx.SetStatusCode(fasthttp.StatusPermanentRedirect)
	}
}

// redirectHost accepts a DNS name or an IP literal, nothing that could bend the
// Location header into another URL.
func redirectHost(h string) bool {
	if h == "" || len(h) > 255 {
		return false
	}
	if net.ParseIP(h) != nil {
		return true
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_') {
			return false
		}
	}
	return true
}
