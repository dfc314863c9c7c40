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
//
// Every field line of a header counts, in order, as one comma-joined value
// (RFC 9110 §5.3): a proxy that appends a line of its own after the client's
// would otherwise leave the client's line, read first, to decide.
func (h *Handler) forwarded(ctx *fasthttp.RequestCtx, remote string, host []byte, tls bool) (string, []byte, bool) {
	peer, err := netip.ParseAddrPort(remote)
	if err != nil || !h.trusted(peer.Addr()) {
		return remote, host, tls
	}
	hdr := &ctx.Request.Header
	// PeekAll reuses one buffer: each result is used up before the next call.
	if lines := hdr.PeekAll("Forwarded"); len(lines) > 0 {
		// RFC 7239 wins over the X-Forwarded-* headers when a trusted proxy
		// sends it. But a proxy that manages only X-Forwarded-For passes a
		// client's own Forwarded on untouched: when the two name different
		// clients, one of them is the client's word, and neither is believed
		// (Symfony refuses such a request for the same reason).
		fr, fh, ft := h.forwardedRFC(lines, remote, host, tls)
		if xff := hdr.PeekAll("X-Forwarded-For"); len(xff) > 0 && h.forwardedFor(xff, remote) != fr {
			return remote, host, tls
		}
		return fr, fh, ft
	}
	if lines := hdr.PeekAll("X-Forwarded-For"); len(lines) > 0 {
		remote = h.forwardedFor(lines, remote)
	}
	switch proto := lastItem(hdr.PeekAll("X-Forwarded-Proto")); {
	case bytes.EqualFold(proto, []byte("https")):
		tls = true
	case bytes.EqualFold(proto, []byte("http")):
		tls = false
	}
	if fh := lastItem(hdr.PeekAll("X-Forwarded-Host")); len(fh) > 0 && validHost(fh) {
		host = fh
	}
	return remote, host, tls
}

// forwardedFor walks the X-Forwarded-For entries of all lines from the right.
// Anything that is not an address (an empty entry too) ends the walk: what
// lies left of it cannot be told apart from what the client wrote.
func (h *Handler) forwardedFor(lines [][]byte, remote string) string {
	var client netip.Addr
walk:
	for i := len(lines) - 1; i >= 0; i-- {
		v := lines[i]
		for more := true; more; {
			item := v
			if c := bytes.LastIndexByte(v, ','); c >= 0 {
				item, v = v[c+1:], v[:c]
			} else {
				more = false
			}
			a, err := netip.ParseAddr(string(bytes.TrimSpace(item)))
			if err != nil {
				break walk
			}
			client = a.Unmap()
			if !h.trusted(a) {
				break walk
			}
		}
	}
	if !client.IsValid() {
		return remote
	}
	return netip.AddrPortFrom(client, 0).String()
}

// forwardedRFC walks the Forwarded elements of all lines from the right, as
// forwardedFor walks X-Forwarded-For: the client is the first for= that is
// not a trusted proxy, and proto and host are taken from that element, which
// a trusted proxy wrote about the request it received. A line that does not
// parse ends the walk as an unknown for= does: lines right of it, which the
// proxies appended, still count, and a client cannot void them by sending a
// malformed line of its own. So does a line with more trusted hops than the
// ring keeps, which no real chain of proxies writes.
func (h *Handler) forwardedRFC(lines [][]byte, remote string, host []byte, tls bool) (string, []byte, bool) {
	var ring forwardedRing
	var client netip.Addr
walk:
	for i := len(lines) - 1; i >= 0; i-- {
		if !parseForwarded(&ring, lines[i]) {
			break
		}
		for j := 0; j < ring.n; j++ {
			e, kept := ring.fromRight(j)
			if !kept {
				break walk
			}
			a := e.addr()
			if !a.IsValid() {
				break walk
			}
			client = a
			switch proto := e.proto.bytes(); {
			case bytes.EqualFold(proto, []byte("https")):
				tls = true
			case bytes.EqualFold(proto, []byte("http")):
				tls = false
			}
			if eh := e.host.bytes(); len(eh) > 0 && validHost(eh) {
				host = eh
			}
			if !h.trusted(client) {
				break walk
			}
		}
	}
	if client.IsValid() {
		remote = netip.AddrPortFrom(client, 0).String()
	}
	return remote, host, tls
}

// lastItem is the last list element of the last field line: the value the
// nearest proxy wrote. An empty one means none, and the peer's view stands.
func lastItem(lines [][]byte) []byte {
	if len(lines) == 0 {
		return nil
	}
	v := lines[len(lines)-1]
	if i := bytes.LastIndexByte(v, ','); i >= 0 {
		v = v[i+1:]
	}
	return bytes.TrimSpace(v)
}

// validHost accepts what a Host header may hold (grammar.go): a forwarded
// host replaces the Host PHP sees, so it passes the same check.
func validHost(h []byte) bool { return validHostField(h) }
