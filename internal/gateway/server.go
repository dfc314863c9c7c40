package gateway

import (
	"github.com/ferry-php/ferry/internal/listen"
	"github.com/valyala/fasthttp"
)

// Server returns the fasthttp server that feeds h. Serve it on a
// listen.Listen listener whose Options.Front is NewConn.
func (h *Handler) Server(l listen.Limits) *fasthttp.Server {
	idle := l.IdleTimeout
	if idle == 0 {
		idle = l.ReadTimeout
	}
	h.writeTimeout = l.WriteTimeout
	srv := &fasthttp.Server{
		Handler:            h.Serve,
		Name:               "ferry",
		ReadTimeout:        l.ReadTimeout,
		WriteTimeout:       l.WriteTimeout,
		IdleTimeout:        idle,
		MaxRequestBodySize: int(h.opt.MaxBodySize),
		ReadBufferSize:     l.MaxHeaderSize,
		// server.max_connections is counted at accept (Listen), where it
		// covers the connections fasthttp hands over (h2c) or never sees.
		Concurrency: 1 << 30,
		// The handler reads bodies itself, spooling large ones to disk, and
		// one multipart parser enforces the upload limits.
		StreamRequestBody:            true,
		DisablePreParseMultipartForm: true,
		Logger:                       l.Logger,
		ErrorHandler:                 ProtocolError,
		CloseOnShutdown:              true,
	}
	if l.ReadHeaderTimeout > 0 && (l.ReadTimeout == 0 || l.ReadHeaderTimeout < l.ReadTimeout) {
		// The header must arrive within read_header_timeout (slowloris); once it
		// has, the body gets read_timeout. A request without a body reads
		// nothing more before its answer, and the wait for the next request
		// gets the idle timeout: its deadline (a clock read) is not moved.
		srv.ReadTimeout = l.ReadHeaderTimeout
		srv.HeaderReceived = func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
			if n := h.ContentLength(); n == 0 || n == -2 {
				return fasthttp.RequestConfig{}
			}
			return fasthttp.RequestConfig{ReadTimeout: l.ReadTimeout}
		}
	}
	return srv
}
