package gateway

import (
	"bytes"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

var trusted10 = &Handler{opt: Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}}

func TestForwardedRFC7239(t *testing.T) {
	h := trusted10
	cases := []struct {
		name, header, remote, host string
		tls                        bool
	}{
		{"one proxy", `for=192.0.2.60;proto=https;host=example.com`, "192.0.2.60:0", "example.com", true},
		{"ipv6 with port, quoted", `for="[2001:db8:cafe::17]:4711";proto=https`, "[2001:db8:cafe::17]:0", "peer", true},
		{"case and spaces", `For=192.0.2.60 ; PROTO=https`, "192.0.2.60:0", "peer", true},
		// The client wrote the leftmost element; the trusted 10.1.1.1 hop is skipped.
		{"chain", `for=6.6.6.6;host=evil, for=192.0.2.60;proto=https;host=shop.example, for=10.1.1.1;proto=http`, "192.0.2.60:0", "shop.example", true},
		{"unknown client", `for=unknown;proto=https`, "10.0.0.5:1234", "peer", false},
		{"obfuscated", `for=_hidden, for=10.1.1.1`, "10.1.1.1:0", "peer", false},
		{"malformed: not believed", `for=192.0.2.60;proto`, "10.0.0.5:1234", "peer", false},
		{"unterminated quote", `for="192.0.2.60`, "10.0.0.5:1234", "peer", false},
		{"host with a slash is ignored", `for=192.0.2.60;host="a/b"`, "192.0.2.60:0", "peer", false},
		{"bare ipv6 is not a node", `for=2001:db8::1`, "10.0.0.5:1234", "peer", false},
		// RFC 7239 §4 and RFC 9110 §5.6.1: empty pairs and elements are nothing.
		{"empty pairs and elements", `, for=192.0.2.60;;proto=https;, ,for=10.1.1.1,`, "192.0.2.60:0", "peer", true},
		{"a parameter name is a token", `for=6.6.6.6, f"or=192.0.2.60`, "10.0.0.5:1234", "peer", false},
		{"space inside a bare value", `for=192.0.2.60 proto=https`, "10.0.0.5:1234", "peer", false},
		{"text after a quoted value", `for="192.0.2.60"x`, "10.0.0.5:1234", "peer", false},
	}
	for _, c := range cases {
		remote, host, tls := h.forwardedRFC([][]byte{[]byte(c.header)}, "10.0.0.5:1234", []byte("peer"), false)
		if remote != c.remote || string(host) != c.host || tls != c.tls {
			t.Errorf("%s: %q gave %s %s %v, want %s %s %v", c.name, c.header, remote, host, tls, c.remote, c.host, c.tls)
		}
	}
}

// A proxy that appends a field line of its own (HAProxy's option forwardfor
// and http-request add-header do) leaves the client's line first: every line
// counts, in order, and the walk starts at the last one's right end.
func TestForwardedHeadersAcrossFieldLines(t *testing.T) {
	type hdr [2]string
	cases := []struct {
		name         string
		headers      []hdr
		remote, host string
		tls          bool
	}{
		{"xff: the client's own line", []hdr{{"X-Forwarded-For", "6.6.6.6"}, {"X-Forwarded-For", "192.0.2.1"}}, "192.0.2.1:0", "peer", false},
		{"xff: the client's own list", []hdr{{"X-Forwarded-For", "6.6.6.6, 7.7.7.7"}, {"X-Forwarded-For", "192.0.2.1"}}, "192.0.2.1:0", "peer", false},
		{"xff: trusted hops span lines", []hdr{{"X-Forwarded-For", "6.6.6.6, 192.0.2.1"}, {"X-Forwarded-For", "10.1.1.1"}, {"X-Forwarded-For", "10.2.2.2, 10.3.3.3"}}, "192.0.2.1:0", "peer", false},
		{"xff: an empty line ends the walk", []hdr{{"X-Forwarded-For", "6.6.6.6"}, {"X-Forwarded-For", ""}}, "10.0.0.5:1234", "peer", false},
		{"xff: an empty entry ends the walk", []hdr{{"X-Forwarded-For", "6.6.6.6"}, {"X-Forwarded-For", ", 10.1.1.1"}}, "10.1.1.1:0", "peer", false},
		{"xfp: the last line's", []hdr{{"X-Forwarded-Proto", "https"}, {"X-Forwarded-Proto", "http"}}, "10.0.0.5:1234", "peer", false},
		{"xfp: https in the last line", []hdr{{"X-Forwarded-Proto", "http"}, {"X-Forwarded-Proto", "https"}}, "10.0.0.5:1234", "peer", true},
		{"xfh: the last line's", []hdr{{"X-Forwarded-Host", "evil"}, {"X-Forwarded-Host", "shop.example"}}, "10.0.0.5:1234", "shop.example", false},
		{"xfh: not a uri-host[:port]", []hdr{{"X-Forwarded-Host", "a:x"}}, "10.0.0.5:1234", "peer", false},
		{"forwarded host: not a uri-host[:port]", []hdr{{"Forwarded", `for=192.0.2.60;host="[zz]"`}}, "192.0.2.60:0", "peer", false},
		{"forwarded: the client's own line", []hdr{{"Forwarded", "for=6.6.6.6;proto=https;host=evil"}, {"Forwarded", "for=192.0.2.60"}}, "192.0.2.60:0", "peer", false},
		{"forwarded: proto and host of the client's hop", []hdr{{"Forwarded", "for=6.6.6.6;proto=https;host=evil"}, {"Forwarded", "for=192.0.2.60;proto=http;host=shop.example"}}, "192.0.2.60:0", "shop.example", false},
		{"forwarded: trusted hops span lines", []hdr{{"Forwarded", "for=6.6.6.6;host=evil, for=192.0.2.60;proto=https"}, {"Forwarded", "for=10.1.1.1;proto=http"}}, "192.0.2.60:0", "peer", true},
		// A client's malformed line cannot void the line its proxy appended.
		{"forwarded: a malformed client line", []hdr{{"Forwarded", `for="6.6.6.6`}, {"Forwarded", "for=192.0.2.60;proto=https"}}, "192.0.2.60:0", "peer", true},
		{"forwarded: a malformed last line", []hdr{{"Forwarded", "for=192.0.2.60"}, {"Forwarded", "for="}}, "10.0.0.5:1234", "peer", false},
		{"forwarded: an empty last line", []hdr{{"Forwarded", "for=6.6.6.6"}, {"Forwarded", " , "}, {"Forwarded", "for=192.0.2.60"}}, "192.0.2.60:0", "peer", false},
		{"forwarded and xff naming other clients: neither", []hdr{{"X-Forwarded-For", "6.6.6.6"}, {"Forwarded", "for=192.0.2.60"}, {"X-Forwarded-For", "7.7.7.7"}}, "10.0.0.5:1234", "peer", false},
		// A proxy that appends to X-Forwarded-For only passes the client's Forwarded on.
		{"a client's forwarded behind an xff proxy", []hdr{{"Forwarded", "for=6.6.6.6;proto=https;host=evil"}, {"X-Forwarded-For", "192.0.2.1"}}, "10.0.0.5:1234", "peer", false},
		{"forwarded and xff agreeing", []hdr{{"X-Forwarded-For", "192.0.2.60, 10.1.1.1"}, {"Forwarded", "for=192.0.2.60;proto=https;host=shop.example, for=10.1.1.1"}}, "192.0.2.60:0", "shop.example", true},
		// A name with "_" is another field: it never counts as X-Forwarded-For
		// (server.underscores_in_headers: true keeps it for PHP, no more).
		{"x_forwarded_for is not x-forwarded-for", []hdr{{"X-Forwarded-For", "192.0.2.1"}, {"X_Forwarded_For", "6.6.6.6"}, {"X_Forwarded_Proto", "https"}, {"Forwarded_", "for=6.6.6.6"}}, "192.0.2.1:0", "peer", false},
	}
	for _, c := range cases {
		var ctx fasthttp.RequestCtx
		for _, kv := range c.headers {
			ctx.Request.Header.Add(kv[0], kv[1])
		}
		remote, host, tls := trusted10.forwarded(&ctx, "10.0.0.5:1234", []byte("peer"), false)
		if remote != c.remote || string(host) != c.host || tls != c.tls {
			t.Errorf("%s: %q gave %s %s %v, want %s %s %v", c.name, c.headers, remote, host, tls, c.remote, c.host, c.tls)
		}
		// From a peer that is not trusted, nothing of it counts.
		remote, host, tls = trusted10.forwarded(&ctx, "192.0.2.99:1234", []byte("peer"), false)
		if remote != "192.0.2.99:1234" || string(host) != "peer" || tls {
			t.Errorf("%s from an untrusted peer gave %s %s %v", c.name, remote, host, tls)
		}
	}
}

// A client's thousand elements cost no more than a few: only the last ones
// are kept, and a line with more trusted hops than that ends the walk.
func TestForwardedLongLines(t *testing.T) {
	client := strings.Repeat("for=6.6.6.6;host=evil, ", 2000)
	hops := strings.Repeat(", for=10.1.1.1", len(forwardedRing{}.elems))
	cases := []struct {
		name   string
		lines  []string
		remote string
	}{
		{"a long client list", []string{client + "for=192.0.2.60"}, "192.0.2.60:0"},
		{"a long client line before the proxy's", []string{client + "for=7.7.7.7", "for=192.0.2.60, for=10.1.1.1"}, "192.0.2.60:0"},
		{"more trusted hops than are kept", []string{"for=192.0.2.60" + hops}, "10.1.1.1:0"},
		{"as many trusted hops as are kept", []string{"for=192.0.2.60" + hops[len(", for=10.1.1.1"):]}, "192.0.2.60:0"},
	}
	for _, c := range cases {
		var lines [][]byte
		for _, l := range c.lines {
			lines = append(lines, []byte(l))
		}
		remote, host, _ := trusted10.forwardedRFC(lines, "10.0.0.5:1234", []byte("peer"), false)
		if remote != c.remote || string(host) != "peer" {
			t.Errorf("%s: gave %s %s, want %s peer", c.name, remote, host, c.remote)
		}
		// Reading an address allocates; a kept element is read once at most.
		allocs := testing.AllocsPerRun(10, func() { trusted10.forwardedRFC(lines, "10.0.0.5:1234", []byte("peer"), false) })
		if limit := 3*len(forwardedRing{}.elems) + 4; allocs > float64(limit) {
			t.Errorf("%s: %v allocations, more than %d", c.name, allocs, limit)
		}
	}
}

func FuzzForwarded(f *testing.F) {
	for _, s := range [][2]string{
		{`for=192.0.2.60;proto=http;by=203.0.113.43`, ``},
		{`for="[2001:db8::1]:80", for=unknown`, `for=10.0.0.1;proto=https`},
		{`a="\"x\\"`, `for="`},
		{`;;,,`, `for=1.2.3.4;`},
		{`for=6.6.6.6;host=evil`, `For = 192.0.2.60 ; proto=https`},
	} {
		f.Add(s[0], s[1])
	}
	h := &Handler{opt: Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/1")}}}
	f.Fuzz(func(t *testing.T, a, b string) {
		remote, host, _ := h.forwardedRFC([][]byte{[]byte(a), []byte(b)}, "10.0.0.5:1", []byte("h"), false)
		if _, err := netip.ParseAddrPort(remote); err != nil {
			t.Fatalf("%q %q gave remote %q", a, b, remote)
		}
		if !validHost(host) {
			t.Fatalf("%q %q gave host %q", a, b, host)
		}
		// RFC 9110 §5.3: two field lines mean what one line joined with ", "
		// means. Lines that parse alone must parse joined, to the same elements.
		ea, okA := forwardedElems(a)
		eb, okB := forwardedElems(b)
		if !okA || !okB || len(ea)+len(eb) > len(forwardedRing{}.elems) {
			return
		}
		joined, ok := forwardedElems(a + ", " + b)
		if !ok || !slices.EqualFunc(joined, append(ea, eb...), sameElem) {
			t.Fatalf("%q and %q parse to %v, joined to %v (ok %v)", a, b, append(ea, eb...), joined, ok)
		}
		r1, h1, t1 := h.forwardedRFC([][]byte{[]byte(a + ", " + b)}, "10.0.0.5:1", []byte("h"), false)
		r2, h2, t2 := h.forwardedRFC([][]byte{[]byte(a), []byte(b)}, "10.0.0.5:1", []byte("h"), false)
		if r1 != r2 || !bytes.Equal(h1, h2) || t1 != t2 {
			t.Fatalf("%q and %q: joined gave %s %s %v, as two lines %s %s %v", a, b, r1, h1, t1, r2, h2, t2)
		}
	})
}

// forwardedElems is what parseForwarded kept of line, left to right.
func forwardedElems(line string) ([]forwardedElem, bool) {
	var r forwardedRing
	if !parseForwarded(&r, []byte(line)) {
		return nil, false
	}
	var out []forwardedElem
	for i := 0; ; i++ {
		e, ok := r.fromRight(i)
		if !ok {
			return out, true
		}
		out = slices.Insert(out, 0, e)
	}
}

func sameElem(x, y forwardedElem) bool {
	return bytes.Equal(x.node.bytes(), y.node.bytes()) && bytes.Equal(x.proto.bytes(), y.proto.bytes()) &&
		bytes.Equal(x.host.bytes(), y.host.bytes())
}
