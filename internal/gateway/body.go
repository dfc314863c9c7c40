package gateway

import (
	"bytes"
	"errors"
	"io"
	"os"
	"sync"

	"github.com/valyala/fasthttp"
)

// body is a request body as the job will carry it: in memory up to
// body_buffer_size, else in a temp file (nginx's client_body_buffer_size), so
// memory stays bounded by connections times that size whatever the uploads.
type body struct {
	mem  []byte
	file string // spooled body; removed by release
	buf  *[]byte
}

var bodyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// errBodyTooLarge answers 413.
var errBodyTooLarge = errors.New("request body larger than max_body_size")

// readBody takes the whole body off the connection, within max_body_size.
// fasthttp streams bodies (StreamRequestBody), so nothing is buffered for a
// request until this decides where it goes.
func (h *Handler) readBody(ctx *fasthttp.RequestCtx) (body, error) {
	src := ctx.RequestBodyStream()
	if src == nil {
		return body{mem: ctx.Request.Body()}, nil
	}
	max := h.opt.MaxBodySize
	if cl := ctx.Request.Header.ContentLength(); cl > 0 && int64(cl) > max {
		return body{}, errBodyTooLarge
	}
	b := body{buf: bodyBufs.Get().(*[]byte)}
	mem, err := readUpTo((*b.buf)[:0], src, h.opt.BodyBufferSize, max)
	*b.buf = mem[:0] // the pool keeps the grown buffer
	switch {
	case err == io.EOF:
		b.mem = mem
		return b, nil
	case err != nil:
		b.release()
		return body{}, err
	}
	f, err := os.CreateTemp(h.opt.Uploads.Dir, "ferry-body-*")
	if err != nil {
		b.release()
		return body{}, err
	}
	b.file = f.Name()
	_, err = f.Write(mem)
	if err == nil {
		var n int64
		n, err = io.Copy(f, io.LimitReader(src, max-int64(len(mem))+1))
		if err == nil && int64(len(mem))+n > max {
			err = errBodyTooLarge
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.release()
		return body{}, err
	}
	return b, nil
}

// readUpTo appends src to mem until EOF (returned as io.EOF) or until mem
// holds more than limit bytes (nil: the rest is for a file); 0 = no memory.
// More than max bytes in all is errBodyTooLarge.
func readUpTo(mem []byte, src io.Reader, limit, max int64) ([]byte, error) {
	for int64(len(mem)) < limit || (limit > 0 && len(mem) < cap(mem)) {
		if len(mem) == cap(mem) {
			mem = append(mem, 0)[:len(mem)]
		}
		n, err := src.Read(mem[len(mem):cap(mem)])
		mem = mem[:len(mem)+n]
		if int64(len(mem)) > max {
			return mem, errBodyTooLarge
		}
		if err != nil {
			return mem, err
		}
	}
	return mem, nil
}

// reader gives the body again, for the multipart parser.
func (b *body) reader() (io.Reader, func(), error) {
	if b.file == "" {
		return bytes.NewReader(b.mem), func() {}, nil
	}
	f, err := os.Open(b.file)
	if err != nil {
		return nil, nil, err
	}
	return f, func() { f.Close() }, nil
}

func (b *body) release() {
	if b.file != "" {
		os.Remove(b.file)
		b.file = ""
	}
	if b.buf != nil && cap(*b.buf) <= 1<<20 {
		bodyBufs.Put(b.buf)
	}
	b.buf = nil
	b.mem = nil
}
