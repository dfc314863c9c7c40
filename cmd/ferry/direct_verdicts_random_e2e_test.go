package main

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestDirectParserVerdictsMatchTheFrontRandomly is the property behind the table test:
// for requests drawn from a small grammar (methods, targets and field values with hostile
// bytes, Host counts, Content-Length and Transfer-Encoding combinations, chunked bodies
// right and wrong), the parser's answers are the front's. Seeded: FERRY_VERDICT_SEED
// replays a run, FERRY_VERDICT_N sets how many requests.
func TestDirectParserVerdictsMatchTheFrontRandomly(t *testing.T) {
	so := extensionSO(t)
	seed, n := int64(34), 400
	if s, err := strconv.ParseInt(os.Getenv("FERRY_VERDICT_SEED"), 10, 64); err == nil {
		seed = s
	}
	if v, err := strconv.Atoi(os.Getenv("FERRY_VERDICT_N")); err == nil && v > 0 {
		n = v
	}
	t.Logf("seed %d, %d requests", seed, n)
	g := &requestGen{r: rand.New(rand.NewSource(seed))}
	front := startVerdictFront(t)
	names, raws := make([]string, n), make([]string, n)
	got := make([][]verdict, n)
	for i := range raws {
		names[i], raws[i] = fmt.Sprintf("seed %d #%d", seed, i), g.request()
		got[i] = front.answers(raws[i])
	}
	parsed := parserAnswers(t, so, raws)
	compareVerdicts(t, names, raws, got, parsed)
	reasons := map[string]int{}
	for _, answers := range parsed {
		for _, a := range answers {
			reasons[a.Error]++
		}
	}
	t.Logf("the parser's refusals by reason: %v", reasons)
	// the grammar must reach both sides of the verdicts, or the property says little
	statuses := map[int]int{}
	for _, answers := range got {
		for _, a := range answers {
			statuses[a.Status]++
		}
	}
	t.Logf("the front's answers by status: %v", statuses)
	if statuses[200] < n/20 || statuses[400] < n/20 {
		t.Errorf("too few requests served (%d) or refused (%d) to compare", statuses[200], statuses[400])
	}
}

type requestGen struct{ r *rand.Rand }

func (g *requestGen) pick(s ...string) string { return s[g.r.Intn(len(s))] }
func (g *requestGen) chance(p float64) bool   { return g.r.Float64() < p }

// bytesFrom draws up to max bytes from alphabet, with one byte of any value now and then.
func (g *requestGen) bytesFrom(alphabet string, max int) string {
	var b strings.Builder
	for i, n := 0, g.r.Intn(max+1); i < n; i++ {
		if g.chance(0.01) {
			b.WriteByte(byte(g.r.Intn(256)))
		} else {
			b.WriteByte(alphabet[g.r.Intn(len(alphabet))])
		}
	}
	return b.String()
}

func (g *requestGen) host() string {
	switch g.r.Intn(12) {
	case 0:
		return "[" + g.bytesFrom("0123456789abcdef:.v", 12) + "]" + g.pick("", ":80", ":", ":x")
	case 1:
		return g.bytesFrom("aB.-_~:0123456789@%/", 10)
	default:
		return g.pick("a", "a.b", "A.EXAMPLE", "a:8080", "a:99999", "a..b", "127.0.0.1", "[::1]:1", "", "a", "a.b") + g.pick("", "", "", "", "", ".", ":0")
	}
}

func (g *requestGen) target(method string) string {
	path := "/" + g.bytesFrom("abc/.%20fe?&=;+~!$'()*,:@", 14)
	if g.chance(0.2) {
		path = "/" + g.bytesFrom("abc/.%20fe?#&=;+ \"<>[]^`{|}\\~!$'()*,:@", 14)
	}
	switch g.r.Intn(12) {
	case 0:
		return g.pick("http://", "https://", "HTTP://", "ftp://") + g.host() + g.pick("", "/x", "?q", path)
	case 1:
		return g.pick("*", "a:443", "x", "", "//a/b")
	case 2:
		if method == "CONNECT" {
			return g.host()
		}
	}
	return path
}

func (g *requestGen) chunked() string {
	var b strings.Builder
	for i, n := 0, g.r.Intn(3); i < n; i++ {
		data := g.bytesFrom("xyz\r\n", 8)
		size := strconv.FormatInt(int64(len(data)), 16)
		if g.chance(0.1) {
			size = g.pick("", "z", "1", "0000000000000001", "FFFFFFFFFFFFFFF", "401")
		}
		b.WriteString(size + g.pick("", "", ";e=1", ";\n", " ") + g.pick("\r\n", "\r\n", "\n") + data + g.pick("\r\n", "\r\n", "\n", ""))
	}
	b.WriteString("0" + g.pick("\r\n", "\r\n", "\n", ";x\r\n"))
	if g.chance(0.2) {
		b.WriteString(g.pick("X-T: 1\r\n", "Host: b\r\n", "X Y: 1\r\n", ": e\r\n", "Content-Type: x\r\n"))
	}
	b.WriteString(g.pick("\r\n", "\r\n", "\n"))
	return b.String()
}

func (g *requestGen) request() string {
	eol := "\r\n"
	if g.chance(0.1) {
		eol = "\n"
	}
	var b strings.Builder
	if g.chance(0.05) {
		b.WriteString(g.pick("\r\n", "\n", "\r\n\r\n"))
	}
	method, version, sp := "GET", "HTTP/1.1", " "
	if g.chance(0.5) {
		method = g.pick("POST", "PUT", "OPTIONS", "CONNECT", "get", "G(T", "", "M-"+g.bytesFrom("ABZ!#_", 3))
	}
	if g.chance(0.2) {
		version = g.pick("HTTP/1.0", "HTTP/1.0", "HTTP/1.2", "HTTP/2.0", "HTTP/1.x", "http/1.1", "")
	}
	if g.chance(0.05) {
		sp = g.pick("  ", "", "\t")
	}
	b.WriteString(method + sp + g.target(method) + " " + version + eol)
	for i, n := 0, g.r.Intn(3); i < n && !g.chance(0.3) || i == 0 && g.chance(0.8); i++ {
		b.WriteString(g.pick("Host: ", "Host: ", "host:", "HOST:\t") + g.host() + eol)
	}
	for i, n := 0, g.r.Intn(5); i < n; i++ {
		name := g.pick("X-A", "Accept", "User-Agent", "Cookie", "X_U", "Connection", "Expect", "Trailer")
		if g.chance(0.1) {
			name += g.pick(" ", "(", "\x80", "\t")
		}
		if g.chance(0.03) {
			name = g.pick("", " X", "NoColon")
		}
		value := g.bytesFrom("abc ,;=\t\"/", 12)
		if g.chance(0.7) {
			value = g.bytesFrom("abc ,;=/", 12)
		}
		switch name {
		case "Connection":
			value = g.pick("close", "Close", "keep-alive", "x, keep-alive", "")
		case "Expect":
			value = "100-continue"
		case "Trailer":
			value = g.pick("X-T", "Host", "X,,Y", "Content-Type")
		}
		sep := ": "
		if name == "NoColon" {
			sep = ""
		}
		b.WriteString(name + sep + value + eol)
		if g.chance(0.05) {
			b.WriteString(g.pick(" folded", "\tfolded: x", "  ") + eol)
		}
	}
	body := ""
	switch g.r.Intn(6) {
	case 0:
		body = g.bytesFrom("body", 20)
		cl := strconv.Itoa(len(body))
		if g.chance(0.2) {
			cl = g.pick("", "-1", "+1", "1, 1", " 0x1", "99999999999999999999", "2000", strconv.Itoa(len(body)+3))
		}
		b.WriteString("Content-Length: " + cl + eol)
		if g.chance(0.1) {
			b.WriteString("Content-Length: " + cl + eol)
		}
	case 1:
		b.WriteString("Transfer-Encoding: " + g.pick("chunked", "chunked", "Chunked", "identity", "gzip", "gzip, chunked", "chunked, gzip") + eol)
		body = g.chunked()
		if g.chance(0.1) {
			b.WriteString("Content-Length: 3" + eol)
		}
	}
	b.WriteString(g.pick("Connection: close"+eol, "", "") + eol + body)
	if g.chance(0.05) {
		// and now and then a second request behind it, or the bytes cut short
		if g.chance(0.5) {
			b.WriteString("GET /second HTTP/1.1" + eol + "Host: a" + eol + eol)
		} else {
			return b.String()[:g.r.Intn(b.Len()+1)]
		}
	}
	return b.String()
}
