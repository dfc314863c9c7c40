package main

import (
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"

	"github.com/ferry-php/ferry/internal/gateway"
)

// Which server.trusted_proxies entries direct mode accepts, and which peers
// they trust, must be the front's: gateway.ParseProxies, then netip's
// Prefix.Contains on the unmapped peer (proxy.go's trusted()). Thousands of
// seeded entries and peers, valid and nearly valid, go through
// Ferry\Ext\forwarded_client() in one php process; a peer is trusted when the
// X-Forwarded-For it sends is believed.
func TestDirectTrustedMatchesTheFront(t *testing.T) {
	so := extensionSO(t)
	rng := rand.New(rand.NewPCG(34, 20261128))
	var inputs []fwdInput
	var want []fwdAnswer
	for i := 0; i < 3000; i++ {
		entry, peer := fwdMutate(rng, fwdEntrySeeds), fwdMutate(rng, fwdPeerSeeds)
		if rng.IntN(2) == 0 {
			// The entry's own address as the peer: the edge of its network.
			a, _, _ := strings.Cut(entry, "/")
			if strings.Contains(a, ":") {
				a = "[" + a + "]"
			}
			peer = fwdMutate(rng, []string{a + ":1"})
		}
		in := fwdInputOf([]string{entry}, peer, [][2]string{{"X-Forwarded-For", "192.0.2.1"}})
		prefixes, err := gateway.ParseProxies([]string{entry})
		if err != nil {
			// forwarded_client() throws a ValueError, which fwdScript reports so.
			want = append(want, fwdAnswer{Remote: "refused " + entry})
		} else {
			remote := peer
			if ap, err := netip.ParseAddrPort(peer); err == nil && prefixes[0].Contains(ap.Addr().Unmap()) {
				remote = "192.0.2.1:0"
			}
			want = append(want, fwdAnswer{Remote: remote, Host: fwdHost, Scheme: "http"})
		}
		inputs = append(inputs, in)
	}
	got := fwdThroughExtension(t, so, inputs)
	trusted, refused := 0, 0
	for i := range inputs {
		if strings.HasPrefix(want[i].Remote, "refused ") {
			refused++
			if got[i].Remote != want[i].Remote {
				t.Errorf("entry %q: the front refuses it, direct mode gave %+v", strings.TrimPrefix(want[i].Remote, "refused "), got[i])
			}
			continue
		}
		if got[i] != want[i] {
			t.Errorf("entry %q, peer %q: front %+v, direct %+v", inputs[i].Trusted[0], inputs[i].Peer, want[i], got[i])
		}
		if want[i].Remote == "192.0.2.1:0" {
			trusted++
		}
	}
	if trusted < len(inputs)/20 || refused < len(inputs)/10 || refused > len(inputs)/2 {
		t.Errorf("%d trusted and %d refused of %d: the generator is off", trusted, refused, len(inputs))
	}
	t.Logf("%d entry and peer pairs: %d trusted, %d entries refused", len(inputs), trusted, refused)
}

var (
	fwdEntrySeeds = []string{"10.0.0.0/8", "192.0.2.137/25", "127.0.0.1", "0.0.0.0/0", "::/0", "2001:db8::/32", "2001:db8:1::/48",
		"::ffff:10.0.0.0/104", "::ffff:0:0/96", "::ffff:10.0.0.1", "fe80::1%eth0", "fe80::1%eth0/64", "fe80::/10", "::1", "::/95", "::/97", "1.2.3.4/32",
		"::1.2.3.4/120", "2001:db8::1/128", "::ffff:0:0/95"}
	fwdPeerSeeds = []string{"10.0.0.5:1", "127.0.0.1:8080", "[::ffff:10.0.0.5]:80", "[::1]:1", "[2001:db8::5]:443", "[2001:db8:1::9]:2",
		"[fe80::1%eth0]:3", "[fe80::1]:3", "[fe80::2]:3", "192.0.2.200:65535", "[::1.2.3.4]:1", "[::ffff:1.2.3.4]:1", "1.2.3.4:0", "[::]:1", "0.0.0.0:1"}
)

// fwdMutate returns a seed as is, or with a few characters changed, added or
// removed: mostly what netip still reads, often what it just refuses.
func fwdMutate(rng *rand.Rand, seeds []string) string {
	s := []byte(seeds[rng.IntN(len(seeds))])
	const alphabet = "0123456789abcdefABCDEFx:.%/[]-+ "
	for n := []int{0, 0, 0, 1, 1, 2}[rng.IntN(6)]; n > 0 && len(s) > 0; n-- {
		i := rng.IntN(len(s))
		c := alphabet[rng.IntN(len(alphabet))]
		switch rng.IntN(3) {
		case 0:
			s[i] = c
		case 1:
			s = append(s[:i], append([]byte{c}, s[i:]...)...)
		default:
			s = append(s[:i], s[i+1:]...)
		}
	}
	return string(s)
}
