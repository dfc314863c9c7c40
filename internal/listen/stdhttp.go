package listen

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
)

// stdHandler serves the requests net/http reads: HTTP/2 (TLS or h2c) and
// HTTP/1.1 over TLS. fasthttp has no HTTP/2, so these stacks hand each request
// to the same handler as the plain HTTP/1.1 front (Serve, and whatever wraps
// it), through a RequestCtx that holds the request: the request encoding,
// limits, static files, error mapping, answer checks, request ids and metrics
// exist once, and the HTTP/1.1 fast path pays nothing for the other stacks.
type stdHandler struct {
	next         fasthttp.RequestHandler
	writeTimeout time.Duration
}

func (h *stdHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer recoverStd(r)
	c := stdConns.Get().(*stdConn)
	c.reset(r)
	c.w = w
	ctx := stdCtxs.Get().(*fasthttp.RequestCtx)
	if r.TLS != nil {
		ctx.Init2(&c.asTLS, nil, false)
	} else {
		ctx.Init2(c, nil, false)
	}
	c.cookie = copyRequest(&ctx.Request, r)
	h.next(ctx)
	h.writeStd(w, r, ctx)
	ctx.Request.Reset()
	ctx.Response.Reset()
	ctx.ResetUserValues()
	stdCtxs.Put(ctx)
	c.reset(nil)
	stdConns.Put(c)
}

var (
	stdCtxs  = sync.Pool{New: func() any { return new(fasthttp.RequestCtx) }}
	stdConns = sync.Pool{New: func() any { c := new(stdConn); c.asTLS.stdConn = c; return c }}
)

// copyRequest returns the cookie fields joined, as sent: fasthttp keeps only
// its own parse of them.
func copyRequest(req *fasthttp.Request, r *http.Request) (cookie string) {
	req.Header.SetMethod(r.Method)
	req.Header.SetProtocol(stdProto(r))
	req.SetRequestURI(r.RequestURI)
	req.Header.SetHost(r.Host)
	var cookies []string
	for name, values := range r.Header {
		switch name {
		case "Host", "Content-Length", "Transfer-Encoding":
			continue
		case "Cookie":
			// RFC 9113 §8.2.3: HTTP/2 may split the cookie header in several fields.
			cookies = append(cookies, values...)
			continue
		}
		for _, v := range values {
			req.Header.Add(name, v)
		}
	}
	if len(cookies) > 0 {
		cookie = strings.Join(cookies, "; ")
		req.Header.Set("Cookie", cookie)
	}
	switch {
	case r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0:
	case r.ContentLength > 0:
		req.SetBodyStream(r.Body, int(r.ContentLength))
	default:
		// Length unknown (an HTTP/2 body without content-length): read to EOF.
		// The chunked marker fasthttp records for it is not the client's header.
		req.SetBodyStream(r.Body, -1)
		req.Header.Del("Transfer-Encoding")
	}
	return cookie
}

func stdProto(r *http.Request) string {
	switch r.ProtoMajor {
	case 2:
		return "HTTP/2.0"
	case 3:
		return "HTTP/3.0"
	}
	return r.Proto
}

// writeStd sends the answer Serve left in ctx.Response.
func (h *stdHandler) writeStd(w http.ResponseWriter, r *http.Request, ctx *fasthttp.RequestCtx) {
	resp := &ctx.Response
	hdr := w.Header()
	resp.Header.VisitAll(func(k, v []byte) {
		switch string(k) {
		case "Connection":
			// HTTP/2 has no connection header; over HTTP/1.1 a close the
			// front asked for (a rejected request) still closes.
			if r.ProtoMajor == 1 {
				hdr.Set("Connection", "close")
			}
			return
		case "Transfer-Encoding", "Keep-Alive", "Date":
			return
		}
		hdr.Add(string(k), string(v))
	})
	if hdr.Get("Server") == "" {
		hdr.Set("Server", "ferry")
	}
	h.setWriteDeadline(w)
	w.WriteHeader(resp.StatusCode())
	if r.Method == http.MethodHead {
		return
	}
	if !resp.IsBodyStream() {
		w.Write(resp.Body())
		return
	}
	// A streamed body (a file answer, a stream from PHP) goes out as it is
	// read, each part flushed, and is closed after (files, pipes).
	src := resp.BodyStream()
	buf := copyBufs.Get().(*[]byte)
	flusher, _ := w.(http.Flusher)
	for {
		n, err := src.Read(*buf)
		if n > 0 {
			// write_timeout holds for each part, as on the HTTP/1.1 front: an
			// event stream lasts longer than one write.
			h.setWriteDeadline(w)
			if _, werr := w.Write((*buf)[:n]); werr != nil {
				break
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil {
			break
		}
	}
	copyBufs.Put(buf)
	if c, ok := src.(io.Closer); ok {
		c.Close()
	}
	resp.ResetBody() // the stream is closed already; Reset must not close it again
}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// stdConn stands for the client connection of a request net/http read: it
// gives the request's remote address and, through the request's context,
// whether the client is still there. Nothing is read or written through it.
type stdConn struct {
	asTLS  stdTLSConn // this connection seen as TLS
	w      http.ResponseWriter
	remote net.Addr
	local  net.Addr
	ctx    context.Context
	tls    *tls.ConnectionState
	hosts  []string // the request's Host field lines
	cookie string   // the request's Cookie fields, joined
}

// stdTLSConn is the same over TLS: fasthttp's IsTLS looks for these methods,
// and the request then reaches PHP with the https scheme.
type stdTLSConn struct{ *stdConn }

func (c *stdConn) reset(r *http.Request) {
	if r == nil {
		*c = stdConn{asTLS: c.asTLS}
		return
	}
	c.remote = stdAddr(r.RemoteAddr)
	c.local, _ = r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if c.local == nil {
		c.local = stdAddr("")
	}
	c.ctx = r.Context()
	c.tls = r.TLS
	c.hosts = r.Header["Host"]
}

type stdAddr string

func (a stdAddr) Network() string { return "tcp" }
func (a stdAddr) String() string  { return string(a) }

func (c *stdConn) Read([]byte) (int, error)         { return 0, io.EOF }
func (c *stdConn) Write(b []byte) (int, error)      { return 0, net.ErrClosed }
func (c *stdConn) Close() error                     { return nil }
func (c *stdConn) LocalAddr() net.Addr              { return c.local }
func (c *stdConn) RemoteAddr() net.Addr             { return c.remote }
func (c *stdConn) SetDeadline(time.Time) error      { return nil }
func (c *stdConn) SetReadDeadline(time.Time) error  { return nil }
func (c *stdConn) SetWriteDeadline(time.Time) error { return nil }

func (c *stdTLSConn) Handshake() error                     { return nil }
func (c *stdTLSConn) ConnectionState() tls.ConnectionState { return *c.tls }
