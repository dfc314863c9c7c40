package listen

import (
	"bytes"
	"errors"
)

// ErrMalformedHeader is what a Conn's Read returns for a header block with a
// line that is not a field: fasthttp hands it to its ErrorHandler, which
// answers 400.
var ErrMalformedHeader = errors.New("malformed HTTP request: a header line without a colon")

// maxHeadScan bounds the bytes a connection keeps while a header block arrives
// in pieces; beyond it fasthttp's own max_header_size answers 431 first.
const maxHeadScan = 64 << 10

// headCheck looks at the header block of each request as it is read. fasthttp
// treats a header line without a colon as "need more data" and waits until the
// read timeout; RFC 9112 says such a request is malformed. Only the first
// header block read after a response (or at connection start) is checked: the
// bytes that follow it are a body or a pipelined request, checked when fasthttp
// reads past the response that precedes them.
type headCheck struct {
	done bool // this request's header block has been seen whole
	// blocks counts the header blocks seen first after a response went out
	// (HeadBlocks).
	blocks uint64
	bad    bool   // and it held a line without a colon
	part   []byte // a header block that arrived in pieces so far
}

func (h *headCheck) arm() {
	h.done = false
	h.part = h.part[:0]
}

func (h *headCheck) scan(b []byte) {
	if h.done {
		return
	}
	if len(h.part) > 0 {
		h.part = append(h.part, b...)
		b = h.part
	}
	end := bytes.Index(b, []byte("\r\n\r\n"))
	if end < 0 {
		if len(h.part) == 0 {
			h.part = append(h.part, b...)
		}
		if len(h.part) > maxHeadScan {
			h.done = true
			h.blocks++
			h.part = h.part[:0]
		}
		return
	}
	h.done = true
	h.blocks++
	h.bad = headerLineWithoutColon(b[:end+2])
	h.part = h.part[:0]
}

// headerLineWithoutColon reports a line after the request line that has no
// colon and is not a folded continuation.
func headerLineWithoutColon(block []byte) bool {
	nl := bytes.IndexByte(block, '\n')
	if nl < 0 {
		return false
	}
	for rest := block[nl+1:]; len(rest) > 0; {
		nl = bytes.IndexByte(rest, '\n')
		if nl < 0 {
			return false
		}
		line := rest[:nl]
		rest = rest[nl+1:]
		if len(line) == 0 || line[0] == ' ' || line[0] == '\t' || (len(line) == 1 && line[0] == '\r') {
			continue
		}
		if bytes.IndexByte(line, ':') < 0 {
			return true
		}
	}
	return false
}
