package main

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// PHP's own request parsing is the reference: $_COOKIE, $_GET, $_POST and
// HTTP_COOKIE as `php -S` builds them from the same bytes must be what a
// Ferry worker gets, pure PHP and with ext/ferry.

// phpBuiltin starts PHP's built-in server on a free port with script as the
// router and returns its address. It is stopped by pid when the test ends.
func phpBuiltin(t *testing.T, script string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command("php", "-S", addr, script)
	out, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = cmd.Stderr
	if err := cmd.Start(); err != nil {
		t.Skipf("php -S: %v", err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	started := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "started") {
				started <- true
				io.Copy(io.Discard, out)
				return
			}
		}
		started <- false
	}()
	select {
	case ok := <-started:
		if !ok {
			t.Fatal("php -S exited before it started")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("php -S did not start")
	}
	return addr
}

// inputsRequest is one request's parts that PHP parses.
type inputsRequest struct {
	query, cookie, body string
}

func (r inputsRequest) String() string {
	return fmt.Sprintf("query %q cookie %q body %q", r.query, r.cookie, r.body)
}

// send writes the request as these bytes and returns the answer's body.
func (r inputsRequest) send(t *testing.T, addr string) (int, string) {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	target := "/p"
	if r.query != "" {
		target += "?" + r.query
	}
	raw := "POST " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	if r.cookie != "" {
		raw += "Cookie: " + r.cookie + "\r\n"
	}
	raw += "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: " + strconv.Itoa(len(r.body)) +
		"\r\nConnection: close\r\n\r\n" + r.body
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%s: %v: %v", addr, r, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// pick concatenates 1..n tokens.
func pick(rng *rand.Rand, tokens []string, n int) string {
	var b strings.Builder
	for i := rng.IntN(n) + 1; i > 0; i-- {
		b.WriteString(tokens[rng.IntN(len(tokens))])
	}
	return b.String()
}

var (
	cookieTokens = []string{";", ";", "; ", ";;", ",", ", ", "=", "=", "==", ".", "[", "]", "[]", "[x]", " ", "\t",
		"\"", "%", "%2", "%41", "%5B", "%5d", "%00", "%zz", "%2B", "+", "_", "a", "a", "b", "c", "0", "1", "-1", "01",
		"9223372036854775807", "__Host-", "._Host-", "__Secure-", " __Host-", "\xc3\xa9", "\xff", "\x80", "'", "\\"}
	queryTokens = []string{"&", "&", "=", "=", ".", "%5B", "%5D", "%5B%5D", "+", "%20", "_", "a", "b", "0", "1",
		"-1", "%00", "%41", "%26", "%3D", ";", ",", "%C3%A9", "%FF", "!", "*", "~", "-", "/", "?", ":", "@", "'"}
	bodyTokens = []string{"&", "&", "=", "=", ".", "[", "]", "[]", "[a]", " ", "+", "%", "%2", "%41", "%5B", "%00",
		"\x00", "_", "a", "b", "0", "1", "\xc3\xa9", "\xff", ";", "\"", "%zz"}
)

// inputsCases are the example, a few fixed edges, then generated
// requests from a seeded generator (FERRY_INPUTS_SEED replays another seed).
func inputsCases(t *testing.T, n int) []inputsRequest {
	cases := []inputsRequest{
		{cookie: `a.b=3; a b=4; e; i="q"; j[]=1; j[]=2`},
		{cookie: "a=1; a=2; b[x]=1; b[x]=2; b=3; c=1; c[y]=2; c=3"},
		{cookie: "x=%41%2b+%zz; y=a%00b; ._Host-k=1; __Host-k=2; __Secure.k=3"},
		{cookie: "n[9223372036854775807]=1; n[]=2; m[-5]=a; m[]=b; o[ 7]=1; o[\t]=2; p[a]b=1; q[a[b=1; r[a][b=1"},
		{cookie: strings.Repeat("v[]=1;", 1005)},
		{cookie: "deep" + strings.Repeat("[a]", 64) + "=1; deep=2; ok" + strings.Repeat("[a]", 63) + "=1"},
		{query: "a.b=1&a+b=2&a%5B%5D=3&a%5B%5D=4&c%5Bd%5D=5&e&%5Bx=1&y%5B=1&_GET=1", body: "f.g=1&f.g=2&h[=3&i\x00j=4&k=l\x00m&&n"},
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("FERRY_INPUTS_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (FERRY_INPUTS_SEED)", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	for range n {
		c := strings.Trim(pick(rng, cookieTokens, 24), " \t")
		// php -S skips a "?" that starts the query ("/p??a"), where nginx and FPM keep it.
		q := strings.TrimLeft(pick(rng, queryTokens, 16), "?")
		cases = append(cases, inputsRequest{
			cookie: c,
			query:  q,
			body:   pick(rng, bodyTokens, 16),
		})
	}
	return cases
}

func compareInputs(t *testing.T, ferry, php string, cases []inputsRequest) {
	failures := 0
	for _, c := range cases {
		fs, fb := c.send(t, ferry)
		ps, pb := c.send(t, php)
		if fs != 200 || ps != 200 || fb != pb {
			if failures++; failures <= 5 {
				t.Errorf("%.300v\n ferry %d %.600q\n php   %d %.600q", c, fs, fb, ps, pb)
			}
		}
	}
	if failures > 0 {
		t.Errorf("%d of %d requests parsed differently from PHP", failures, len(cases))
	}
}

// sendH2 sends the request over prior-knowledge h2c: Go's client splits the
// cookie into fields that the server joins again.
func (r inputsRequest) sendH2(t *testing.T, client *http.Client, base string) (int, string) {
	t.Helper()
	url := base + "/p"
	if r.query != "" {
		url += "?" + r.query
	}
	req, err := http.NewRequest("POST", url, strings.NewReader(r.body))
	if err != nil {
		t.Fatalf("%v: %v", r, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if r.cookie != "" {
		req.Header["Cookie"] = []string{r.cookie}
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%v: %v", r, err)
	}
	if resp.ProtoMajor != 2 {
		t.Fatalf("answered over %s", resp.Proto)
	}
	return resp.StatusCode, readAll(t, resp)
}

func TestInputsParsedAsPHPDoesOverH2C(t *testing.T) {
	php := phpBuiltin(t, filepath.Join(mustWd(t), "testdata", "inputs_php.php"))
	t.Setenv("FERRY_PHP_EXTENSION", "off")
	cfg := strings.Replace(appConfig(""), "testdata/app.php", "testdata/inputs.php", 1)
	s := startFerry(t, strings.Replace(cfg, "  max_body_size: 1MiB\n", "  max_body_size: 1MiB\n  http2:\n    h2c: true\n", 1))
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	h2c := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	failures := 0
	cases := inputsCases(t, 200)
	for _, c := range cases {
		if strings.ContainsAny(c.cookie, "\x00") {
			continue // no NUL in an HTTP/2 field
		}
		fs, fb := c.sendH2(t, h2c, s.url)
		ps, pb := c.send(t, php)
		// HTTP/2 carries the cookie in fields that are joined with "; "
		// (RFC 9113 §8.2.3), so HTTP_COOKIE may differ in spacing.
		fb, _, _ = strings.Cut(fb, `s:11:"http_cookie"`)
		pb, _, _ = strings.Cut(pb, `s:11:"http_cookie"`)
		if fs != 200 || ps != 200 || fb != pb {
			if failures++; failures <= 5 {
				t.Errorf("%.300v\n ferry %d %.600q\n php   %d %.600q", c, fs, fb, ps, pb)
			}
		}
	}
	if failures > 0 {
		t.Errorf("%d of %d requests parsed differently from PHP", failures, len(cases))
	}
}

func TestInputsParsedAsPHPDoes(t *testing.T) {
	php := phpBuiltin(t, filepath.Join(mustWd(t), "testdata", "inputs_php.php"))
	n := 300
	if s, err := strconv.Atoi(os.Getenv("FERRY_INPUTS_N")); err == nil {
		n = s
	}
	cases := inputsCases(t, n)
	for _, mode := range []string{"pure", "ext"} {
		t.Run(mode, func(t *testing.T) {
			if mode == "pure" {
				frontOnly(t, "direct mode needs ext/ferry")
			}
			extension := "off"
			if mode == "ext" {
				extension = extensionSO(t)
			}
			t.Setenv("FERRY_PHP_EXTENSION", extension)
			cfg := strings.Replace(appConfig(""), "testdata/app.php", "testdata/inputs.php", 1)
			s := startFerry(t, strings.Replace(cfg, "num_workers: 2", "num_workers: 1", 1))
			compareInputs(t, strings.TrimPrefix(s.url, "http://"), php, cases)
		})
	}
}

// FPM behind nginx is the other reference. Not for two Cookie lines, where
// nginx decides what FPM gets: 1.23 and later join them with "; ", as Ferry
// does (and HTTP/2 does, RFC 9113 §8.2.3), older ones pass the last only.
func TestInputsParsedAsFPMDoes(t *testing.T) {
	nginx, err1 := exec.LookPath("nginx")
	fpm, err2 := exec.LookPath("php-fpm8.2")
	if err1 != nil || err2 != nil {
		t.Skip("nginx or php-fpm8.2 not installed (Debian: nginx-light php8.2-fpm)")
	}
	dir := t.TempDir()
	app := filepath.Join(dir, "app")
	script, err := os.ReadFile(filepath.Join(mustWd(t), "testdata", "inputs_php.php"))
	if err == nil {
		err = os.Mkdir(app, 0o755)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(app, "index.php"), script, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	fpmURL := startNginxFPM(t, nginx, fpm, app, dir)
	t.Setenv("FERRY_PHP_EXTENSION", "off")
	cfg := strings.Replace(appConfig(""), "testdata/app.php", "testdata/inputs.php", 1)
	s := startFerry(t, strings.Replace(cfg, "num_workers: 2", "num_workers: 1", 1))
	// php -S drops a "?" that starts the query; nginx and FPM keep it, as Ferry does.
	cases := append(inputsCases(t, 150), inputsRequest{query: "?a=1&?b"})
	compareInputs(t, strings.TrimPrefix(s.url, "http://"), strings.TrimPrefix(fpmURL, "http://"), cases)
}

func mustWd(t *testing.T) string {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}
