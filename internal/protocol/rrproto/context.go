package rrproto

import (
	"github.com/ferry-php/ferry/internal/protocol"
)

// protoContext is the context as http.v1.Request.
func protoContext(buf []byte, rq protocol.Request, files *formTree, parsed bool) []byte {
	req := &rq.Ctx.Request
	var scratch [256]byte
	r := commonOf(rq, scratch[:0])
	buf = AppendString(buf, ReqRemoteAddr, r.remote)
	buf = AppendString(buf, ReqProtocol, req.Header.Protocol())
	buf = AppendString(buf, ReqMethod, req.Header.Method())
	buf = AppendString(buf, ReqURI, r.uri)
	buf = appendHeaders(buf, &req.Header)
	for _, c := range r.cookies {
		if v, ok := unescapeCookie(c[1]); ok {
			buf = AppendEntry(buf, ReqCookies, c[0], v)
		}
	}
	buf = AppendString(buf, ReqRawQuery, req.URI().QueryString())
	buf = AppendBool(buf, ReqParsed, parsed)
	if files != nil {
		buf = AppendString(buf, ReqUploads, files.appendJSON(nil))
	}
	return buf
}

// jsonContext is the context as roadrunner-http before 3.5 sent it.
func jsonContext(buf []byte, rq protocol.Request, files *formTree, parsed bool) []byte {
	req := &rq.Ctx.Request
	var scratch [256]byte
	r := commonOf(rq, scratch[:0])
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
