package frame

import (
	"bufio"
	"errors"
	"io"
)

// chunk bounds how much a payload buffer grows ahead of the bytes that actually
// arrived, so a forged length costs at most this much memory before EOF shows it.
const chunk = 1 << 20

// Small payloads and every option list are cut from blocks shared by
// consecutive frames: one allocation serves dozens of answers instead of two
// per answer. Each slice is capped at its own length, so an append never runs
// into a neighbour, and a block lives as long as any frame cut from it: a
// payload kept by a slow client pins at most one block, which is why blocks
// stay small and larger payloads get their own memory.
const (
	blockSize  = 4 << 10
	smallFrame = 512
	optBlock   = 256
)

// Reader reads frames from a stream. It is not safe for concurrent use.
type Reader struct {
	br    *bufio.Reader
	max   uint32
	block []byte               // what is left of the current payload block
	opts  []uint32             // what is left of the current option block
	ob    [4 * MaxOptions]byte // an array on the stack would escape through io.ReadFull
}

// NewReader reads frames from r, refusing payloads larger than max bytes.
func NewReader(r io.Reader, max uint32) *Reader {
	return &Reader{br: bufio.NewReaderSize(r, 64<<10), max: max}
}

// Read returns the next frame; the payload is a fresh slice owned by the caller.
// On a malformed header the error is a *DecodeError whose Raw holds the bytes read.
func (r *Reader) Read() (Frame, error) {
	h, err := r.br.Peek(HeaderSize)
	if err != nil {
		if len(h) > 0 && errors.Is(err, io.EOF) {
			return Frame{}, &DecodeError{Kind: ErrTruncated, Detail: truncDetail(HeaderSize, len(h)), Raw: append([]byte(nil), h...)}
		}
		return Frame{}, err
	}
	hd, err := parseHeader(h, r.max)
	if err != nil {
		var fe *DecodeError
		if errors.As(err, &fe) {
			fe.Raw = append([]byte(nil), h...)
		}
		return Frame{}, err
	}
	r.br.Discard(HeaderSize)
	f := Frame{Flags: hd.flags, Stream: hd.stream}
	if hd.options > 0 {
		ob := r.ob[:4*hd.options]
		if _, err := io.ReadFull(r.br, ob); err != nil {
			return Frame{}, unexpected(err)
		}
		f.Options = r.options(hd.options)
		for i := range f.Options {
			f.Options[i] = uint32(ob[4*i]) | uint32(ob[4*i+1])<<8 | uint32(ob[4*i+2])<<16 | uint32(ob[4*i+3])<<24
		}
	}
	n := int(hd.length)
	if n <= chunk {
		f.Payload = r.payload(n)
		if _, err := io.ReadFull(r.br, f.Payload); err != nil {
			return Frame{}, unexpected(err)
		}
		return f, nil
	}
	buf := make([]byte, 0, chunk)
	for len(buf) < n {
		step := min(n-len(buf), chunk)
		if cap(buf)-len(buf) < step {
			buf = append(buf[:cap(buf)], make([]byte, step)...)[:len(buf)]
		}
		if _, err := io.ReadFull(r.br, buf[len(buf):len(buf)+step]); err != nil {
			return Frame{}, unexpected(err)
		}
		buf = buf[:len(buf)+step]
	}
	f.Payload = buf
	return f, nil
}

func (r *Reader) payload(n int) []byte {
	if n > smallFrame {
		return make([]byte, n)
	}
	if len(r.block) < n {
		r.block = make([]byte, blockSize)
	}
	p := r.block[:n:n]
	r.block = r.block[n:]
	return p
}

func (r *Reader) options(n int) []uint32 {
	if len(r.opts) < n {
		r.opts = make([]uint32, optBlock)
	}
	o := r.opts[:n:n]
	r.opts = r.opts[n:]
	return o
}

// Buffered counts the bytes read past the last frame.
func (r *Reader) Buffered() int { return r.br.Buffered() }

// Rest exposes what was read past the last frame (used to quote garbage output).
func (r *Reader) Rest() []byte {
	b, _ := r.br.Peek(r.br.Buffered())
	return b
}

func unexpected(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}
