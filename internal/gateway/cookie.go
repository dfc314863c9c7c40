package gateway

import (
	"bytes"

	"github.com/ferry-php/ferry/internal/listen"
	"github.com/valyala/fasthttp"
)

// PHP's defaults for the two ini settings that bound how $_COOKIE is built.
const (
	defaultMaxInputVars    = 1000
	defaultMaxInputNesting = 64
)

// rawCookie is the request's Cookie field lines as the client sent them,
// joined with "; " as nginx hands them to FPM (and as RFC 9113 §8.2.3 joins
// HTTP/2's split cookie fields). fasthttp's own cookie list is no use here: it
// drops a name without "=", unquotes values and rebuilds the header from
// that, where PHP sees the bytes.
func rawCookie(dst []byte, ctx *fasthttp.RequestCtx) []byte {
	if cookie, ok := listen.StdCookie(ctx.Conn()); ok {
		return append(dst, cookie...)
	}
	h := &ctx.Request.Header
	if raw := h.RawHeaders(); len(raw) > 0 {
		return cookieLines(dst, raw)
	}
	// A request built in code rather than read: what fasthttp keeps.
	for i, v := range h.PeekAll(fasthttp.HeaderCookie) {
		if i > 0 {
			dst = append(dst, "; "...)
		}
		dst = append(dst, v...)
	}
	return dst
}

// cookieLines finds the Cookie field lines in a raw header block, values
// trimmed of the whitespace around them (RFC 9110 §5.5), a folded line's
// continuation taking one space as RFC 9112 §5.2 says a recipient may.
func cookieLines(dst, raw []byte) []byte {
	n, in := 0, false
	for len(raw) > 0 {
		line := raw
		if nl := bytes.IndexByte(raw, '\n'); nl >= 0 {
			line, raw = raw[:nl], raw[nl+1:]
		} else {
			raw = nil
		}
		if len(line) == 0 {
			in = false
			continue
		}
		switch c := line[0]; {
		case c == ' ' || c == '\t':
			if in {
				if v := bytes.Trim(line, " \t\r"); len(v) > 0 {
					dst = append(append(dst, ' '), v...)
				}
			}
			continue
		case c|0x20 != 'c' || len(line) < 7 || line[6] != ':' || !bytes.EqualFold(line[:6], []byte("Cookie")):
			in = false
			continue
		}
		in = true
		if n++; n > 1 {
			dst = append(dst, "; "...)
		}
		dst = append(dst, bytes.Trim(line[7:], " \t\r")...)
	}
	return dst
}

// cookieLimits are max_input_vars and max_input_nesting_level, as the
// workers' PHP has them.
type cookieLimits struct{ vars, nesting int }

// eachCookie splits a Cookie header as PHP's php_default_treat_data does for
// $_COOKIE: on ";" (empty pieces skipped), leading C whitespace off the name,
// a piece with no name or starting with "=" skipped, the value after the
// first "=" ("" without one), and no more than max_input_vars pieces. The
// header is a C string there: nothing after a NUL byte is seen.
func eachCookie(raw []byte, maxVars int, fn func(name, value []byte)) {
	if i := bytes.IndexByte(raw, 0); i >= 0 {
		raw = raw[:i]
	}
	count := 0
	for len(raw) > 0 {
		var piece []byte
		if i := bytes.IndexByte(raw, ';'); i >= 0 {
			piece, raw = raw[:i], raw[i+1:]
		} else {
			piece, raw = raw, nil
		}
		for len(piece) > 0 && cSpace(piece[0]) {
			piece = piece[1:]
		}
		if len(piece) == 0 || piece[0] == '=' {
			continue
		}
		if count++; count > maxVars {
			return
		}
		name, value, _ := bytes.Cut(piece, []byte("="))
		fn(name, value)
	}
}

// cSpace is isspace() in the C locale.
func cSpace(c byte) bool {
	return c == ' ' || (c >= '\t' && c <= '\r')
}

// plainCookie reports whether PHP keeps this cookie as sent: a name PHP does
// not rewrite (no " ", "." or "[") and a value without a percent escape.
// Only then is the name a $_COOKIE key and the value its string.
func plainCookie(name, value []byte) bool {
	for _, c := range name {
		if c == ' ' || c == '.' || c == '[' {
			return false
		}
	}
	return bytes.IndexByte(value, '%') < 0
}

// rawURLDecode is PHP's php_raw_url_decode: "%" and two hex digits become the
// byte, anything else ("+" included) stays.
func rawURLDecode(s []byte) []byte {
	i := bytes.IndexByte(s, '%')
	if i < 0 {
		return s
	}
	out := make([]byte, 0, len(s))
	out = append(out, s[:i]...)
	for ; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			out = append(out, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		out = append(out, s[i])
	}
	return out
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'f')
}

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

// firstNames appends a pair unless one of the same name came first (PHP's
// rule for cookies): a scan of the few pairs a request usually has, a set
// once there are smallGroup of them.
type firstNames struct{ seen map[string]struct{} }

func (f *firstNames) add(all [][2][]byte, k, v []byte) [][2][]byte {
	if f.seen != nil {
		if _, dup := f.seen[string(k)]; dup {
			return all
		}
		f.seen[string(k)] = struct{}{}
		return append(all, [2][]byte{k, v})
	}
	all = append(all, [2][]byte{k, v})
	if !first(all, len(all)-1, func(a, b [2][]byte) bool { return bytes.Equal(a[0], b[0]) }) {
		return all[:len(all)-1]
	}
	if len(all) == smallGroup {
		f.seen = make(map[string]struct{}, 2*smallGroup)
		for _, c := range all {
			f.seen[string(c[0])] = struct{}{}
		}
	}
	return all
}

// collectCookies gathers what becomes $_COOKIE for the usual header, where
// every cookie is plain: the first of two equal names wins, as in PHP. ok is
// false when a cookie is not plain; the caller then builds $_COOKIE with
// cookieTree.
func collectCookies(all [][2][]byte, raw []byte, maxVars int) (_ [][2][]byte, ok bool) {
	ok = true
	var seen firstNames
	eachCookie(raw, maxVars, func(k, v []byte) {
		if !ok {
			return
		}
		if !plainCookie(k, v) {
			ok = false
			return
		}
		all = seen.add(all, k, v)
	})
	return all, ok
}

// appendCookieName writes a plain cookie's name as the key PHP gives it: an
// integer for a canonical decimal ("7"), as unserialize() would make it.
func appendCookieName(b phpArray, name []byte) phpArray {
	if len(name) > 0 && (name[0] == '-' || (name[0] >= '0' && name[0] <= '9')) {
		if k := phpKey(name); k.isInt {
			return b.int(k.i)
		}
	}
	return b.bytes(name)
}

// parseCookies reads l.raw as PHP reads a Cookie header into $_COOKIE: the
// plain cookies when every one is (the usual request, no allocation), else
// the tree PHP would build.
func (h *Handler) parseCookies(l *lists) ([][2][]byte, *cookieTree) {
	if len(l.raw) == 0 {
		return nil, nil
	}
	cookies, plain := collectCookies(l.cookies[:0], l.raw, h.opt.MaxInputVars)
	l.usedCookies = len(cookies)
	if plain {
		return cookies, nil
	}
	tree := newCookieTree(h.opt.MaxInputNesting)
	eachCookie(l.raw, h.opt.MaxInputVars, func(k, v []byte) { tree.register(k, rawURLDecode(v)) })
	return nil, tree
}

// appendCookies writes the context's cookies: name => value, a nested
// cookie's value under its path (cookieTree.appendTo).
func appendCookies(b phpArray, plain [][2][]byte, tree *cookieTree) phpArray {
	if tree != nil {
		return tree.appendTo(b)
	}
	b = b.open(len(plain))
	for _, c := range plain {
		b = appendCookieName(b, c[0]).bytes(c[1])
	}
	return b.close()
}
