package gateway

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The reference parser: RFC 9112 §3.2, RFC 9110 §4.2, §7.2 and RFC 3986
// transcribed rule by rule, with Ferry's documented changes to them (see
// grammar.go) marked "Ferry:". It is slow and has no shortcuts: a rule
// returns every position where a match of it starting at i can end, so
// alternation, concatenation and repetition are what ABNF says and nothing is
// decided greedily. The production validator must agree with it on every
// input (FuzzTargetGrammar).

type rule func(s string, i int) []int

// full reports whether r matches all of s.
func full(r rule, s string) bool { return slices.Contains(r(s, 0), len(s)) }

func dedupe(p []int) []int { slices.Sort(p); return slices.Compact(p) }

// lit is a case-sensitive literal (ABNF %s"..."; for the one-character
// literals used below case does not matter).
func lit(x string) rule {
	return func(s string, i int) []int {
		if strings.HasPrefix(s[i:], x) {
			return []int{i + len(x)}
		}
		return nil
	}
}

// litFold is an ABNF quoted string: case-insensitive.
func litFold(x string) rule {
	return func(s string, i int) []int {
		if len(s)-i >= len(x) && strings.EqualFold(s[i:i+len(x)], x) {
			return []int{i + len(x)}
		}
		return nil
	}
}

// rng is %xLO-HI.
func rng(lo, hi byte) rule {
	return func(s string, i int) []int {
		if i < len(s) && s[i] >= lo && s[i] <= hi {
			return []int{i + 1}
		}
		return nil
	}
}

// chars is an alternation of one-character literals.
func chars(set string) rule {
	return func(s string, i int) []int {
		if i < len(s) && strings.IndexByte(set, s[i]) >= 0 {
			return []int{i + 1}
		}
		return nil
	}
}

func alt(rs ...rule) rule {
	return func(s string, i int) (out []int) {
		for _, r := range rs {
			out = append(out, r(s, i)...)
		}
		return dedupe(out)
	}
}

func seq(rs ...rule) rule {
	return func(s string, i int) []int {
		cur := []int{i}
		for _, r := range rs {
			var next []int
			for _, p := range cur {
				next = append(next, r(s, p)...)
			}
			if cur = dedupe(next); len(cur) == 0 {
				return nil
			}
		}
		return cur
	}
}

// rep is min*max( r ); max < 0 is unbounded.
func rep(min, max int, r rule) rule {
	return func(s string, i int) []int {
		var out []int
		seen := map[int]bool{}
		cur := []int{i}
		for n := 0; ; n++ {
			if n >= min {
				out = append(out, cur...)
			}
			if n == max {
				break
			}
			var next []int
			for _, p := range cur {
				for _, q := range r(s, p) {
					// Past min, a position reached before yields nothing new.
					if n+1 <= min || !seen[q] {
						next = append(next, q)
					}
				}
			}
			if n+1 >= min {
				for _, q := range next {
					seen[q] = true
				}
			}
			if cur = dedupe(next); len(cur) == 0 {
				break
			}
		}
		return dedupe(out)
	}
}

func opt(r rule) rule { return rep(0, 1, r) }

var (
	ALPHA  = alt(rng('a', 'z'), rng('A', 'Z'))
	DIGIT  = rng('0', '9')
	HEXDIG = alt(DIGIT, rng('a', 'f'), rng('A', 'F')) // ABNF strings are case-insensitive

	// RFC 3986 §2
	unreserved = alt(ALPHA, DIGIT, chars("-._~"))
	subDelims  = chars("!$&'()*+,;=")
	pctEncoded = seq(lit("%"), HEXDIG, HEXDIG)

	// RFC 3986 §3.3, §3.4
	pchar = alt(unreserved, pctEncoded, subDelims, chars(":@"))
	// Ferry: bytes browsers and nginx pass unencoded.
	tolerated   = alt(chars("\"<>[\\]^`{|}"), rng(0x80, 0xff))
	segment     = rep(0, -1, alt(pchar, tolerated))                        // RFC: *pchar
	query       = rep(0, -1, alt(pchar, chars("/?"), tolerated, lit("%"))) // RFC: *( pchar / "/" / "?" )
	pathAbempty = rep(0, -1, seq(lit("/"), segment))

	// RFC 9110 §4.1
	absolutePath = rep(1, -1, seq(lit("/"), segment))

	// RFC 3986 §3.2.2
	decOctet = alt(
		DIGIT,
		seq(rng('1', '9'), DIGIT),
		seq(lit("1"), DIGIT, DIGIT),
		seq(lit("2"), rng('0', '4'), DIGIT),
		seq(lit("25"), rng('0', '5')),
	)
	IPv4address = seq(decOctet, lit("."), decOctet, lit("."), decOctet, lit("."), decOctet)
	h16         = rep(1, 4, HEXDIG)
	h16c        = seq(h16, lit(":"))
	ls32        = alt(seq(h16, lit(":"), h16), IPv4address)
	IPv6address = alt(
		seq(rep(6, 6, h16c), ls32),
		seq(lit("::"), rep(5, 5, h16c), ls32),
		seq(opt(h16), lit("::"), rep(4, 4, h16c), ls32),
		seq(opt(seq(rep(0, 1, h16c), h16)), lit("::"), rep(3, 3, h16c), ls32),
		seq(opt(seq(rep(0, 2, h16c), h16)), lit("::"), rep(2, 2, h16c), ls32),
		seq(opt(seq(rep(0, 3, h16c), h16)), lit("::"), h16c, ls32),
		seq(opt(seq(rep(0, 4, h16c), h16)), lit("::"), ls32),
		seq(opt(seq(rep(0, 5, h16c), h16)), lit("::"), h16),
		seq(opt(seq(rep(0, 6, h16c), h16)), lit("::")),
	)
	IPvFuture = seq(litFold("v"), rep(1, -1, HEXDIG), lit("."), rep(1, -1, alt(unreserved, subDelims, lit(":"))))
	IPLiteral = seq(lit("["), alt(IPv6address, IPvFuture), lit("]"))
	// Ferry: not empty, no pct-encoded.
	regName = rep(1, -1, alt(unreserved, subDelims)) // RFC: *( unreserved / pct-encoded / sub-delims )
	port    = rep(0, -1, DIGIT)

	// RFC 9110 §4.1, §7.2
	uriHost   = alt(IPLiteral, IPv4address, regName)
	hostField = seq(uriHost, opt(seq(lit(":"), port)))

	// RFC 9112 §3.2
	originForm    = seq(absolutePath, opt(seq(lit("?"), query)))
	authorityForm = seq(uriHost, lit(":"), port)
	asteriskForm  = lit("*")
	// Ferry: only http-URI and https-URI (RFC 9110 §4.2.1, §4.2.2), whose
	// authority has no userinfo (§4.2.4), stand for absolute-URI.
	absoluteForm = seq(alt(litFold("http"), litFold("https")), lit("://"), uriHost, opt(seq(lit(":"), port)),
		pathAbempty, opt(seq(lit("?"), query)))
)

// refHost is Host = uri-host [ ":" port ] with the rules beyond the syntax:
// a port of at most 65535, a registered name without an empty label.
func refHost(h string) bool {
	if !full(hostField, h) {
		return false
	}
	name, p := h, ""
	if strings.HasPrefix(h, "[") {
		end := strings.Index(h, "]")
		name, p = "", strings.TrimPrefix(h[end+1:], ":") // an IP-literal has no labels
	} else if i := strings.Index(h, ":"); i >= 0 {
		name, p = h[:i], h[i+1:]
	}
	if p = strings.TrimLeft(p, "0"); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n > 65535 {
			return false
		}
	}
	return name != "." && !strings.Contains(name, "..")
}

// refPath is the decoded-path rule: no NUL, no ".." above the root.
func refPath(p string) bool {
	d, err := url.PathUnescape(p)
	if err != nil || strings.Contains(d, "\x00") {
		return false
	}
	depth := 0
	for _, seg := range strings.Split(d, "/") {
		switch seg {
		case "", ".":
		case "..":
			if depth--; depth < 0 {
				return false
			}
		default:
			depth++
		}
	}
	return true
}

// refTarget is the request-target of a request with this method: its form,
// and for absolute-form the authority and the rest.
func refTarget(method, t string) (form targetForm, authority, rest string) {
	switch {
	case method == "CONNECT":
		if full(authorityForm, t) && !strings.HasSuffix(t, ":") && refHost(t) {
			return formAuthority, "", ""
		}
	case t == "*":
		if full(asteriskForm, t) && method == "OPTIONS" {
			return formAsterisk, "", ""
		}
	case full(originForm, t):
		if path, _, _ := strings.Cut(t, "?"); refPath(path) {
			return formOrigin, "", ""
		}
	case full(absoluteForm, t):
		_, after, _ := strings.Cut(t, "://")
		end := strings.IndexAny(after, "/?")
		if end < 0 {
			end = len(after)
		}
		authority, rest = after[:end], after[end:]
		if path, _, _ := strings.Cut(rest, "?"); refHost(authority) && refPath(path) {
			return formAbsolute, authority, rest
		}
	}
	return formInvalid, "", ""
}
