package gateway

import (
	"bytes"
	"net/netip"

	"github.com/valyala/fasthttp"
)

// ParseProxies turns server.trusted_proxies (CIDRs or single addresses) into
// prefixes; config validation has already rejected anything else.
func ParseProxies(list []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, s := range list {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, err
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

func (h *Handler) trusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range h.opt.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// forwarded applies X-Forwarded-For, -Proto and -Host, only when the peer is a
// trusted proxy. The client is the rightmost X-Forwarded-For address that is
// not itself a trusted proxy, as nginx's realip module takes it: entries left
// of it were written by the client and prove nothing.
func (h *Handler) forwarded(ctx *fasthttp.RequestCtx, remote string, host []byte, tls bool) (string, []byte, bool) {
	peer, err := netip.ParseAddrPort(remote)
	if err != nil || !h.trusted(peer.Addr()) {
		return remote, host, tls
	}
	hdr := &ctx.Request.Header
	if fwd := hdr.Peek("Forwarded"); len(fwd) > 0 {
		// RFC 7239 wins over the X-Forwarded-* headers when a trusted proxy sends it.
		if elems, ok := parseForwarded(fwd); ok {
			return h.forwardedRFC(elems, remote, host, tls)
		}
		return remote, host, tls
	}
	if xff := hdr.Peek("X-Forwarded-For"); len(xff) > 0 {
		for _, part := range reverse(bytes.Split(xff, []byte(","))) {
			a, err := netip.ParseAddr(string(bytes.TrimSpace(part)))
			if err != nil {
				break
			}
			remote = netip.AddrPortFrom(a.Unmap(), 0).String()
			if !h.trusted(a) {
				break
			}
		}
	}
	switch proto := lastItem(hdr.Peek("X-Forwarded-Proto")); {
	case bytes.EqualFold(proto, []byte("https")):
		tls = true
	case bytes.EqualFold(proto, []byte("http")):
		tls = false
	}
	if fh := lastItem(hdr.Peek("X-Forwarded-Host")); len(fh) > 0 && validHost(fh) {
		host = fh
	}
	return remote, host, tls
}

// forwardedRFC walks the Forwarded elements from the right, as forwarded()
// walks X-Forwarded-For: the client is the first for= that is not a trusted
// proxy, and proto and host are taken from that element, which a trusted
// proxy wrote about the request it received.
func (h *Handler) forwardedRFC(elems []forwardedElem, remote string, host []byte, tls bool) (string, []byte, bool) {
	for i := len(elems) - 1; i >= 0; i-- {
		e := elems[i]
		if !e.addr.IsValid() {
			break
		}
		remote = netip.AddrPortFrom(e.addr, 0).String()
		switch {
		case bytes.EqualFold(e.proto, []byte("https")):
			tls = true
		case bytes.EqualFold(e.proto, []byte("http")):
			tls = false
		}
		if len(e.host) > 0 && validHost(e.host) {
			host = e.host
		}
		if !h.trusted(e.addr) {
			break
		}
	}
	return remote, host, tls
}

func reverse(s [][]byte) [][]byte {
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
	return s
}

func lastItem(v []byte) []byte {
	if i := bytes.LastIndexByte(v, ','); i >= 0 {
		v = v[i+1:]
	}
	return bytes.TrimSpace(v)
}

// validHost accepts what may stand in a Host header: no spaces, slashes or
// controls, so a forged value cannot smuggle a path or a second field.
func validHost(h []byte) bool {
	for _, c := range h {
		if c <= ' ' || c == '/' || c == '\\' || c == 0x7f || c == '@' {
			return false
		}
	}
	return true
}
