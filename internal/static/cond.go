package static

import (
	"bytes"
	"math"
	"time"

	"github.com/valyala/fasthttp"
)

// preconditions evaluates the request's validators against the file in the
// order of RFC 9110 section 13.2.2 and returns 0 to go on, or 304 or 412.
// If-None-Match, when present, decides alone: If-Modified-Since is then ignored.
func preconditions(h *fasthttp.RequestHeader, etag string, mtime time.Time) int {
	mod := mtime.Truncate(time.Second)
	if v := h.Peek(fasthttp.HeaderIfMatch); len(v) > 0 {
		if !etagListMatch(v, etag, true) {
			return fasthttp.StatusPreconditionFailed
		}
	} else if v := h.Peek(fasthttp.HeaderIfUnmodifiedSince); len(v) > 0 {
		if t, err := fasthttp.ParseHTTPDate(v); err == nil && mod.After(t) {
			return fasthttp.StatusPreconditionFailed
		}
	}
	if v := h.Peek(fasthttp.HeaderIfNoneMatch); len(v) > 0 {
		if etagListMatch(v, etag, false) {
			return fasthttp.StatusNotModified
		}
		return 0
	}
	if v := h.Peek(fasthttp.HeaderIfModifiedSince); len(v) > 0 {
		if t, err := fasthttp.ParseHTTPDate(v); err == nil && !mod.After(t) {
			return fasthttp.StatusNotModified
		}
	}
	return 0
}

// etagListMatch reports whether the list of entity tags (or "*") holds etag,
// which is strong. Strong comparison refuses weak tags; weak comparison
// ignores the W/ mark.
func etagListMatch(list []byte, etag string, strong bool) bool {
	list = bytes.TrimSpace(list)
	if string(list) == "*" {
		return true
	}
	for len(list) > 0 {
		list = bytes.TrimLeft(list, " \t,")
		weak := bytes.HasPrefix(list, []byte("W/"))
		if weak {
			list = list[2:]
		}
		if len(list) == 0 || list[0] != '"' {
			return false // malformed: match nothing
		}
		end := bytes.IndexByte(list[1:], '"')
		if end < 0 {
			return false
		}
		tag := list[:end+2]
		list = list[end+2:]
		if string(tag) == etag && !(strong && weak) {
			return true
		}
	}
	return false
}

// byteRange reads a GET's Range and If-Range headers: it returns the whole
// file with 200, one range with 206, or 416 when the range starts past the end.
// A malformed Range, a unit other than bytes, several ranges, or an If-Range
// that no longer matches give the whole file, as RFC 9110 allows.
func byteRange(h *fasthttp.RequestHeader, etag string, meta fileMeta) (start, n int64, status int) {
	size := meta.size
	whole := func() (int64, int64, int) { return 0, size, fasthttp.StatusOK }
	spec := h.Peek(fasthttp.HeaderRange)
	if len(spec) == 0 {
		return whole()
	}
	if v := h.Peek(fasthttp.HeaderIfRange); len(v) > 0 && !ifRangeMatch(v, etag, meta) {
		return whole()
	}
	const unit = "bytes="
	if len(spec) < len(unit) || !bytes.EqualFold(spec[:len(unit)], []byte(unit)) {
		return whole()
	}
	spec = bytes.Trim(spec[len(unit):], " \t")
	dash := bytes.IndexByte(spec, '-')
	if dash < 0 || bytes.IndexByte(spec, ',') >= 0 {
		return whole()
	}
	first, last := spec[:dash], spec[dash+1:]
	if len(first) == 0 { // suffix: the last bytes
		k, ok := digits(last)
		if !ok {
			return whole()
		}
		if k == 0 || size == 0 {
			return 0, 0, fasthttp.StatusRequestedRangeNotSatisfiable
		}
		k = min(k, size)
		return size - k, k, fasthttp.StatusPartialContent
	}
	a, ok := digits(first)
	if !ok {
		return whole()
	}
	b := int64(math.MaxInt64)
	if len(last) > 0 {
		if b, ok = digits(last); !ok || b < a {
			return whole()
		}
	}
	if a >= size {
		return 0, 0, fasthttp.StatusRequestedRangeNotSatisfiable
	}
	b = min(b, size-1)
	return a, b - a + 1, fasthttp.StatusPartialContent
}

// digits parses a non-empty decimal number; values beyond int64 saturate,
// which still orders them correctly against any file size.
func digits(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			n = math.MaxInt64
			continue
		}
		n = n*10 + d
	}
	return n, true
}

// ifRangeMatch: an entity tag must match strongly, a date exactly.
func ifRangeMatch(v []byte, etag string, meta fileMeta) bool {
	v = bytes.TrimSpace(v)
	if len(v) > 0 && (v[0] == '"' || bytes.HasPrefix(v, []byte("W/"))) {
		return string(v) == etag
	}
	t, err := fasthttp.ParseHTTPDate(v)
	return err == nil && t.Equal(meta.mtime.Truncate(time.Second))
}
