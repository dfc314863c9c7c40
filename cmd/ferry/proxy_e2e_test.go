package main

import (
	"crypto/tls"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// proxyConfig serves testdata/server.php behind trusted_proxies 127.0.0.1,
// with h2c on the plain port and TLS (HTTP/1.1 and HTTP/2) beside it.
func proxyConfig(t *testing.T, serverExtra, poolExtra string) (cfg string, clients map[string]*http.Client) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	roots := writeCert(t, certFile, keyFile, "proxy")
	cfg = strings.Replace(appConfig(poolExtra), "testdata/app.php", "testdata/server.php", 1)
	h2cOn := "  http2:\n    h2c: true\n"
	if directMode {
		h2cOn = "" // h2c is the front's, on server.address (docs/direct.md)
	}
	cfg = strings.Replace(cfg, "  max_body_size: 1MiB\n", "  max_body_size: 1MiB\n  trusted_proxies: [127.0.0.1/32]\n"+
		h2cOn+"  tls:\n    address: \"127.0.0.1:0\"\n    cert: \""+certFile+"\"\n    key: \""+keyFile+"\"\n"+serverExtra, 1)
	h2c := &http.Transport{Protocols: new(http.Protocols)}
	h2c.Protocols.SetUnencryptedHTTP2(true)
	clients = map[string]*http.Client{"http/1.1": client, "h2c": {Transport: h2c, Timeout: 20 * time.Second}}
	if directMode {
		delete(clients, "h2c")
	}
	for _, h2 := range []bool{false, true} {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, Protocols: new(http.Protocols)}
		tr.Protocols.SetHTTP1(!h2)
		tr.Protocols.SetHTTP2(h2)
		clients[map[bool]string{false: "https/1.1", true: "https/2"}[h2]] = &http.Client{Transport: tr, Timeout: 20 * time.Second}
	}
	return cfg, clients
}

// phpServer sends fields, each value on a field line of its own, and returns
// what $_SERVER said (testdata/server.php).
func phpServer(t *testing.T, c *http.Client, url string, fields [][2]string) map[string]string {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fields {
		req.Header[f[0]] = append(req.Header[f[0]], f[1]) // as given: X_Forwarded_For stays so
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp)
	var saw map[string]string
	if err := json.Unmarshal([]byte(body), &saw); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %q: %v", resp.StatusCode, body, err)
	}
	return saw
}

// The attacks of issue 30 on trusted proxies, through every protocol: a client
// line the proxy appended its own after, and a name with "_" that PHP would
// read as the dashed one.
var proxyAttacks = []struct {
	name   string
	fields [][2]string
	want   map[string]string // "" = absent
}{
	{"two X-Forwarded-For lines",
		[][2]string{{"X-Forwarded-For", "6.6.6.6"}, {"X-Forwarded-For", "192.0.2.1"}, {"X-Forwarded-Proto", "http"}},
		map[string]string{"REMOTE_ADDR": "192.0.2.1", "HTTPS": "", "HTTP_X_FORWARDED_FOR": "6.6.6.6, 192.0.2.1"}},
	{"two X-Forwarded-Proto lines",
		[][2]string{{"X-Forwarded-For", "192.0.2.1"}, {"X-Forwarded-Proto", "https"}, {"X-Forwarded-Proto", "http"}},
		map[string]string{"REMOTE_ADDR": "192.0.2.1", "HTTPS": ""}},
	{"two X-Forwarded-Host lines",
		[][2]string{{"X-Forwarded-For", "192.0.2.1"}, {"X-Forwarded-Proto", "http"}, {"X-Forwarded-Host", "evil"}, {"X-Forwarded-Host", "shop.example"}},
		map[string]string{"REMOTE_ADDR": "192.0.2.1", "HTTP_HOST": "shop.example"}},
	{"two Forwarded lines",
		[][2]string{{"Forwarded", "for=6.6.6.6;proto=https;host=evil"}, {"Forwarded", "for=192.0.2.60;proto=http;host=shop.example"}},
		map[string]string{"REMOTE_ADDR": "192.0.2.60", "HTTPS": "", "HTTP_HOST": "shop.example"}},
	{"a malformed Forwarded line of the client's",
		[][2]string{{"Forwarded", `for="6.6.6.6`}, {"Forwarded", "for=192.0.2.60;proto=http"}},
		map[string]string{"REMOTE_ADDR": "192.0.2.60", "HTTPS": ""}},
	{"X_Forwarded_For after X-Forwarded-For",
		[][2]string{{"X-Forwarded-For", "1.2.3.4"}, {"X_Forwarded_For", "6.6.6.6"}, {"X-Forwarded-Proto", "http"}, {"X_Forwarded_Proto", "https"}},
		map[string]string{"REMOTE_ADDR": "1.2.3.4", "HTTPS": "", "HTTP_X_FORWARDED_FOR": "1.2.3.4", "HTTP_X_FORWARDED_PROTO": "http"}},
}

func expectServer(t *testing.T, saw, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if saw[k] != v {
			t.Errorf("%s = %q, want %q (PHP saw %v)", k, saw[k], v, saw)
		}
	}
}

func TestTrustedProxiesReadEveryFieldLine(t *testing.T) {
	cfg, clients := proxyConfig(t, "", "")
	s := startFerry(t, cfg)
	m := httpsLine.FindStringSubmatch(s.logText())
	if m == nil {
		t.Fatalf("no HTTPS line in the log:\n%s", s.logText())
	}
	for proto, c := range clients {
		url := s.url
		if strings.HasPrefix(proto, "https") {
			url = m[1]
		}
		for _, a := range proxyAttacks {
			t.Run(proto+"/"+a.name, func(t *testing.T) {
				expectServer(t, phpServer(t, c, url+"/", a.fields), a.want)
			})
		}
	}
}

// ext/ferry decodes the job in C: it gets what the front encoded, the
// dropped fields and the trusted proxies' verdict included.
func TestTrustedProxiesWithTheExtension(t *testing.T) {
	so := extensionSO(t)
	cfg, _ := proxyConfig(t, "", "  php:\n    extension: "+so+"\n")
	s := startFerry(t, cfg)
	for _, a := range proxyAttacks {
		saw := phpServer(t, client, s.url+"/", a.fields)
		if saw["ext"] != "loaded" {
			t.Fatalf("ext/ferry is not loaded: %v", saw)
		}
		expectServer(t, saw, a.want)
	}
}

// server.underscores_in_headers: true gives PHP the fields as sent (the later
// one wins in $_SERVER, as under nginx with the setting on), and still never
// lets X_Forwarded_For count as X-Forwarded-For.
func TestUnderscoresInHeadersKept(t *testing.T) {
	cfg, clients := proxyConfig(t, "  underscores_in_headers: true\n", "")
	s := startFerry(t, cfg)
	saw := phpServer(t, clients["http/1.1"], s.url+"/", [][2]string{
		{"X-Forwarded-For", "1.2.3.4"}, {"X_Forwarded_For", "6.6.6.6"}, {"X-Forwarded-Proto", "http"}, {"X_Forwarded_Proto", "https"}})
	expectServer(t, saw, map[string]string{"REMOTE_ADDR": "1.2.3.4", "HTTPS": "", "HTTP_X_FORWARDED_FOR": "6.6.6.6", "HTTP_X_FORWARDED_PROTO": "https"})
}
