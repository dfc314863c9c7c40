package gateway

import (
	"bytes"
	"sync"

	"github.com/ferry-php/ferry/internal/multipart"
	"github.com/ferry-php/ferry/internal/protocol"
	"github.com/valyala/fasthttp"
)

// protoFront is the Handler as its protocol sees it (protocol.Front): a pointer
// conversion, so handing it over allocates nothing.
type protoFront Handler

// Client is the client as the trusted proxies report it.
func (f *protoFront) Client(ctx *fasthttp.RequestCtx, host []byte) (string, []byte, bool) {
	h := (*Handler)(f)
	remote, tls := remoteAddr(ctx), ctx.IsTLS()
	if len(h.opt.TrustedProxies) > 0 {
		return h.forwarded(ctx, remote, host, tls)
	}
	return remote, host, tls
}

// AppendPHP builds the job context described in docs/protocol.md, which Ferry's
// protocol sends; the cookie and header rules are the front's.
func (f *protoFront) AppendPHP(buf []byte, r protocol.Request) []byte {
	return (*Handler)(f).encodeRequest(buf, r.Ctx, r.Form, r.Files, r.Multipart, r.BodyFile)
}

// encodeRequest builds the job context described in docs/protocol.md. Fields
// holding their documented default (no query, HTTP/1.1, http, no cookies, no
// multipart) are left out: unserialize() then builds a smaller array, about
// 40% less of the worker's decoding time on a plain GET.
func (h *Handler) encodeRequest(buf []byte, ctx *fasthttp.RequestCtx, form [][2]string, files []multipart.Upload, parsed bool, bodyFile string) []byte {
	req := &ctx.Request
	path, query, host := target(req)
	protocol := req.Header.Protocol()
	http11 := string(protocol) == "HTTP/1.1"
	remote, host, tls := (*protoFront)(h).Client(ctx, host)
	l := scratchLists.Get().(*lists)
	defer l.release()
	l.raw = rawCookie(l.raw[:0], ctx)
	cookies, tree := h.parseCookies(l)
	hasCookies := len(cookies) > 0
	if tree != nil {
		hasCookies = tree.root.leaves() > 0
	}

	n := 6 // method, uri, path, remote_addr, host, headers
	for _, present := range [...]bool{len(query) > 0, !http11, tls, hasCookies, len(form) > 0, len(files) > 0, parsed, bodyFile != ""} {
		if present {
			n++
		}
	}
	b := phpArray(buf).open(n)
	b = b.key(`s:6:"method";`).bytes(req.Header.Method())
	b = b.key(`s:3:"uri";`).bytes(req.Header.RequestURI())
	b = b.key(`s:4:"path";`).bytes(path)
	if len(query) > 0 {
		b = b.key(`s:5:"query";`).bytes(query)
	}
	if !http11 {
		b = b.key(`s:8:"protocol";`).bytes(protocol)
	}
	b = b.key(`s:11:"remote_addr";`).str(remote)
	b = b.key(`s:4:"host";`).bytes(host)
	if tls {
		b = b.key(`s:6:"scheme";s:5:"https";`)
	}
	b = appendHeaders(b.key(`s:7:"headers";`), &req.Header, l)
	if hasCookies {
		b = appendCookies(b.key(`s:7:"cookies";`), cookies, tree)
	}
	if len(form) > 0 {
		b = b.key(`s:4:"form";`).open(len(form))
		for i, kv := range form {
			b = b.int(int64(i)).open(2).int(0).str(kv[0]).int(1).str(kv[1]).close()
		}
		b = b.close()
	}
	if len(files) > 0 {
		b = b.key(`s:5:"files";`).open(len(files))
		for i, f := range files {
			b = b.int(int64(i)).open(6).int(0).str(f.Field).int(1).str(f.Name).int(2).str(f.Type).
				int(3).str(f.Path).int(4).int(int64(f.ErrCode)).int(5).int(f.Size).close()
		}
		b = b.close()
	}
	if parsed {
		b = b.key(`s:6:"parsed";b:1;`)
	}
	if bodyFile != "" {
		b = b.key(`s:9:"body_file";`).str(bodyFile)
	}
	return b.close()
}

// remoteAddr is formatted once per connection, not once per request.
func remoteAddr(ctx *fasthttp.RequestCtx) string {
	if c, ok := ctx.Conn().(*conn); ok {
		return c.remote
	}
	return ctx.RemoteAddr().String()
}

// smallGroup is where grouping by comparing with every earlier entry stops
// being cheaper than a map. Past it the cost must stay linear: a request may
// carry thousands of empty headers or cookies within the size limits.
const smallGroup = 16

type kv struct{ k, v []byte }

// lists is where a request's headers and cookies are gathered. Reused through
// a pool: as arrays on the stack they were zeroed, several KiB, per request.
type lists struct {
	headers                  [48]kv
	cookies                  [32][2][]byte
	usedHeaders, usedCookies int
	raw                      []byte // the Cookie header as sent
}

var scratchLists = sync.Pool{New: func() any { return new(lists) }}

// release drops the references to the request's bytes before the lists go
// back to the pool.
func (l *lists) release() {
	clear(l.headers[:min(l.usedHeaders, len(l.headers))])
	clear(l.cookies[:min(l.usedCookies, len(l.cookies))])
	l.usedHeaders, l.usedCookies = 0, 0
	if cap(l.raw) > 16<<10 {
		l.raw = nil // one huge header must not stay pinned in the pool
	}
	scratchLists.Put(l)
}

// appendHeaders groups repeated headers into lists, in first-seen order.
func appendHeaders(b phpArray, h *fasthttp.RequestHeader, l *lists) phpArray {
	all := l.headers[:0]
	cookie := len(l.raw) > 0
	h.VisitAll(func(k, v []byte) {
		if cookie && string(k) == fasthttp.HeaderCookie {
			// fasthttp's is rebuilt from its own cookie list, absent when
			// that is empty ("Cookie: =").
			v, cookie = l.raw, false
		}
		all = append(all, kv{k, v})
	})
	if cookie {
		all = append(all, kv{[]byte(fasthttp.HeaderCookie), l.raw})
	}
	l.usedHeaders = len(all)
	if len(all) > smallGroup {
		return appendHeadersMap(b, all)
	}
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

func appendHeadersMap(b phpArray, all []kv) phpArray {
	groups := make(map[string][]int, len(all))
	var order []string
	for i, e := range all {
		k := string(e.k)
		if _, seen := groups[k]; !seen {
			order = append(order, k)
		}
		groups[k] = append(groups[k], i)
	}
	b = b.open(len(order))
	for _, k := range order {
		b = b.str(k).open(len(groups[k]))
		for n, i := range groups[k] {
			b = b.int(int64(n)).bytes(all[i].v)
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
