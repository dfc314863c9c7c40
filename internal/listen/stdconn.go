package listen

// What the request path asks of a RequestCtx's Conn when net/http read the
// request: its context, its ResponseWriter (for a 1xx), its Host and Cookie
// fields as sent. Everything else about such a request it reads from the
// RequestCtx, as for one fasthttp read.

import (
	"context"
	"net"
	"net/http"
	"strings"
)

// IsStd reports a request net/http read: the RequestCtx's Conn is the shim's.
func IsStd(c net.Conn) bool {
	_, ok := StdContext(c)
	return ok
}

// StdWriter is the ResponseWriter of a request net/http read, or nil.
func StdWriter(c net.Conn) http.ResponseWriter {
	switch sc := c.(type) {
	case *stdConn:
		return sc.w
	case *stdTLSConn:
		return sc.w
	}
	return nil
}

// WriteStdInformational sends a 1xx (103 Early Hints) through net/http, on
// HTTP/2 as a HEADERS frame. head is the HTTP/1.1 form informational() built
// and checked; its fields must not stay for the final response.
func WriteStdInformational(w http.ResponseWriter, status int, head []byte) error {
	lines := strings.Split(strings.TrimSuffix(string(head), "\r\n\r\n"), "\r\n")
	hdr := w.Header()
	var names []string
	for _, l := range lines[1:] {
		k, v, _ := strings.Cut(l, ": ")
		hdr.Add(k, v)
		names = append(names, k)
	}
	w.WriteHeader(status)
	for _, k := range names {
		hdr.Del(k)
	}
	return nil
}

// StdContext is what a job waits under for a request net/http read: the
// request's context ends when the client resets the stream or closes the
// connection, never because the server drains.
func StdContext(c net.Conn) (context.Context, bool) {
	switch sc := c.(type) {
	case *stdConn:
		return sc.ctx, true
	case *stdTLSConn:
		return sc.ctx, true
	}
	return nil, false
}

// StdHostLines are the Host field lines net/http left in the header (HTTP/2
// only: its HTTP/1 server removes them).
func StdHostLines(c net.Conn) []string {
	switch sc := c.(type) {
	case *stdConn:
		return sc.hosts
	case *stdTLSConn:
		return sc.hosts
	}
	return nil
}

// StdCookie is the Cookie field lines of a request net/http read, joined as
// sent; ok is false for any other connection.
func StdCookie(c net.Conn) (cookie string, ok bool) {
	switch sc := c.(type) {
	case *stdConn:
		return sc.cookie, true
	case *stdTLSConn:
		return sc.cookie, true
	}
	return "", false
}
