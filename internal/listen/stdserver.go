package listen

import (
	stdlog "log"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// Limits are the front's timeouts and connection limits (server.* in
// docs/config.md). Zero durations mean no limit.
type Limits struct {
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration // the body, once the headers are in
	WriteTimeout      time.Duration // writing the answer
	IdleTimeout       time.Duration // 0 = ReadTimeout
	MaxHeaderSize     int           // bytes of the header block; 431 beyond
	MaxConnections    int           // 0 = no limit; enforced by Listen's ConnLimit, for every protocol
	Logger            fasthttp.Logger
}

// StdServer returns the net/http server for the stacks fasthttp lacks:
// HTTPS (HTTP/1.1 and HTTP/2 by ALPN; serve it with ServeTLS) or, with tls
// false, HTTP/2 without TLS for the connections SplitH2C sets apart. Both
// send every request to next, the plain front's handler, under the front's
// limits.
func StdServer(next fasthttp.RequestHandler, l Limits, streams int, tls bool, log *slog.Logger) *http.Server {
	idle := l.IdleTimeout
	if idle == 0 {
		idle = l.ReadTimeout
	}
	var protos http.Protocols
	if tls {
		protos.SetHTTP1(true)
		protos.SetHTTP2(true)
	} else {
		protos.SetUnencryptedHTTP2(true)
	}
	return &http.Server{
		Handler:           &stdHandler{next: next, writeTimeout: l.WriteTimeout},
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		// net/http's ReadTimeout runs from the connection's start: the
		// header's time and then the body's, as on the HTTP/1.1 front.
		ReadTimeout:    l.ReadHeaderTimeout + l.ReadTimeout,
		IdleTimeout:    idle,
		MaxHeaderBytes: l.MaxHeaderSize,
		Protocols:      &protos,
		HTTP2: &http.HTTP2Config{
			MaxConcurrentStreams: streams,
			// An HTTP/2 header block is not bounded by MaxHeaderBytes alone.
			MaxDecoderHeaderTableSize: 4096,
		},
		ErrorLog: stdlog.New(connErrors{log}, "", 0),
	}
}

// setWriteDeadline bounds writing one answer, as write_timeout does on the
// HTTP/1.1 front: net/http's own WriteTimeout would also count PHP's time.
func (h *stdHandler) setWriteDeadline(w http.ResponseWriter) {
	if h.writeTimeout > 0 {
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(h.writeTimeout))
	}
}

// connErrors gives net/http's and x/net/http2's messages about one client's
// broken connection (a bad preface, a protocol error) the fixed message
// fasthttp's get (fastLogger in cmd/ferry): each text names the client, and
// under one message the rate limiter sees a flood of them as the repeats
// they are.
type connErrors struct{ log *slog.Logger }

func (w connErrors) Write(p []byte) (int, error) {
	w.log.Warn("client connection error", "detail", strings.TrimSpace(string(p)))
	return len(p), nil
}
