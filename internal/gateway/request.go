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
	b = b.key(`s:6:"method";`).bytes(req.Header.Method())
	b = b.key(`s:3:"uri";`).bytes(req.Header.RequestURI())
	b = b.key(`s:4:"path";`).bytes(ctx.Path())
	b = b.key(`s:5:"query";`).bytes(req.URI().QueryString())
	b = b.key(`s:8:"protocol";`).bytes(req.Header.Protocol())
	b = b.key(`s:11:"remote_addr";`).str(remoteAddr(ctx))
	b = b.key(`s:4:"host";`).bytes(req.Host())
	if ctx.IsTLS() {
		b = b.key(`s:6:"scheme";s:5:"https";`)
	} else {
		b = b.key(`s:6:"scheme";s:4:"http";`)
	}
	b = appendHeaders(b.key(`s:7:"headers";`), &req.Header)
	b = appendCookies(b.key(`s:7:"cookies";`), &req.Header)

	b = b.key(`s:4:"form";`).open(len(form))
	for i, kv := range form {
		b = b.int(int64(i)).open(2).int(0).str(kv[0]).int(1).str(kv[1]).close()
	}
	b = b.close()

	b = b.key(`s:5:"files";`).open(len(files))
	for i, f := range files {
		b = b.int(int64(i)).open(6).int(0).str(f.field).int(1).str(f.name).int(2).str(f.ctype).
			int(3).str(f.path).int(4).int(0).int(5).int(f.size).close()
	}
	b = b.close()

	b = b.key(`s:6:"parsed";`).bool(parsed)
	return b.close()
}

// remoteAddr is formatted once per connection, not once per request.
func remoteAddr(ctx *fasthttp.RequestCtx) string {
	if c, ok := ctx.Conn().(*conn); ok {
		return c.remote
	}
	return ctx.RemoteAddr().String()
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
