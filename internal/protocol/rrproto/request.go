package rrproto

import (
	"bytes"
	"net"
	"net/url"

	"github.com/ferry-php/ferry/internal/multipart"
	"github.com/ferry-php/ferry/internal/protocol"
	"github.com/valyala/fasthttp"
)

// EncodeRequest sends the request as RoadRunner's http plugin does: as
// http.v1.Request (or JSON), with form fields as a JSON tree in the body and
// uploads as a JSON tree in the context.
func (p *Protocol) EncodeRequest(buf []byte, r protocol.Request) (jobCtx, data []byte, err error) {
	var (
		fields = &formTree{}
		files  *formTree
		parsed bool
	)
	data = r.Body
	ct := r.Ctx.Request.Header.ContentType()
	switch {
	case noBody(r.Ctx.Request.Header.Method()):
	case r.Multipart:
		for _, kv := range r.Form {
			fields.mount(kv[0], kv[1])
		}
		files = uploadTree(r.Files)
		parsed = true
	case bytes.Contains(ct, []byte("application/x-www-form-urlencoded")):
		raw, err := r.Bytes()
		if err != nil {
			return buf, nil, err
		}
		parseForm(fields, raw)
		parsed = true
	case r.BodyFile != "":
		if data, err = r.Bytes(); err != nil {
			return buf, nil, err
		}
	}
	if p.codec == JSON {
		jobCtx = jsonContext(buf, r, files, parsed)
	} else {
		jobCtx = protoContext(buf, r, files, parsed)
	}
	if parsed {
		data = fields.appendJSON(nil)
	}
	return jobCtx, data, nil
}

// uploadTree shapes the spooled files as RoadRunner's uploads tree. A file
// input left empty comes as UPLOAD_ERR_NO_FILE, as PHP reports it.
func uploadTree(ups []multipart.Upload) *formTree {
	if len(ups) == 0 {
		return nil
	}
	t := &formTree{}
	for _, u := range ups {
		name := u.Name
		if i := lastSlash(name); i >= 0 {
			name = name[i+1:]
		}
		t.mount(u.Field, rrFile{name: name, mime: u.Type, tmp: u.Path, size: u.Size, errCode: u.ErrCode})
	}
	return t
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' || s[i] == '\\' {
			return i
		}
	}
	return -1
}

// parseForm reads an urlencoded body into t; pairs that do not decode are
// skipped, as PHP skips them.
func parseForm(t *formTree, raw []byte) {
	for len(raw) > 0 {
		var pair []byte
		pair, raw, _ = bytes.Cut(raw, []byte("&"))
		if len(pair) == 0 {
			continue
		}
		k, v, _ := bytes.Cut(pair, []byte("="))
		key, err1 := url.QueryUnescape(string(k))
		val, err2 := url.QueryUnescape(string(v))
		if err1 != nil || err2 != nil {
			continue
		}
		t.mount(key, val)
	}
}

// common holds what both encodings of the context share.
type common struct {
	remote, uri []byte
	cookies     [][2][]byte
}

func commonOf(r protocol.Request, buf []byte) common {
	req := &r.Ctx.Request
	remote, host, tls := r.Front.Client(r.Ctx, req.Host())
	// RoadRunner gives the address without the port, and the URI whole.
	if ip, _, err := net.SplitHostPort(remote); err == nil {
		remote = ip
	}
	start := len(buf)
	if tls {
		buf = append(buf, "https://"...)
	} else {
		buf = append(buf, "http://"...)
	}
	buf = append(buf, host...)
	buf = append(buf, req.Header.RequestURI()...)
	var c common
	c.remote = []byte(remote)
	c.uri = buf[start:]
	var arr [32][2][]byte
	c.cookies = cookies(arr[:0], &req.Header)
	return c
}

// rrCookies are the cookies as RoadRunner's Go side reads them (net/http's
// parse, quotes off, no name without "="), not PHP's $_COOKIE: a RoadRunner
// worker gets a flat name => value map and uses it as it is. The first of two
// equal names wins.
func cookies(all [][2][]byte, h *fasthttp.RequestHeader) [][2][]byte {
	var seen map[string]struct{}
	h.VisitAllCookie(func(k, v []byte) {
		if len(k) > 0 {
			all, seen = addFirst(all, seen, k, v)
		}
	})
	return all
}

// addFirst appends a pair unless one of the same name came first: a scan of
// the few pairs a request usually has, a set once there are smallGroup.
func addFirst(all [][2][]byte, seen map[string]struct{}, k, v []byte) ([][2][]byte, map[string]struct{}) {
	if seen != nil {
		if _, dup := seen[string(k)]; dup {
			return all, seen
		}
		seen[string(k)] = struct{}{}
		return append(all, [2][]byte{k, v}), seen
	}
	for _, c := range all {
		if bytes.Equal(c[0], k) {
			return all, nil
		}
	}
	all = append(all, [2][]byte{k, v})
	if len(all) == smallGroup {
		seen = make(map[string]struct{}, 2*smallGroup)
		for _, c := range all {
			seen[string(c[0])] = struct{}{}
		}
	}
	return all, seen
}

// unescapeCookie is what RoadRunner hands PHP: the value URL-decoded, or no
// cookie when it does not decode.
func unescapeCookie(v []byte) ([]byte, bool) {
	if bytes.IndexByte(v, '%') < 0 && bytes.IndexByte(v, '+') < 0 {
		return v, true
	}
	s, err := url.QueryUnescape(string(v))
	return []byte(s), err == nil
}

// appendHeaders groups repeated headers into one entry each, in first-seen
// order, as http.Header holds them in RoadRunner.
func appendHeaders(buf []byte, hdr *fasthttp.RequestHeader) []byte {
	eachHeader(hdr, func(k []byte, vals [][]byte) {
		buf = AppendEntry(buf, ReqHeader, k, vals...)
	})
	return buf
}

// smallGroup is where grouping by comparing with every earlier entry stops
// being cheaper than a map: past it the cost stays linear, for a request may
// carry thousands of empty headers within the size limits.
const smallGroup = 16

type kv struct{ k, v []byte }

// eachHeader calls fn once per header name with all its values, in
// first-seen order. Past smallGroup headers a map replaces comparing with
// every earlier one, so the cost stays linear.
func eachHeader(hdr *fasthttp.RequestHeader, fn func(k []byte, vals [][]byte)) {
	var arr [48]kv
	all := arr[:0]
	hdr.VisitAll(func(k, v []byte) { all = append(all, kv{k, v}) })
	var vbuf [8][]byte
	if len(all) > smallGroup {
		groups := make(map[string][]int, len(all))
		var order []string
		for i, e := range all {
			if _, seen := groups[string(e.k)]; !seen {
				order = append(order, string(e.k))
			}
			groups[string(e.k)] = append(groups[string(e.k)], i)
		}
		for _, k := range order {
			vals := vbuf[:0]
			for _, i := range groups[k] {
				vals = append(vals, all[i].v)
			}
			fn(all[groups[k][0]].k, vals)
		}
		return
	}
	for i := range all {
		if seenBefore(all, i) {
			continue
		}
		vals := vbuf[:0]
		for j := i; j < len(all); j++ {
			if bytes.Equal(all[j].k, all[i].k) {
				vals = append(vals, all[j].v)
			}
		}
		fn(all[i].k, vals)
	}
}

func seenBefore(all []kv, i int) bool {
	for j := 0; j < i; j++ {
		if bytes.Equal(all[j].k, all[i].k) {
			return true
		}
	}
	return false
}
