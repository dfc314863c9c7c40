package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"

	"github.com/ferry-php/ferry/internal/rrproto"
	"github.com/valyala/fasthttp"
)

// RRCodec selects RoadRunner's HTTP payloads for the workers (docs/roadrunner.md)
// and how the request context is encoded; 0 keeps Ferry's own.
type RRCodec uint8

const (
	// RRProto: http.v1.Request in protobuf, as RoadRunner 2023.3 and later send it.
	RRProto RRCodec = iota + 1
	// RRJSON: the JSON context of roadrunner-http before 3.5.
	RRJSON
)

// serveRR is Serve's second half for RoadRunner workers: the request goes as
// http.v1.Request (or JSON) with form fields as a JSON tree in the body and
// uploads as a JSON tree in the context, the way RoadRunner's http plugin
// sends them; the answer is http.v1.Response (or JSON) and the body.
func (h *Handler) serveRR(ctx *fasthttp.RequestCtx, b *body) {
	var (
		fields = &formTree{}
		files  *formTree
		parsed bool
		data   = b.mem
	)
	method := ctx.Request.Header.Method()
	noBody := string(method) == "HEAD" || string(method) == "OPTIONS"
	ct := ctx.Request.Header.ContentType()
	switch boundary := multipartBoundary(ct); {
	case noBody:
	case boundary != "":
		form, ups, err := h.multipart(b, boundary)
		defer removeUploads(ups)
		if err != nil {
			h.uploadFailed(ctx, err)
			return
		}
		for _, kv := range form {
			fields.mount(kv[0], kv[1])
		}
		files = uploadTree(ups)
		parsed = true
	case bytes.Contains(ct, []byte("application/x-www-form-urlencoded")):
		raw, err := b.bytes()
		if err != nil {
			h.fail(ctx, fasthttp.StatusInternalServerError, "request body could not be read", err)
			return
		}
		parseForm(fields, raw)
		parsed = true
	case b.file != "":
		var err error
		if data, err = b.bytes(); err != nil {
			h.fail(ctx, fasthttp.StatusInternalServerError, "request body could not be read", err)
			return
		}
	}
	bp := bufs.Get().(*[]byte)
	var jobCtx []byte
	if h.opt.RoadRunner == RRJSON {
		jobCtx = h.rrJSONContext((*bp)[:0], ctx, files, parsed)
	} else {
		jobCtx = h.rrProtoContext((*bp)[:0], ctx, files, parsed)
	}
	if parsed {
		data = fields.appendJSON(nil)
	}
	res, ok := h.execute(ctx, bp, jobCtx, data)
	if !ok {
		return
	}
	if res.Stream != nil {
		h.streamAnswer(ctx, res)
		return
	}
	h.writeFinal(ctx, res.Context, res.Body)
}

// bytes returns the whole body, reading it back from its spool file.
func (b *body) bytes() ([]byte, error) {
	if b.file == "" {
		return b.mem, nil
	}
	return os.ReadFile(b.file)
}

// uploadTree shapes the spooled files as RoadRunner's uploads tree. A file
// input left empty comes as UPLOAD_ERR_NO_FILE, as PHP reports it.
func uploadTree(ups []upload) *formTree {
	if len(ups) == 0 {
		return nil
	}
	t := &formTree{}
	for _, u := range ups {
		name := u.name
		if i := lastSlash(name); i >= 0 {
			name = name[i+1:]
		}
		t.mount(u.field, rrFile{name: name, mime: u.ctype, tmp: u.path, size: u.size, errCode: u.errCode})
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

// rrRequest holds what both encodings of the context share.
type rrRequest struct {
	remote, uri []byte
	cookies     [][2][]byte
}

func (h *Handler) rrCommon(ctx *fasthttp.RequestCtx, buf []byte) rrRequest {
	req := &ctx.Request
	remote, host, tls := remoteAddr(ctx), req.Host(), ctx.IsTLS()
	if len(h.opt.TrustedProxies) > 0 {
		remote, host, tls = h.forwarded(ctx, remote, host, tls)
	}
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
	var r rrRequest
	r.remote = []byte(remote)
	r.uri = buf[start:]
	var arr [32][2][]byte
	r.cookies = rrCookies(arr[:0], &req.Header)
	return r
}

// rrCookies are the cookies as RoadRunner's Go side reads them (net/http's
// parse, quotes off, no name without "="), not PHP's $_COOKIE: a RoadRunner
// worker gets a flat name => value map and uses it as it is. The first of two
// equal names wins.
func rrCookies(all [][2][]byte, h *fasthttp.RequestHeader) [][2][]byte {
	var seen firstNames
	h.VisitAllCookie(func(k, v []byte) {
		if len(k) > 0 {
			all = seen.add(all, k, v)
		}
	})
	return all
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

func (h *Handler) rrProtoContext(buf []byte, ctx *fasthttp.RequestCtx, files *formTree, parsed bool) []byte {
	req := &ctx.Request
	var scratch [256]byte
	r := h.rrCommon(ctx, scratch[:0])
	buf = rrproto.AppendString(buf, rrproto.ReqRemoteAddr, r.remote)
	buf = rrproto.AppendString(buf, rrproto.ReqProtocol, req.Header.Protocol())
	buf = rrproto.AppendString(buf, rrproto.ReqMethod, req.Header.Method())
	buf = rrproto.AppendString(buf, rrproto.ReqURI, r.uri)
	buf = appendRRHeaders(buf, &req.Header)
	for _, c := range r.cookies {
		if v, ok := unescapeCookie(c[1]); ok {
			buf = rrproto.AppendEntry(buf, rrproto.ReqCookies, c[0], v)
		}
	}
	buf = rrproto.AppendString(buf, rrproto.ReqRawQuery, req.URI().QueryString())
	buf = rrproto.AppendBool(buf, rrproto.ReqParsed, parsed)
	if files != nil {
		buf = rrproto.AppendString(buf, rrproto.ReqUploads, files.appendJSON(nil))
	}
	return buf
}

// appendRRHeaders groups repeated headers into one entry each, in first-seen
// order, as http.Header holds them in RoadRunner.
func appendRRHeaders(buf []byte, hdr *fasthttp.RequestHeader) []byte {
	eachHeader(hdr, func(k []byte, vals [][]byte) {
		buf = rrproto.AppendEntry(buf, rrproto.ReqHeader, k, vals...)
	})
	return buf
}

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
		if !first(all, i, func(a, c kv) bool { return bytes.Equal(a.k, c.k) }) {
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

func (h *Handler) rrJSONContext(buf []byte, ctx *fasthttp.RequestCtx, files *formTree, parsed bool) []byte {
	req := &ctx.Request
	var scratch [256]byte
	r := h.rrCommon(ctx, scratch[:0])
	buf = append(buf, `{"remoteAddr":`...)
	buf = appendJSONString(buf, string(r.remote))
	buf = append(buf, `,"protocol":`...)
	buf = appendJSONString(buf, string(req.Header.Protocol()))
	buf = append(buf, `,"method":`...)
	buf = appendJSONString(buf, string(req.Header.Method()))
	buf = append(buf, `,"uri":`...)
	buf = appendJSONString(buf, string(r.uri))
	buf = append(buf, `,"headers":{`...)
	n := 0
	eachHeader(&req.Header, func(k []byte, vals [][]byte) {
		if n++; n > 1 {
			buf = append(buf, ',')
		}
		buf = appendJSONString(buf, string(k))
		buf = append(buf, ':', '[')
		for i, v := range vals {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendJSONString(buf, string(v))
		}
		buf = append(buf, ']')
	})
	buf = append(buf, `},"cookies":{`...)
	n = 0
	for _, c := range r.cookies {
		if v, ok := unescapeCookie(c[1]); ok {
			if n++; n > 1 {
				buf = append(buf, ',')
			}
			buf = appendJSONString(buf, string(c[0]))
			buf = append(buf, ':')
			buf = appendJSONString(buf, string(v))
		}
	}
	buf = append(buf, `},"rawQuery":`...)
	buf = appendJSONString(buf, string(req.URI().QueryString()))
	if parsed {
		buf = append(buf, `,"parsed":true`...)
	} else {
		buf = append(buf, `,"parsed":false`...)
	}
	buf = append(buf, `,"uploads":`...)
	if files != nil {
		buf = files.appendJSON(buf)
	} else {
		buf = append(buf, "null"...)
	}
	return append(buf, `,"attributes":{}}`...)
}

// writeRRAnswer turns a RoadRunner answer (or a streamed one's head, with
// no body) into the response.
func writeRRAnswer(resp *fasthttp.Response, head, body []byte) error {
	resp.Header.SetNoDefaultContentType(true)
	status, err := decodeRRHead(head, resp)
	if err != nil {
		return err
	}
	if status == 0 {
		status = fasthttp.StatusOK
	}
	if status < 200 || status > 599 {
		return fmt.Errorf("response status %d is not a final status (200-599)", status)
	}
	if len(resp.Header.ContentType()) == 0 && len(body) > 0 {
		// What net/http, and so RoadRunner, does for an answer without one.
		resp.Header.SetContentType(http.DetectContentType(body))
	}
	resp.SetStatusCode(status)
	resp.SetBodyRaw(body)
	return nil
}

// isJSONHead tells the two answer encodings apart: a Response message cannot
// start with '{' (field 15, wire type 3, is not in it).
func isJSONHead(ctx []byte) bool {
	t := bytes.TrimLeft(ctx, " \t\r\n")
	return len(t) > 0 && t[0] == '{'
}

func rrStatus(ctx []byte) (int64, error) {
	if isJSONHead(ctx) {
		var a answer
		if err := json.Unmarshal(ctx, &a); err != nil {
			return 0, err
		}
		return int64(a.Status), nil
	}
	return rrproto.DecodeResponse(ctx, func(k, v []byte) error { return nil })
}

func decodeRRHead(ctx []byte, resp *fasthttp.Response) (int, error) {
	if isJSONHead(ctx) {
		var a answer
		if err := json.Unmarshal(ctx, &a); err != nil {
			return 0, fmt.Errorf("response context is not {\"status\",\"headers\"} JSON: %w (%.200q)", err, ctx)
		}
		for k, vs := range a.Headers {
			for _, v := range vs {
				if err := addHeader(resp, []byte(k), []byte(v)); err != nil {
					return 0, err
				}
			}
		}
		return a.Status, nil
	}
	st, err := rrproto.DecodeResponse(ctx, func(k, v []byte) error { return addHeader(resp, k, v) })
	if err != nil {
		return 0, fmt.Errorf("response context is not an http.v1.Response: %w", err)
	}
	if st < 0 || st > 999 {
		return 0, fmt.Errorf("response status %d is not a final status (200-599)", st)
	}
	return int(st), nil
}
