package compress

import (
	"bytes"
	"io"

	"github.com/valyala/fasthttp"
)

// Source is a streamed answer: Part gives each part as PHP sent it, io.EOF
// after the last; Close ends the stream early or releases it.
type Source interface {
	Part() ([]byte, error)
	Close() error
}

// compressStream encodes a streamed body part by part, flushing the
// compressor after each, so that every part reaches the client as soon as
// PHP sent it (an event stream must not wait for the compressor's window to
// fill). A part costs a few bytes of flush marker; the dictionary carries over.
type compressStream struct {
	src     Source
	w       flushWriter
	release func()
	out     bytes.Buffer
	err     error
}

// Stream returns src compressed, when the response whose head is in ctx
// gets an encoding; nil when it goes as it is, src untouched.
func (k *Compressor) Stream(ctx *fasthttp.RequestCtx, src Source) io.ReadCloser {
	e := k.negotiate(ctx)
	if e == nil {
		return nil
	}
	encoded(&ctx.Response.Header, e)
	c := &compressStream{src: src}
	c.w, c.release = e.open(&c.out)
	return c
}

func (c *compressStream) Read(p []byte) (int, error) {
	for c.out.Len() == 0 {
		if c.err != nil {
			return 0, c.err
		}
		part, err := c.src.Part()
		switch {
		case err == io.EOF:
			c.err = c.w.Close() // the trailer: the stream's end
			if c.err == nil {
				c.err = io.EOF
			}
			c.free()
		case err != nil:
			// Headers are out: a body cut short of its trailer tells the
			// client the answer is incomplete.
			c.err = err
			c.free()
		default:
			if _, err := c.w.Write(part); err != nil {
				c.err = err
			} else if err := c.w.Flush(); err != nil {
				c.err = err
			}
		}
	}
	return c.out.Read(p)
}

func (c *compressStream) free() {
	if c.release != nil {
		c.release()
		c.release = nil
	}
}

func (c *compressStream) Close() error {
	c.free()
	return c.src.Close()
}
