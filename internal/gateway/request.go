package gateway

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

// upload is one spooled file part, sent as [field, client name, type, path, error, size].
type upload struct {
	field, name, ctype, path string
	size                     int64
}

// encodeRequest builds the job context described in docs/protocol.md.
func encodeRequest(buf []byte, ctx *fasthttp.RequestCtx, form [][2]string, files []upload, parsed bool) []byte {
	req := &ctx.Request
	b := phpArray(buf).open(13)
	b = b.str("method").bytes(req.Header.Method())
	b = b.str("uri").bytes(req.Header.RequestURI())
	b = b.str("path").bytes(ctx.Path())
	b = b.str("query").bytes(req.URI().QueryString())
	b = b.str("protocol").bytes(req.Header.Protocol())
	b = b.str("remote_addr").str(ctx.RemoteAddr().String())
	b = b.str("host").bytes(req.Host())
	if ctx.IsTLS() {
		b = b.kv("scheme", "https")
	} else {
		b = b.kv("scheme", "http")
	}
	b = appendHeaders(b.str("headers"), &req.Header)
	b = appendCookies(b.str("cookies"), &req.Header)

	b = b.str("form").open(len(form))
	for i, kv := range form {
		b = b.int(int64(i)).open(2).int(0).str(kv[0]).int(1).str(kv[1]).close()
	}
	b = b.close()

	b = b.str("files").open(len(files))
	for i, f := range files {
		b = b.int(int64(i)).open(6).int(0).str(f.field).int(1).str(f.name).int(2).str(f.ctype).
			int(3).str(f.path).int(4).int(0).int(5).int(f.size).close()
	}
	b = b.close()

	b = b.str("parsed").bool(parsed)
	return b.close()
}

// appendHeaders groups repeated headers into lists. fasthttp visits each line
// separately; requests carry a few dozen headers at most, so a quadratic
// grouping over a stack array beats building a map.
func appendHeaders(b phpArray, h *fasthttp.RequestHeader) phpArray {
	type kv struct{ k, v []byte }
	var arr [48]kv
	all := arr[:0]
	h.VisitAll(func(k, v []byte) { all = append(all, kv{k, v}) })
	distinct := 0
	for i := range all {
		if first(all, i, func(a, c kv) bool { return bytes.Equal(a.k, c.k) }) {
			distinct++
		}
	}
	b = b.open(distinct)
	for i := range all {
		if !first(all, i, func(a, c kv) bool { return bytes.Equal(a.k, c.k) }) {
			continue
		}
		n := 0
		for j := i; j < len(all); j++ {
			if bytes.Equal(all[j].k, all[i].k) {
				n++
			}
		}
		b = b.bytes(all[i].k).open(n)
		n = 0
		for j := i; j < len(all); j++ {
			if bytes.Equal(all[j].k, all[i].k) {
				b = b.int(int64(n)).bytes(all[j].v)
				n++
			}
		}
		b = b.close()
	}
	return b.close()
}

func first[T any](all []T, i int, eq func(a, b T) bool) bool {
	for j := 0; j < i; j++ {
		if eq(all[j], all[i]) {
			return false
		}
	}
	return true
}

// appendCookies fills what becomes $_COOKIE: the first occurrence of a name
// wins, as in PHP; values stay raw (PHP urldecodes them, as under FPM).
func appendCookies(b phpArray, h *fasthttp.RequestHeader) phpArray {
	type kv struct{ k, v []byte }
	var arr [32]kv
	all := arr[:0]
	h.VisitAllCookie(func(k, v []byte) {
		if len(k) == 0 {
			return
		}
		c := kv{k, v}
		all = append(all, c)
		if !first(all, len(all)-1, func(a, b kv) bool { return bytes.Equal(a.k, b.k) }) {
			all = all[:len(all)-1]
		}
	})
	b = b.open(len(all))
	for _, c := range all {
		b = b.bytes(c.k).bytes(c.v)
	}
	return b.close()
}
