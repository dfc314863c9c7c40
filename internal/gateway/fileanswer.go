package gateway

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/ferry-php/ferry/internal/protocol"
	"github.com/ferry-php/ferry/internal/static"
	"github.com/valyala/fasthttp"
)

// attach makes a file answer (docs/protocol.md, "file") the response body. With delete the file is unlinked
// as soon as it is open, so nothing is left behind whatever happens to the
// connection, and the worker may not touch it after answering.
func attach(ctx *fasthttp.RequestCtx, a *protocol.File, body []byte) error {
	if len(body) > 0 {
		return errors.New("an answer with a file has a body too")
	}
	if !filepath.IsAbs(a.Path) {
		return fmt.Errorf("answer file %q is not an absolute path", a.Path)
	}
	f, err := os.Open(a.Path)
	if a.Delete && err == nil {
		err = os.Remove(a.Path)
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		return fmt.Errorf("answer file: %w", err)
	}
	n, err := span(a, f)
	if err != nil {
		f.Close()
		return err
	}
	if ctx.IsHead() {
		f.Close()
		ctx.Response.Header.SetContentLength(int(n))
		return nil
	}
	ctx.Response.SetBodyStream(static.NewFileBody(f, n), int(n))
	return nil
}

// span checks the requested bytes against the open file and seeks to them.
func span(a *protocol.File, f *os.File) (int64, error) {
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if !st.Mode().IsRegular() {
		return 0, fmt.Errorf("answer file %q is not a regular file", a.Path)
	}
	size := st.Size()
	n := size - a.Offset
	if a.Length != nil {
		n = *a.Length
	}
	if a.Offset < 0 || n < 0 || a.Offset > size || n > size-a.Offset {
		return 0, fmt.Errorf("answer file %q: bytes %d+%d are past its size %d", a.Path, a.Offset, n, size)
	}
	if a.Offset > 0 {
		if _, err := f.Seek(a.Offset, io.SeekStart); err != nil {
			return 0, err
		}
	}
	return n, nil
}
