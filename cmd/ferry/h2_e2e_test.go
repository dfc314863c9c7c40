package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// writeCert makes a self-signed certificate for 127.0.0.1 named cn and
// returns its pool for clients.
func writeCert(t *testing.T, certFile, keyFile, cn string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	// Written to a temporary name and renamed, as a renewal tool does, so
	// the server never reads half a file.
	for _, f := range []struct {
		path, typ string
		der       []byte
	}{{certFile, "CERTIFICATE", der}, {keyFile, "EC PRIVATE KEY", kder}} {
		tmp := f.path + ".tmp"
		if err := os.WriteFile(tmp, pem.EncodeToMemory(&pem.Block{Type: f.typ, Bytes: f.der}), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, f.path); err != nil {
			t.Fatal(err)
		}
	}
	cert, _ := x509.ParseCertificate(der)
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	return roots
}

var httpsLine = regexp.MustCompile(`Ferry is serving HTTPS on (https://\S+)`)

type tlsServer struct {
	*server
	https, certFile, keyFile string
	roots                    *x509.CertPool
}

func startTLSFerry(t *testing.T, serverExtra string) *tlsServer {
	t.Helper()
	dir := t.TempDir()
	ts := &tlsServer{certFile: filepath.Join(dir, "cert.pem"), keyFile: filepath.Join(dir, "key.pem")}
	ts.roots = writeCert(t, ts.certFile, ts.keyFile, "first")
	cfg := strings.Replace(appConfig(""), "  max_body_size: 1MiB\n", "  max_body_size: 1MiB\n"+
		"  tls:\n    address: \"127.0.0.1:0\"\n    cert: \""+ts.certFile+"\"\n    key: \""+ts.keyFile+"\"\n"+serverExtra, 1)
	ts.server = startFerry(t, cfg)
	m := httpsLine.FindStringSubmatch(ts.logText())
	if m == nil {
		t.Fatalf("no HTTPS line in the log:\n%s", ts.logText())
	}
	ts.https = m[1]
	return ts
}

func (ts *tlsServer) client(h2 bool) *http.Client {
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ts.roots}}
	tr.Protocols = new(http.Protocols)
	if h2 {
		tr.Protocols.SetHTTP2(true)
	} else {
		tr.Protocols.SetHTTP1(true)
	}
	return &http.Client{Transport: tr, Timeout: 20 * time.Second}
}

type phpSaw struct {
	Method, Path, Body, Protocol, Scheme, Host, Remote string
	Cookies                                            map[string]string
	Headers                                            map[string][]string
}

func echoReq(t *testing.T, c *http.Client, req *http.Request) (*http.Response, phpSaw) {
	t.Helper()
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp)
	var e phpSaw
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("%d %q: %v", resp.StatusCode, body, err)
	}
	return resp, e
}

func TestHTTPSServesHTTP2AndHTTP1ToTheSameWorkers(t *testing.T) {
	ts := startTLSFerry(t, "  request_id: true\n")

	// HTTP/2 by ALPN, with a body of unknown length (DATA frames, no
	// content-length) and the cookie header split in two fields.
	pr, pw := io.Pipe()
	go func() { pw.Write([]byte("part one, ")); pw.Write([]byte("part two")); pw.Close() }()
	req, _ := http.NewRequest("POST", ts.https+"/echo?x=1", pr)
	req.Header.Add("Cookie", "a=1")
	req.Header.Add("Cookie", "b=2")
	req.Header.Set("X-Trace", "h2")
	resp, e := echoReq(t, ts.client(true), req)
	if resp.ProtoMajor != 2 {
		t.Fatalf("ALPN chose %s, want HTTP/2", resp.Proto)
	}
	if e.Protocol != "HTTP/2.0" || e.Scheme != "https" || e.Method != "POST" || e.Body != "part one, part two" {
		t.Errorf("PHP saw %+v", e)
	}
	if e.Cookies["a"] != "1" || e.Cookies["b"] != "2" || e.Headers["X-Trace"][0] != "h2" {
		t.Errorf("cookies %v, headers %v", e.Cookies, e.Headers)
	}
	if !strings.HasPrefix(e.Remote, "127.0.0.1:") || !strings.HasPrefix(e.Host, "127.0.0.1:") {
		t.Errorf("remote %q host %q", e.Remote, e.Host)
	}
	// What wraps the front (request ids, metrics, access log) wraps HTTP/2 too.
	if id := resp.Header.Get("X-Request-Id"); id == "" || len(e.Headers["X-Request-Id"]) != 1 || e.Headers["X-Request-Id"][0] != id {
		t.Errorf("request id: echoed %q, PHP saw %v", id, e.Headers["X-Request-Id"])
	}

	// HTTP/1.1 over TLS, and multi-value headers and cookies on the way back.
	req, _ = http.NewRequest("GET", ts.https+"/echo", nil)
	resp, e = echoReq(t, ts.client(false), req)
	if resp.ProtoMajor != 1 || e.Protocol != "HTTP/1.1" || e.Scheme != "https" {
		t.Errorf("HTTP/1.1 over TLS: %s, PHP saw %s %s", resp.Proto, e.Protocol, e.Scheme)
	}
	resp, err := ts.client(true).Get(ts.https + "/headers")
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp)
	if resp.StatusCode != 201 || body != "multi\n" || len(resp.Header.Values("X-Multi")) != 2 || len(resp.Cookies()) != 2 {
		t.Errorf("h2 answer: %d %q %v", resp.StatusCode, body, resp.Header)
	}

	// The error mapping is the plain front's: a dead worker is a 502 on h2 too.
	resp, err = ts.client(true).Get(ts.https + "/crash")
	if err != nil {
		t.Fatal(err)
	}
	if readAll(t, resp); resp.StatusCode != 502 {
		t.Errorf("crash over h2: %d", resp.StatusCode)
	}

	// Many streams at once on one connection.
	c := ts.client(true)
	var wg sync.WaitGroup
	errs := make(chan string, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := c.Get(ts.https + "/sleep?ms=20")
			if err != nil {
				errs <- err.Error()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(b) != "slept" || resp.ProtoMajor != 2 {
				errs <- resp.Proto + " " + resp.Status + " " + string(b)
			}
			_ = i
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}

	// The front's limits hold on HTTP/2: header lines (max_headers, 100)
	// and max_body_size (1 MiB here), and PHP never sees those requests.
	req, _ = http.NewRequest("GET", ts.https+"/echo", nil)
	for i := range 150 {
		req.Header.Set(fmt.Sprintf("X-H%d", i), "v")
	}
	if resp, err := c.Do(req); err != nil {
		t.Fatal(err)
	} else if readAll(t, resp); resp.StatusCode != 431 {
		t.Errorf("150 headers over h2: %d", resp.StatusCode)
	}
	big, bw := io.Pipe()
	go func() {
		chunk := make([]byte, 64<<10)
		for range 40 { // 2.5 MiB, with no content-length to refuse it early
			if _, err := bw.Write(chunk); err != nil {
				return
			}
		}
		bw.Close()
	}()
	req, _ = http.NewRequest("POST", ts.https+"/echo", big)
	if resp, err := c.Do(req); err != nil {
		t.Fatal(err)
	} else if readAll(t, resp); resp.StatusCode != 413 {
		t.Errorf("2.5 MiB body over h2: %d", resp.StatusCode)
	}
	big.Close()

	// TLS 1.1 and older are refused.
	old := &tls.Config{RootCAs: ts.roots, MaxVersion: tls.VersionTLS11}
	if conn, err := tls.Dial("tcp", strings.TrimPrefix(ts.https, "https://"), old); err == nil {
		conn.Close()
		t.Error("a TLS 1.1 handshake succeeded")
	}

	// A client that resets its stream while its job waits: the job is
	// dropped, the connection and the server go on.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	req, _ = http.NewRequestWithContext(ctx, "GET", ts.https+"/sleep?ms=400", nil)
	if _, err := c.Do(req); err == nil {
		t.Error("a request cancelled after 100ms answered")
	}
	cancel()
	if resp, err := c.Get(ts.https + "/counter"); err != nil || resp.StatusCode != 200 {
		t.Errorf("after a reset stream: %v", err)
	} else {
		resp.Body.Close()
	}

	if _, err := exec.LookPath("curl"); err == nil {
		out, err := exec.Command("curl", "-sS", "--http2", "--cacert", ts.certFile, "-w", " %{http_version}", ts.https+"/print").CombinedOutput()
		if err != nil || string(out) != "printed returned 2" {
			t.Errorf("curl --http2: %q %v", out, err)
		}
	}
}

func TestTLSCertificateReloadsOnSIGHUPWithoutDroppingConnections(t *testing.T) {
	ts := startTLSFerry(t, "")
	c := ts.client(true)
	resp, err := c.Get(ts.https + "/pid")
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	if cn := resp.TLS.PeerCertificates[0].Subject.CommonName; cn != "first" {
		t.Fatalf("first certificate: %q", cn)
	}
	ts.roots.AppendCertsFromPEM(nil)
	newRoots := writeCert(t, ts.certFile, ts.keyFile, "second")
	ts.cmd.Process.Signal(syscall.SIGHUP)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(ts.logText(), "TLS certificate reloaded") {
		if time.Now().After(deadline) {
			t.Fatalf("no reload in the log:\n%s", ts.logText())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The open HTTP/2 connection goes on with the old certificate.
	resp, err = c.Get(ts.https + "/counter")
	if err != nil {
		t.Fatalf("open connection after SIGHUP: %v", err)
	}
	readAll(t, resp)
	if cn := resp.TLS.PeerCertificates[0].Subject.CommonName; cn != "first" {
		t.Errorf("the open connection changed certificate: %q", cn)
	}
	// A new connection gets the new one.
	ts.roots = newRoots
	resp, err = ts.client(true).Get(ts.https + "/counter")
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	if cn := resp.TLS.PeerCertificates[0].Subject.CommonName; cn != "second" {
		t.Errorf("new connection's certificate: %q", cn)
	}
	// A broken file is refused and the current certificate stays.
	os.WriteFile(ts.certFile, []byte("not a certificate"), 0o600)
	ts.cmd.Process.Signal(syscall.SIGHUP)
	for !strings.Contains(ts.logText(), "TLS certificate not reloaded") {
		if time.Now().After(deadline) {
			t.Fatalf("no refusal in the log:\n%s", ts.logText())
		}
		time.Sleep(20 * time.Millisecond)
	}
	resp, err = ts.client(true).Get(ts.https + "/counter")
	if err != nil {
		t.Fatalf("after a failed reload: %v", err)
	}
	readAll(t, resp)
}

func TestRedirectToHTTPS(t *testing.T) {
	ts := startTLSFerry(t, "    redirect: true\n")
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(ts.url + "/echo?a=1")
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, resp)
	want := ts.https + "/echo?a=1"
	if resp.StatusCode != 308 || resp.Header.Get("Location") != want {
		t.Fatalf("%d Location %q, want 308 %q", resp.StatusCode, resp.Header.Get("Location"), want)
	}
	// Following it lands on PHP over HTTPS.
	c := ts.client(true)
	resp, e := echoReq(t, c, mustRequest(t, "GET", want))
	if e.Scheme != "https" || resp.StatusCode != 200 {
		t.Errorf("after the redirect: %d %+v", resp.StatusCode, e)
	}
}

func mustRequest(t *testing.T, method, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
