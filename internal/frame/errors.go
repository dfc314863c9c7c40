package frame

import "fmt"

// Kind says which rule a frame broke; tests and callers switch on it.
type Kind string

const (
	ErrVersion   Kind = "version"
	ErrCRC       Kind = "crc"
	ErrOptions   Kind = "options"
	ErrTooLarge  Kind = "too_large"
	ErrTruncated Kind = "truncated"
)

// DecodeError is returned for every malformed frame. Raw keeps the first bytes seen so a
// worker that printed text instead of a frame can be quoted back to the user.
type DecodeError struct {
	Kind   Kind
	Detail string
	Raw    []byte
}

func (e *DecodeError) Error() string { return "frame: " + string(e.Kind) + ": " + e.Detail }

func versionDetail(v byte, h []byte) string {
	return fmt.Sprintf("version %d, want %d (first bytes %q)", v, Version, h)
}

func optionsDetail(words int) string {
	return fmt.Sprintf("header length %d words means %d options, allowed 0..%d", words, words-3, MaxOptions)
}

func crcDetail(want, got uint32) string {
	return fmt.Sprintf("header checksum %08x, computed %08x", want, got)
}

func sizeDetail(n, max uint32) string {
	return fmt.Sprintf("payload of %d bytes exceeds the maximum of %d", n, max)
}

func truncDetail(want, have int) string {
	return fmt.Sprintf("frame needs %d bytes, have %d", want, have)
}
