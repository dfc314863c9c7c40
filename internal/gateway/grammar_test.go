package gateway

import (
	"strings"
	"testing"
)

// Every case is checked twice: the production validator and the reference
// parser must both give the verdict of the table.

var hostCases = []struct {
	rule, host string
	ok         bool
}{
	{"reg-name", "a", true},
	{"reg-name", "a.b", true},
	{"reg-name", "A.B", true},
	{"reg-name", "xn--bcher-kva.example", true},
	{"reg-name unreserved", "a-b_c~d", true},
	{"reg-name sub-delims", "a!$&'()*+,;=b", true},
	{"reg-name trailing dot", "a.", true},
	{"reg-name leading dot", ".a", true},
	{"reg-name holds IPv4address", "1.2.3.4", true},
	{"reg-name beyond IPv4address", "256.1.1.1", true},
	{"reg-name empty (nginx)", "", false},
	{"reg-name only a dot (nginx)", ".", false},
	{"reg-name empty label (nginx)", "a..b", false},
	{"reg-name empty label (nginx)", "..", false},
	{"reg-name pct-encoded (Ferry)", "a%41", false},
	{"reg-name pct-encoded (Ferry)", "a%c3%a9", false},
	{"reg-name bad escape", "a%zz", false},
	{"reg-name space", "a b", false},
	{"reg-name slash (nginx)", "a/b", false},
	{"reg-name backslash", `a\b`, false},
	{"reg-name userinfo", "u@a", false},
	{"reg-name gen-delims", "a#b", false},
	{"reg-name gen-delims", "a?b", false},
	{"reg-name NUL", "a\x00", false},
	{"reg-name DEL", "a\x7f", false},
	{"reg-name tab", "a\tb", false},
	{"reg-name non-ASCII", "a\xc3\xa9", false},
	{"port", "a:80", true},
	{"port empty", "a:", true},
	{"port zero", "a:0", true},
	{"port max", "a:65535", true},
	{"port leading zeros", "a:000080", true},
	{"port out of range", "a:65536", false},
	{"port overflow", "a:99999999999999999999", false},
	{"port letters", "a:x", false},
	{"port twice", "a:1:2", false},
	{"port without host", ":80", false},
	{"IP-literal", "[::1]", true},
	{"IP-literal port", "[::1]:80", true},
	{"IP-literal IPv4 tail", "[::ffff:1.2.3.4]", true},
	{"IP-literal unclosed", "[::1", false},
	{"IP-literal junk after", "[::1]x", false},
	{"IP-literal bad port", "[::1]:x", false},
	{"IP-literal empty", "[]", false},
	{"IP-literal not IPv6", "[zz]", false},
	{"IP-literal IPv4", "[1.2.3.4]", false},
	{"IP-literal zone (RFC 6874 is not HTTP's)", "[fe80::1%25eth0]", false},
	{"IP-literal bare IPv6", "::1", false},
	{"IP-literal two closings", "[::1]]", false},
	{"IPvFuture", "[v1.x]", true},
	{"IPvFuture", "[V1F.a:b!]", true},
	{"IPvFuture dots", "[v1.a..b]", true},
	{"IPvFuture no version", "[v.x]", false},
	{"IPvFuture nothing after the dot", "[v1.]", false},
	{"IPvFuture no dot", "[v1x]", false},
	{"IPvFuture bad byte", "[v1.a/b]", false},
}

func TestGrammarHost(t *testing.T) {
	for _, c := range hostCases {
		if got := validHostField([]byte(c.host)); got != c.ok {
			t.Errorf("%s: validHostField(%q) = %v, want %v", c.rule, c.host, got, c.ok)
		}
		if got := refHost(c.host); got != c.ok {
			t.Errorf("%s: reference Host(%q) = %v, want %v", c.rule, c.host, got, c.ok)
		}
	}
}

func TestGrammarIPv6address(t *testing.T) {
	for _, c := range []struct {
		s  string
		ok bool
	}{
		{"::", true}, {"::1", true}, {"1::", true}, {"1:2:3:4:5:6:7:8", true},
		{"1:2:3:4:5:6:1.2.3.4", true}, {"::ffff:1.2.3.4", true}, {"1::2:3", true},
		{"1:2:3:4:5:6:7::", true}, {"::2:3:4:5:6:7:8", true}, {"ABCD:ef01::", true},
		{"0000:0000::1", true}, {"1:2:3:4:5::1.2.3.4", true}, {"::1.2.3.4", true},
		{"", false}, {":", false}, {":::", false}, {"1:2:3:4:5:6:7:8:9", false},
		{"1::2::3", false}, {"12345::", false}, {"1:2:3:4:5:6:7", false},
		{"::1.2.3.04", false}, {"::1.2.3", false}, {"::256.1.1.1", false}, {"1.2.3.4", false},
		{"g::", false}, {"1:2:3:4:5:6:7:8::", false}, {"1:2:3:4:5:6:7:1.2.3.4", false},
		{"::1.2.3.4:1", false}, {":1::", false}, {"1:", false},
	} {
		if got := validIPLiteral([]byte(c.s)); got != c.ok {
			t.Errorf("validIPLiteral(%q) = %v, want %v", c.s, got, c.ok)
		}
		if got := full(IPv6address, c.s); got != c.ok {
			t.Errorf("reference IPv6address(%q) = %v, want %v", c.s, got, c.ok)
		}
	}
}

// IPv4address is a reg-name as well, so the production validator needs no
// rule of its own for it; the reference has it, as uri-host lists it.
func TestGrammarIPv4address(t *testing.T) {
	for _, c := range []struct {
		s  string
		ok bool
	}{
		{"0.0.0.0", true}, {"255.255.255.255", true}, {"1.2.3.4", true}, {"10.0.0.1", true},
		{"199.250.249.100", true},
		{"256.1.1.1", false}, {"01.2.3.4", false}, {"1.2.3", false}, {"1.2.3.4.5", false},
		{"1..2.3", false}, {"a.b.c.d", false}, {"-1.2.3.4", false}, {"1.2.3.260", false},
	} {
		if got := full(IPv4address, c.s); got != c.ok {
			t.Errorf("reference IPv4address(%q) = %v, want %v", c.s, got, c.ok)
		}
		if c.ok && !validHostField([]byte(c.s)) {
			t.Errorf("validHostField(%q) refuses an IPv4address", c.s)
		}
	}
}

var targetCases = []struct {
	rule, method, target string
	form                 targetForm
}{
	// origin-form = absolute-path [ "?" query ]
	{"absolute-path", "GET", "/", formOrigin},
	{"absolute-path", "GET", "/a/b/c", formOrigin},
	{"absolute-path empty segments", "GET", "//a", formOrigin},
	{"absolute-path empty segments", "GET", "/a//b/", formOrigin},
	{"absolute-path", "GET", "/a.php", formOrigin},
	{"absolute-path", "GET", "/.well-known/x", formOrigin},
	{"absolute-path dot-segments", "GET", "/a/./b", formOrigin},
	{"absolute-path dot-segments", "GET", "/a/../b", formOrigin},
	{"absolute-path dot-segments", "GET", "/a/..", formOrigin},
	{"absolute-path dot-segments", "GET", "/./a", formOrigin},
	{"absolute-path dots that are names", "GET", "/.../..a/a..", formOrigin},
	{"absolute-path no slash", "GET", "a", formInvalid},
	{"absolute-path no slash", "GET", "?a", formInvalid},
	{"absolute-path empty", "GET", "", formInvalid},
	{"absolute-path above the root (nginx)", "GET", "/..", formInvalid},
	{"absolute-path above the root (nginx)", "GET", "/../a", formInvalid},
	{"absolute-path above the root (nginx)", "GET", "/a/../..", formInvalid},
	{"absolute-path above the root (nginx)", "GET", "/a//../../b", formInvalid},
	{"absolute-path above the root, escaped (nginx)", "GET", "/%2e%2e", formInvalid},
	{"absolute-path above the root, escaped (nginx)", "GET", "/%2E%2E/a", formInvalid},
	{"absolute-path above the root, escaped (nginx)", "GET", "/.%2e", formInvalid},
	{"absolute-path above the root, escaped slash (nginx)", "GET", "/a/..%2f..%2Fb", formInvalid},
	{"absolute-path escaped dots inside a name", "GET", "/a%2e%2e/b", formOrigin},
	{"segment pchar", "GET", "/a:b@c!$&'()*+,;=~_-", formOrigin},
	{"segment tolerated (Ferry)", "GET", "/a\"<>[\\]^`{|}b", formOrigin},
	{"segment tolerated non-ASCII (Ferry)", "GET", "/\xc3\xa9\xff", formOrigin},
	{"segment space", "GET", "/a b", formInvalid},
	{"segment control", "GET", "/a\x01", formInvalid},
	{"segment NUL", "GET", "/a\x00", formInvalid},
	{"segment DEL", "GET", "/a\x7f", formInvalid},
	{"segment tab", "GET", "/a\tb", formInvalid},
	{"segment fragment", "GET", "/a#", formInvalid},
	{"segment fragment", "GET", "/a#b", formInvalid},
	{"pct-encoded", "GET", "/%41%2f%2F%7e", formOrigin},
	{"pct-encoded control", "GET", "/%0a%7f", formOrigin},
	{"pct-encoded NUL (nginx)", "GET", "/%00", formInvalid},
	{"pct-encoded NUL (nginx)", "GET", "/a%00b", formInvalid},
	{"pct-encoded lone", "GET", "/%", formInvalid},
	{"pct-encoded short", "GET", "/%4", formInvalid},
	{"pct-encoded not hex", "GET", "/%4g", formInvalid},
	{"pct-encoded not hex", "GET", "/%g4", formInvalid},
	{"query", "GET", "/?", formOrigin},
	{"query", "GET", "/a?b=c&d", formOrigin},
	{"query slash and question mark", "GET", "/a?b?c/d", formOrigin},
	{"query dots are no segments", "GET", "/a?../..", formOrigin},
	{"query tolerated (Ferry)", "GET", "/?a[]=1&b={\"x\"}|^`\\<>\xc3\xa9", formOrigin},
	{"query lone percent (Ferry)", "GET", "/?%", formOrigin},
	{"query bad escape (Ferry)", "GET", "/?a=%zz", formOrigin},
	{"query escaped NUL", "GET", "/?%00", formOrigin},
	{"query space", "GET", "/?a b", formInvalid},
	{"query control", "GET", "/?a\x1f", formInvalid},
	{"query DEL", "GET", "/?\x7f", formInvalid},
	{"query fragment", "GET", "/?a#b", formInvalid},
	{"origin-form with OPTIONS", "OPTIONS", "/a", formOrigin},
	{"origin-form with CONNECT", "CONNECT", "/a", formInvalid},

	// asterisk-form = "*", OPTIONS only
	{"asterisk-form", "OPTIONS", "*", formAsterisk},
	{"asterisk-form with GET", "GET", "*", formInvalid},
	{"asterisk-form with POST", "POST", "*", formInvalid},
	{"asterisk-form with CONNECT", "CONNECT", "*", formInvalid},
	{"asterisk-form and more", "OPTIONS", "**", formInvalid},
	{"asterisk-form and more", "OPTIONS", "*/", formInvalid},

	// authority-form = uri-host ":" port, CONNECT only
	{"authority-form", "CONNECT", "a:443", formAuthority},
	{"authority-form", "CONNECT", "[::1]:443", formAuthority},
	{"authority-form", "CONNECT", "1.2.3.4:1", formAuthority},
	{"authority-form empty port", "CONNECT", "a:", formInvalid},
	{"authority-form no port", "CONNECT", "a", formInvalid},
	{"authority-form no port", "CONNECT", "[::1]", formInvalid},
	{"authority-form port range", "CONNECT", "a:65536", formInvalid},
	{"authority-form userinfo", "CONNECT", "u@a:443", formInvalid},
	{"authority-form path", "CONNECT", "a:443/x", formInvalid},
	{"authority-form absolute", "CONNECT", "http://a:443/", formInvalid},
	{"authority-form with GET", "GET", "a:443", formInvalid},
	{"authority-form with OPTIONS", "OPTIONS", "a:443", formInvalid},

	// absolute-form = http-URI / https-URI (Ferry)
	{"absolute-form", "GET", "http://a", formAbsolute},
	{"absolute-form", "GET", "http://a/", formAbsolute},
	{"absolute-form scheme case", "GET", "HTTP://A/b", formAbsolute},
	{"absolute-form https", "POST", "https://a:443/b?c", formAbsolute},
	{"absolute-form query without path", "GET", "http://a?b", formAbsolute},
	{"absolute-form IP-literal", "GET", "http://[::1]/", formAbsolute},
	{"absolute-form IPvFuture", "GET", "http://[v1.x]:8/", formAbsolute},
	{"absolute-form empty port", "GET", "http://a:/x", formAbsolute},
	{"absolute-form empty segments", "GET", "http://a//b", formAbsolute},
	{"absolute-form tolerated", "GET", "http://a/\"?\xc3", formAbsolute},
	{"absolute-form OPTIONS", "OPTIONS", "http://a/", formAbsolute},
	{"absolute-form empty host", "GET", "http://", formInvalid},
	{"absolute-form empty host", "GET", "http:///a", formInvalid},
	{"absolute-form empty host", "GET", "http://:80/", formInvalid},
	{"absolute-form userinfo", "GET", "http://u@a/", formInvalid},
	{"absolute-form userinfo", "GET", "http://u:p@a/", formInvalid},
	{"absolute-form bad host", "GET", "http://a..b/", formInvalid},
	{"absolute-form bad host", "GET", "http://[zz]/", formInvalid},
	{"absolute-form bad host", "GET", "http://a%41/", formInvalid},
	{"absolute-form bad host", "GET", "http://a\\b/", formInvalid},
	{"absolute-form bad port", "GET", "http://a:x/", formInvalid},
	{"absolute-form bad port", "GET", "http://a:65536/", formInvalid},
	{"absolute-form fragment", "GET", "http://a/#f", formInvalid},
	{"absolute-form above the root", "GET", "http://a/../b", formInvalid},
	{"absolute-form bad escape", "GET", "http://a/%zz", formInvalid},
	{"absolute-form other scheme (Ferry)", "GET", "ftp://a/", formInvalid},
	{"absolute-form other scheme (Ferry)", "GET", "h+t.t-p://a/", formInvalid},
	{"absolute-form path-absolute (Ferry)", "GET", "http:/a", formInvalid},
	{"absolute-form path-rootless (Ferry)", "GET", "http:a", formInvalid},
	{"absolute-form scheme", "GET", "1http://a/", formInvalid},
	{"absolute-form with CONNECT", "CONNECT", "http://a/", formInvalid},
}

func TestGrammarTarget(t *testing.T) {
	for _, c := range targetCases {
		if got := parseTarget([]byte(c.method), []byte(c.target)); got != c.form {
			t.Errorf("%s: parseTarget(%s %q) = %d, want %d", c.rule, c.method, c.target, got, c.form)
		}
		if got, _, _ := refTarget(c.method, c.target); got != c.form {
			t.Errorf("%s: reference (%s %q) = %d, want %d", c.rule, c.method, c.target, got, c.form)
		}
	}
}

func TestGrammarAbsoluteSplit(t *testing.T) {
	for _, c := range []struct{ target, authority, rest string }{
		{"http://a", "a", ""},
		{"http://a?b", "a", "?b"},
		{"HTTPS://A:8/b/c?d?e", "A:8", "/b/c?d?e"},
		{"http://[::1]:80//x", "[::1]:80", "//x"},
	} {
		a, r, ok := splitAbsolute([]byte(c.target))
		ra, rr := "", ""
		if f, x, y := refTarget("GET", c.target); f == formAbsolute {
			ra, rr = x, y
		}
		if !ok || string(a) != c.authority || string(r) != c.rest || ra != c.authority || rr != c.rest {
			t.Errorf("%q: split %q %q %v, reference %q %q; want %q %q", c.target, a, r, ok, ra, rr, c.authority, c.rest)
		}
	}
}

// FuzzTargetGrammar: whatever the production validator accepts, the
// reference parser accepts in the same form, and the other way round.
func FuzzTargetGrammar(f *testing.F) {
	for _, c := range targetCases {
		f.Add(c.method, c.target, "a:80")
	}
	for _, c := range hostCases {
		f.Add("GET", "/", c.host)
	}
	f.Fuzz(func(t *testing.T, method, target, host string) {
		if len(target) > 512 || len(host) > 512 {
			return // the reference is cubic at worst
		}
		switch strings.ToUpper(method) {
		case "CONNECT", "OPTIONS":
			method = strings.ToUpper(method)
		default:
			method = "GET"
		}
		form := parseTarget([]byte(method), []byte(target))
		rf, ra, rr := refTarget(method, target)
		if form != rf {
			t.Fatalf("%s %q: production form %d, reference %d", method, target, form, rf)
		}
		if form == formAbsolute {
			a, r, _ := splitAbsolute([]byte(target))
			if string(a) != ra || string(r) != rr {
				t.Fatalf("%q: production splits %q %q, reference %q %q", target, a, r, ra, rr)
			}
		}
		if p, r := validHostField([]byte(host)), refHost(host); p != r {
			t.Fatalf("Host %q: production %v, reference %v", host, p, r)
		}
		if strings.HasPrefix(host, "[") {
			if end := strings.IndexByte(host, ']'); end > 0 {
				s := host[1:end]
				if p, r := validIPLiteral([]byte(s)), full(IPv6address, s) || full(IPvFuture, s); p != r {
					t.Fatalf("IP-literal %q: production %v, reference %v", s, p, r)
				}
			}
		}
	})
}
