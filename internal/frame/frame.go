// Package frame implements the Goridge v3 frame: a 12-byte header, up to ten
// uint32 options and a payload. The layout is documented in docs/protocol.md and
// shared with the PHP SDK through testdata/frames.json.
package frame

import (
	"encoding/binary"
	"hash/crc32"
)

// Version is the only protocol version Ferry speaks.
const Version = 1

// Frame flags (byte 1).
const (
	Control  byte = 0x01
	CodecRaw byte = 0x04
	JSON     byte = 0x08
	MsgPack  byte = 0x10
	Gob      byte = 0x20
	Error    byte = 0x40
	Proto    byte = 0x80
)

// Stream flags (byte 10).
const (
	Stream byte = 0x01
	Stop   byte = 0x02
	Ping   byte = 0x04
	Pong   byte = 0x08
	// Finishing, on a Ferry answer: the worker runs after-response work (terminate
	// hooks) and sends a Finished control frame when it is done.
	Finishing byte = 0x10
)

// Finished is the control payload that ends a Finishing answer's after-response work.
var Finished = []byte(`{"finished":true}`)

const (
	// HeaderSize is the fixed part of every frame, options excluded.
	HeaderSize = 12
	// MaxOptions is what fits in the 4-bit header-length nibble (15 words) less
	// the three fixed words; Goridge caps it at 10.
	MaxOptions = 10
)

// Frame is one decoded frame. Payload aliases the decoder's memory only until the
// next call on the same decoder when produced by Parse; Reader hands out fresh slices.
type Frame struct {
	Flags   byte
	Stream  byte
	Options []uint32
	Payload []byte
}

// Size is the encoded length of a frame with n options and a payload of p bytes.
func Size(n, p int) int { return HeaderSize + 4*n + p }

// Append encodes f at the end of dst. The payload may be given in parts so callers
// can join a context and a body without an intermediate copy.
func Append(dst []byte, flags, stream byte, options []uint32, payload ...[]byte) []byte {
	if len(options) > MaxOptions {
		panic("frame: more than 10 options")
	}
	n := 0
	for _, p := range payload {
		n += len(p)
	}
	start := len(dst)
	dst = append(dst, make([]byte, HeaderSize)...)
	h := dst[start:]
	h[0] = Version<<4 | byte(3+len(options))
	h[1] = flags
	binary.LittleEndian.PutUint32(h[2:6], uint32(n))
	binary.LittleEndian.PutUint32(h[6:10], crc32.ChecksumIEEE(h[:6]))
	h[10] = stream
	h[11] = 0
	for _, o := range options {
		dst = binary.LittleEndian.AppendUint32(dst, o)
	}
	for _, p := range payload {
		dst = append(dst, p...)
	}
	return dst
}

// header is the validated fixed part of a frame.
type header struct {
	flags, stream byte
	options       int
	length        uint32
}

// parseHeader checks the 12 fixed bytes against every rule that can be checked
// before reading further, so a hostile length is refused before any allocation.
func parseHeader(h []byte, max uint32) (header, error) {
	if v := h[0] >> 4; v != Version {
		return header{}, &DecodeError{Kind: ErrVersion, Detail: versionDetail(v, h)}
	}
	words := int(h[0] & 0x0f)
	if words < 3 || words-3 > MaxOptions {
		return header{}, &DecodeError{Kind: ErrOptions, Detail: optionsDetail(words)}
	}
	want := binary.LittleEndian.Uint32(h[6:10])
	if got := crc32.ChecksumIEEE(h[:6]); got != want {
		return header{}, &DecodeError{Kind: ErrCRC, Detail: crcDetail(want, got)}
	}
	n := binary.LittleEndian.Uint32(h[2:6])
	if n > max {
		return header{}, &DecodeError{Kind: ErrTooLarge, Detail: sizeDetail(n, max)}
	}
	return header{flags: h[1], stream: h[10], options: words - 3, length: n}, nil
}

// Parse decodes one frame from the start of buf and returns the number of bytes
// used. Incomplete input yields a *DecodeError of kind ErrTruncated.
func Parse(buf []byte, max uint32) (Frame, int, error) {
	if len(buf) < HeaderSize {
		return Frame{}, 0, &DecodeError{Kind: ErrTruncated, Detail: "header needs 12 bytes"}
	}
	h, err := parseHeader(buf[:HeaderSize], max)
	if err != nil {
		return Frame{}, 0, err
	}
	total := Size(h.options, int(h.length))
	if len(buf) < total {
		return Frame{}, 0, &DecodeError{Kind: ErrTruncated, Detail: truncDetail(total, len(buf))}
	}
	f := Frame{Flags: h.flags, Stream: h.stream, Payload: buf[HeaderSize+4*h.options : total]}
	if h.options > 0 {
		f.Options = make([]uint32, h.options)
		for i := range f.Options {
			f.Options[i] = binary.LittleEndian.Uint32(buf[HeaderSize+4*i:])
		}
	}
	return f, total, nil
}
