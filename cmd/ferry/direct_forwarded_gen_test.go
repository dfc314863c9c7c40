package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// fwdRandomCases builds n seeded cases for TestDirectForwardedMatchesTheFront:
// chains of trusted and untrusted addresses in both families and in the forms
// netip reads (or refuses), over Forwarded and X-Forwarded-* lines, with a
// malformed piece now and then. Every byte stays within what the front's
// parser lets through, so that the header walk, not the parser, decides.
func fwdRandomCases(seed uint64, n int) []fwdCase {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	pick := func(list []string) string { return list[rng.IntN(len(list))] }
	out := make([]fwdCase, 0, n)
	for i := 0; i < n; i++ {
		var fields [][2]string
		lines := 1 + rng.IntN(4)
		// Mostly one family per request: Forwarded and X-Forwarded-For together
		// cancel each other unless they agree, which random chains rarely do.
		mode := rng.IntN(5)
		for j := 0; j < lines; j++ {
			k := rng.IntN(10)
			switch mode {
			case 0, 1:
				k = []int{0, 0, 0, 0, 0, 0, 7, 8, 9}[rng.IntN(9)]
			case 2, 3:
				k = []int{4, 4, 4, 4, 7, 7, 8, 8, 9}[rng.IntN(9)]
			}
			switch {
			case k < 4:
				fields = append(fields, [2]string{fwdName(rng, "Forwarded"), fwdForwardedLine(rng, pick)})
			case k < 7:
				fields = append(fields, [2]string{fwdName(rng, "X-Forwarded-For"), fwdXFFLine(rng, pick)})
			case k < 8:
				fields = append(fields, [2]string{fwdName(rng, "X-Forwarded-Proto"), fwdList(rng, pick, fwdProtos)})
			case k < 9:
				fields = append(fields, [2]string{fwdName(rng, "X-Forwarded-Host"), fwdList(rng, pick, fwdHosts)})
			default:
				fields = append(fields, [2]string{"X-Other", "for=6.6.6.6"})
			}
		}
		for j := range fields {
			if rng.IntN(10) == 0 {
				// The parser drops SP and HTAB around a value: the front's and direct mode's alike.
				fields[j][1] = pick([]string{" ", "\t", "  "}) + fields[j][1] + pick([]string{" ", "\t", ""})
			}
		}
		cfg := []int{3, 3, 3, 4, 0, 2}[rng.IntN(6)]
		out = append(out, fwdCase{name: fmt.Sprintf("random %d", i), config: cfg, fields: fields})
	}
	return out
}

var (
	// Trusted by some of fwdConfigs (3 and 4 mostly) and not by others.
	fwdTrustedAddrs = []string{"127.0.0.1", "10.1.2.3", "10.1.255.255", "192.0.2.200", "2001:db8:1::7", "2001:DB8:1:0:0:0:0:9",
		"::ffff:10.1.0.1", "::ffff:203.0.113.9", "203.0.113.5", "0:0:0:0:0:0:0:2", "::2", "fe80::1"}
	fwdUntrustedAddrs = []string{"192.0.2.60", "198.51.100.7", "6.6.6.6", "2001:db8:cafe::17", "2001:0db8:0000:0000:0000:0000:0000:0001",
		"::ffff:198.51.100.7", "::1.2.3.4", "::", "1:2:3:4:5:6:7:8", "1::", "1:0:0:2:0:0:0:3", "1:0:0:2:0:0:3:4", "0:0:1:0:0:1:0:0", "fe80::1%eth0", "fe80::1%25en0",
		"::ffff:192.0.2.60%eth0", "192.0.2.0", "255.255.255.255", "10.2.0.1"}
	// Neither netip nor the front takes these for an address.
	fwdNotAddrs = []string{"unknown", "_hidden", "", "1.2.3", "01.2.3.4", "256.1.1.1", "1.2.3.4:80", "[::1]", "::1::", "1:2:3:4:5:6:7:8:9",
		"fe80::1%", "%eth0", "1.2.3.4%eth0", "12345::", "::ffff:1.2.3.04", "example.com", "1.2.3.4.5", "::g"}
	fwdProtos = []string{"https", "http", "HTTPS", "Http", "ftp", "", "httpſ", "https ", "wss"}
	fwdHosts  = []string{"shop.example", "shop.example:8443", "[::1]:8080", "[2001:db8::1]", "a/b", "a..b", ".", "a:x", "[zz]", "x:99999",
		"x:000000080", "[v1.x]", "Ex-ample.COM", "", "[fe80::1%25eth0]", "a b", "é.example"}
)

// fwdName spells a header name as clients do: any case.
func fwdName(rng *rand.Rand, name string) string {
	switch rng.IntN(4) {
	case 0:
		return strings.ToLower(name)
	case 1:
		return strings.ToUpper(name)
	}
	return name
}

func fwdAddr(rng *rand.Rand, pick func([]string) string) string {
	switch k := rng.IntN(20); {
	case k < 9:
		return pick(fwdTrustedAddrs)
	case k < 17:
		return pick(fwdUntrustedAddrs)
	}
	return pick(fwdNotAddrs)
}

func fwdList(rng *rand.Rand, pick func([]string) string, from []string) string {
	items := make([]string, 1+rng.IntN(3))
	for i := range items {
		items[i] = pick(from)
	}
	return strings.Join(items, pick([]string{", ", ",", " , "}))
}

func fwdXFFLine(rng *rand.Rand, pick func([]string) string) string {
	items := make([]string, 1+rng.IntN(5))
	for i := range items {
		items[i] = fwdAddr(rng, pick)
		if rng.IntN(12) == 0 {
			// bytes.TrimSpace is Unicode-aware: U+00A0 and U+3000 are spaces to the front.
			items[i] = pick([]string{"\u00a0", "\u3000", "\t"}) + items[i] + pick([]string{"\u00a0", "\u2009", " ", "\u0085"})
		}
	}
	return strings.Join(items, pick([]string{", ", ",", " , "}))
}

// fwdNode writes a for= value in one of the ways a proxy (or a client) does.
func fwdNode(rng *rand.Rand, pick func([]string) string) string {
	a := fwdAddr(rng, pick)
	v6 := strings.Contains(a, ":")
	switch rng.IntN(7) {
	case 0: // with a port
		if v6 {
			a = "[" + a + "]"
		}
		a += pick([]string{":4711", ":0", ":65535", ":65536", ":00080", ":", ":x"})
	case 1: // bracketed without a port
		a = "[" + a + "]"
	}
	switch rng.IntN(5) {
	case 0:
		return `"` + a + `"`
	case 1: // a quoted-string with \-escapes, which resolve to the same bytes
		return `"` + strings.ReplaceAll(strings.ReplaceAll(a, ".", `\.`), "[", `\[`) + `"`
	}
	return a
}

func fwdForwardedLine(rng *rand.Rand, pick func([]string) string) string {
	elems := make([]string, 1+rng.IntN(4))
	if rng.IntN(15) == 0 {
		elems = make([]string, 14+rng.IntN(6)) // around the ring's 16
	}
	for i := range elems {
		var pairs []string
		pairs = append(pairs, pick([]string{"for", "For", "FOR"})+"="+fwdNode(rng, pick))
		if rng.IntN(2) == 0 {
			p := pick(fwdProtos)
			if p == "" || strings.ContainsAny(p, " ſ") || rng.IntN(3) == 0 {
				p = `"` + strings.Replace(p, "t", `\t`, 1) + `"`
			}
			pairs = append(pairs, pick([]string{"proto", "Proto"})+"="+p)
		}
		if rng.IntN(2) == 0 {
			h := pick(fwdHosts)
			if h == "" || strings.ContainsAny(h, "[]:/ %é") || rng.IntN(3) == 0 {
				h = `"` + strings.Replace(h, "e", `\e`, 1) + `"`
			}
			pairs = append(pairs, "host="+h)
		}
		if rng.IntN(6) == 0 {
			pairs = append(pairs, "by=_proxy")
		}
		rng.Shuffle(len(pairs), func(a, b int) { pairs[a], pairs[b] = pairs[b], pairs[a] })
		elems[i] = strings.Join(pairs, pick([]string{";", "; ", " ;", ";;"}))
		if rng.IntN(25) == 0 {
			elems[i] += pick([]string{";proto", `;host="x`, " junk", "=", `;for="a"b`, ";x=\x01", ";f\"or=1.2.3.4"})
		}
	}
	return strings.Join(elems, pick([]string{", ", ",", " , ", ", , "}))
}

// fwdAddressCases put nearly valid addresses where the front reads one: an
// X-Forwarded-For entry (netip.ParseAddr) and a for= node (ParseAddrPort,
// then the bracketed and IPv4 forms), under the unit tests' trusted list.
func fwdAddressCases(seed uint64, n int) []fwdCase {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	addrs := append(append([]string{}, fwdTrustedAddrs...), fwdUntrustedAddrs...)
	nodes := []string{"192.0.2.60:4711", "[2001:db8::17]:4711", "[::ffff:1.2.3.4]", "1.2.3.4", "[fe80::1%eth0]:80", "[1.2.3.4]",
		"[::ffff:10.1.2.3]:0", "10.1.2.3:65535", "[2001:db8::1%25x]"}
	out := make([]fwdCase, 0, n)
	for i := 0; i < n; i++ {
		var f [2]string
		if rng.IntN(2) == 0 {
			f = [2]string{"X-Forwarded-For", strings.TrimSpace(fwdMutate(rng, addrs)) + ", 10.1.1.1"}
		} else {
			f = [2]string{"Forwarded", `for="` + fwdMutate(rng, nodes) + `";proto=https, for=10.1.1.1`}
		}
		out = append(out, fwdCase{name: fmt.Sprintf("address %d", i), config: 0, fields: [][2]string{f}})
	}
	return out
}
