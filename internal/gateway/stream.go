package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"

	"github.com/ferry-php/ferry/internal/listen"
	"github.com/ferry-php/ferry/internal/pool"
	"github.com/ferry-php/ferry/internal/protocol"
	"github.com/valyala/fasthttp"
)

// streamAnswer sends an answer the worker streams (docs/protocol.md,
// "Streamed answers"). Its parts open with heads: informational ones (1xx,
// Early Hints) go to the client at once, then the final head starts the
// response and every later part's body goes out as one chunk as soon as it
// arrives. A final head in the frame that ends the answer is an ordinary,
// buffered answer (a 103 before a normal response).
func (h *Handler) streamAnswer(ctx *fasthttp.RequestCtx, part pool.Result) {
	s := part.Stream
	last := false
	// The final part may be a whole answer naming a file (writeFinal).
	defer func() { part.Settle() }()
	for {
		status, err := h.proto.PartStatus(part.Context)
		if err == nil && len(part.Context) == 0 {
			err = errors.New("a streamed answer starts without a head (status and headers)")
		}
		if err == nil && status < 200 && last {
			err = fmt.Errorf("a streamed answer ends with the informational status %d and no final one", status)
		}
		if err != nil {
			if !last {
				s.Discard()
			}
			h.fail(ctx, fasthttp.StatusBadGateway, "the worker sent an invalid response", err)
			return
		}
		if status >= 200 {
			break
		}
		if err := h.informational(ctx, status, part.Context); err != nil {
			s.Discard()
			h.fail(ctx, fasthttp.StatusBadGateway, "the worker sent an invalid response", err)
			return
		}
		if part, last, err = s.Next(); err != nil {
			h.execFailed(ctx, err)
			return
		}
	}
	if last {
		h.writeFinal(ctx, part.Context, part.Body)
		return
	}
	file, err := h.proto.WriteAnswer(&ctx.Response, part.Context, nil)
	if err == nil && file != nil {
		err = errors.New("a streamed answer cannot name a file")
	}
	if err != nil {
		s.Discard()
		ctx.Response.Reset()
		h.fail(ctx, fasthttp.StatusBadGateway, "the worker sent an invalid response", err)
		return
	}
	if ctx.IsHead() {
		s.Discard()
		return
	}
	r := &streamBody{s: s, buf: part.Body, h: h, uri: string(ctx.RequestURI()), conn: ctx.Conn()}
	// A client that leaves while PHP is between parts (an idle event
	// stream) is noticed by the connection watch, not by a failed write.
	gone := jobContext(ctx.Conn())
	r.unwatch = context.AfterFunc(gone, s.Stop)
	r.gone = gone
	var body io.ReadCloser = r
	if h.gz != nil {
		if z := h.gz.Stream(ctx, streamParts{r}); z != nil {
			body = z
		}
	}
	if ctx.Request.Header.IsHTTP11() || listen.IsStd(ctx.Conn()) {
		// net/http's stacks send each read as it comes too (DATA frames on HTTP/2).
		ctx.Response.SetBodyStream(body, -1)
		return
	}
	// HTTP/1.0 has no chunked encoding: the body runs until the connection
	// closes. fasthttp only streams chunked, and skips a hijack on a
	// connection it closes, so the connection is taken over with the head
	// unwritten, and written here.
	ctx.Response.Header.SetContentLength(-2) // no Content-Length; Connection: close
	head := bytes.Replace(ctx.Response.Header.Header(), []byte("Transfer-Encoding: identity\r\n"), nil, 1)
	ctx.HijackSetNoResponse(true)
	ctx.Hijack(func(c net.Conn) {
		defer listen.RecoverConn(c, "writing a streamed answer")
		if _, err := c.Write(head); err == nil {
			io.Copy(struct{ io.Writer }{c}, body)
		}
		body.Close()
	})
}

// writeFinal is the tail of Serve for a complete answer.
func (h *Handler) writeFinal(ctx *fasthttp.RequestCtx, head, body []byte) {
	file, err := h.proto.WriteAnswer(&ctx.Response, head, body)
	if err == nil && file != nil {
		if err = attach(ctx, file, body); err == nil {
			return
		}
	}
	if err != nil {
		ctx.Response.Reset()
		h.fail(ctx, fasthttp.StatusBadGateway, "the worker sent an invalid response", err)
		return
	}
	if h.gz != nil {
		h.gz.Apply(ctx)
	}
}

// informational writes a 1xx response (103 Early Hints) ahead of the final
// one. HTTP/1.0 has no 1xx (RFC 9110 15.2), and fasthttp may still hold the
// previous response of a pipelining client in its buffer, where a 1xx written
// to the socket would overtake it: both are skipped, which a client must
// tolerate anyway. 101 would switch protocols and is refused.
func (h *Handler) informational(ctx *fasthttp.RequestCtx, status int, head []byte) error {
	if status == fasthttp.StatusSwitchingProtocols {
		return errors.New("a worker cannot answer 101 Switching Protocols")
	}
	b := append(make([]byte, 0, 256), "HTTP/1.1 "...)
	b = strconv.AppendInt(b, int64(status), 10)
	b = append(b, ' ')
	b = append(b, fasthttp.StatusMessage(status)...)
	b = append(b, "\r\n"...)
	err := h.proto.PartHeaders(head, func(k, v []byte) error {
		if err := protocol.CheckHeader(k, v); err != nil {
			return err
		}
		b = append(append(append(append(b, k...), ": "...), v...), "\r\n"...)
		return nil
	})
	if err != nil {
		return err
	}
	b = append(b, "\r\n"...)
	if w := listen.StdWriter(ctx.Conn()); w != nil {
		return listen.WriteStdInformational(w, status, b)
	}
	if !ctx.Request.Header.IsHTTP11() || !earlyWriteSafe(ctx) {
		return nil
	}
	_, err = ctx.Conn().Write(b)
	return err // a client gone now fails the final write as well
}

// earlyWriteSafe reports whether everything fasthttp answered before on this
// connection has left its buffer. It flushes after each response unless the
// next request had already been read, which happens only when a request
// arrives before the previous response went out: then that request's header
// block is never the first one read after a response (HeadBlocks counts those).
func earlyWriteSafe(ctx *fasthttp.RequestCtx) bool {
	n := ctx.ConnRequestNum()
	if n == 1 {
		return true
	}
	c, ok := ctx.Conn().(*conn)
	return ok && c.HeadBlocks() == n
}

// streamBody is the body of a streamed response: fasthttp reads it and sends
// each read as one chunk, flushed.
type streamBody struct {
	s       *pool.Stream
	h       *Handler
	uri     string
	buf     []byte
	done    bool
	err     error
	gone    *clientGone
	unwatch func() bool
	conn    net.Conn
}

func (r *streamBody) Read(p []byte) (int, error) {
	b, err := r.part()
	if err != nil {
		return 0, err
	}
	n := copy(p, b)
	r.buf = b[n:]
	return n, nil
}

// part takes what is left of the current part, waiting for the next one when
// it is used up; io.EOF after the last.
func (r *streamBody) part() ([]byte, error) {
	for len(r.buf) == 0 {
		if r.done {
			return nil, r.err
		}
		part, last, err := r.s.Next()
		switch {
		case err != nil:
			// Headers are out: only a truncated chunked body (no final
			// zero-length chunk) tells the client the answer is incomplete.
			r.done, r.err = true, err
			r.h.log.Warn("a streamed answer ended early", "uri", r.uri, "error", err)
			return nil, err
		case last:
			r.done, r.err = true, io.EOF
			part.Settle()
		}
		r.buf = part.Body
		if r.h.writeTimeout > 0 {
			// fasthttp gives the whole response write_timeout; an event
			// stream lasts longer, so each part gets it instead.
			r.conn.SetWriteDeadline(time.Now().Add(r.h.writeTimeout))
		}
	}
	b := r.buf
	r.buf = nil
	return b, nil
}

// Close is called by fasthttp once the response is written or its write
// failed: a stream not read to its end has lost its client.
func (r *streamBody) Close() error {
	r.unwatch()
	r.gone.release()
	if !r.done {
		r.done = true
		r.s.Discard()
	}
	return nil
}

// streamParts is a streamed answer as compress reads it, part by part.
type streamParts struct{ *streamBody }

func (p streamParts) Part() ([]byte, error) { return p.part() }
