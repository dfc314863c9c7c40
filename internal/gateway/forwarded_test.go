package gateway

import (
	"net/netip"
	"testing"
)

func TestForwardedRFC7239(t *testing.T) {
	h := &Handler{opt: Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}}
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
	}
	for _, c := range cases {
		elems, ok := parseForwarded([]byte(c.header))
		remote, host, tls := "10.0.0.5:1234", []byte("peer"), false
		if ok {
			remote, host, tls = h.forwardedRFC(elems, remote, host, tls)
		}
		if remote != c.remote || string(host) != c.host || tls != c.tls {
			t.Errorf("%s: %q gave %s %s %v, want %s %s %v", c.name, c.header, remote, host, tls, c.remote, c.host, c.tls)
		}
	}
}

func FuzzForwarded(f *testing.F) {
	for _, s := range []string{`for=192.0.2.60;proto=http;by=203.0.113.43`, `for="[2001:db8::1]:80", for=unknown`, `a="\"x\\"`, `;;,,`} {
		f.Add(s)
	}
	h := &Handler{opt: Options{TrustedProxies: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/1")}}}
	f.Fuzz(func(t *testing.T, s string) {
		elems, ok := parseForwarded([]byte(s))
		if !ok {
			return
		}
		remote, host, _ := h.forwardedRFC(elems, "10.0.0.5:1", []byte("h"), false)
		if _, err := netip.ParseAddrPort(remote); err != nil {
			t.Fatalf("%q gave remote %q", s, remote)
		}
		if !validHost(host) {
			t.Fatalf("%q gave host %q", s, host)
		}
	})
}
