package main

// A hostile client against the front's connection handling: what once
// stopped the whole server or slipped past its limits (issue 30).

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

const h2cUpgradeHead = "GET /pid HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABk\r\n"

func h2cConfig(server string) string {
	return opsConfig("  read_header_timeout: 10s\n  http2:\n    h2c: true\n"+server, "", "")
}

func hostOf(url string) string { return strings.TrimPrefix(url, "http://") }

// alive fails the test if ferry has exited, and checks it still answers.
func (s *server) alive(t *testing.T) {
	t.Helper()
	select {
	case <-s.exited:
		t.Fatalf("ferry exited:\n%s", s.logText())
	default:
	}
	resp, body := get(t, s.url+"/pid")
	expectStatus(t, resp, body, 200)
}

// An upgrade followed at once by a pipelined request, then a close: HTTP/2
// frames were still being written when the hijacked connection was recycled,
// and the nil connection they wrote to ended the process.
func TestH2CUpgradeWithAPipelinedRequestNeverStopsTheServer(t *testing.T) {
	s := startFerry(t, h2cConfig(""))
	for i := range 30 {
		c, err := net.Dial("tcp", hostOf(s.url))
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte(h2cUpgradeHead + "\r\nGET /pid HTTP/1.1\r\nHost: x\r\n\r\n"))
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		// Close at different points: on the 101, or once frames follow.
		io.ReadAtLeast(c, make([]byte, 256), 1+i%3*40)
		c.Close()
	}
	if _, err := exec.LookPath("nghttp"); err == nil {
		for range 15 {
			exec.Command("nghttp", "-u", s.url+"/sleep?ms=20").Run()
		}
	}
	s.alive(t)
}

// The HTTP/1.1 checks run before a request may switch protocols: two Host
// lines are refused with 400, not upgraded with the second one given to PHP.
func TestH2CUpgradeRunsTheHTTP1Checks(t *testing.T) {
	s := startFerry(t, h2cConfig(""))
	got := rawExchange(t, hostOf(s.url), h2cUpgradeHead+"Host: evil\r\n\r\n")
	if !strings.HasPrefix(got, "HTTP/1.1 400") {
		t.Fatalf("upgrade with two Host lines: %.80q, want 400", got)
	}
	s.alive(t)
}

// With tls.redirect every plain request is redirected, HTTP/2 ones included.
func TestTLSRedirectCoversPriorKnowledgeH2C(t *testing.T) {
	ts := startTLSFerry(t, "    redirect: true\n  http2:\n    h2c: true\n")
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	h2c := &http.Client{Transport: tr, Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := h2c.Get(ts.url + "/echo?a=1")
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp)
	if resp.ProtoMajor != 2 || resp.StatusCode != 308 || resp.Header.Get("Location") != ts.https+"/echo?a=1" {
		t.Fatalf("prior-knowledge h2c with tls.redirect: %s %d Location %q; body %.100q",
			resp.Proto, resp.StatusCode, resp.Header.Get("Location"), body)
	}
}

// server.max_connections counts every connection, whatever it turns out to
// speak: upgraded h2c ones, and those that have sent nothing yet.
func TestMaxConnectionsCountsEveryProtocol(t *testing.T) {
	s := startFerry(t, h2cConfig("  max_connections: 10\n"))
	addr := hostOf(s.url)
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range 10 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		c.Write([]byte(h2cUpgradeHead + "\r\n"))
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if line, _ := bufio.NewReader(c).ReadString('\n'); !strings.HasPrefix(line, "HTTP/1.1 101") {
			t.Fatalf("upgrade within the limit: %q", line)
		}
	}
	if got := rawExchange(t, addr, h2cUpgradeHead+"\r\n"); !strings.HasPrefix(got, "HTTP/1.1 503") {
		t.Fatalf("an upgrade beyond 10 upgraded connections: %.80q, want 503", got)
	}
	for _, c := range held {
		c.Close()
	}
	held = nil
	until(t, "the upgraded connections closed", 10*time.Second, func() bool {
		return s.metric(t, "ferry_http_connections_open") == 0
	})
	if got := rawExchange(t, addr, "GET /pid HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"); !strings.HasPrefix(got, "HTTP/1.1 200") {
		t.Fatalf("a request once the upgraded connections closed: %.80q", got)
	}
	until(t, "that connection closed", 10*time.Second, func() bool {
		return s.metric(t, "ferry_http_connections_open") == 0
	})

	// Silent connections: read_header_timeout is 10s, so none of these ends
	// by itself while the test runs. Ten are held; the rest are refused now.
	refused := 0
	for range 20 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	for _, c := range held {
		c.SetReadDeadline(time.Now().Add(time.Second))
		if b, err := io.ReadAll(c); err == nil && strings.HasPrefix(string(b), "HTTP/1.1 503") {
			refused++
		}
	}
	if refused != 10 {
		t.Fatalf("20 silent connections with max_connections 10: %d refused, want 10", refused)
	}
}

// SIGTERM lets an upgraded h2c connection finish its answer, as it does on
// every other protocol.
func TestSIGTERMDrainsUpgradedH2C(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	s := startFerry(t, h2cConfig(""))
	const n = 16 << 20
	curl := exec.Command("curl", "-sS", "--http2", "--limit-rate", "8M", s.url+"/big?n=16777216")
	out, _ := curl.StdoutPipe()
	var stderr strings.Builder
	curl.Stderr = &stderr
	if err := curl.Start(); err != nil {
		t.Fatal(err)
	}
	first := make([]byte, 64<<10)
	if _, err := io.ReadFull(out, first); err != nil {
		t.Fatal(err)
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	rest, _ := io.Copy(io.Discard, out)
	err := curl.Wait()
	if got := int64(len(first)) + rest; got != n || err != nil {
		t.Fatalf("upgraded h2c answer across SIGTERM: %d of %d bytes, curl: %v %s", got, n, err, stderr.String())
	}
	if code, _ := s.waitExit(t, 20*time.Second); code != 0 {
		t.Errorf("ferry exited %d after draining", code)
	}
}

// startFerryUnder runs ferry under a wrapper command (prlimit).
func startFerryUnder(t *testing.T, yaml string, wrapper ...string) *server {
	t.Helper()
	dir := t.TempDir()
	wd, _ := os.Getwd()
	s := &server{admin: filepath.Join(dir, "admin.sock"), cfg: filepath.Join(dir, "ferry.yaml")}
	yaml = strings.NewReplacer("%ADDR%", anyPort, "%ADMIN%", s.admin, "%DIR%", wd).Replace(yaml)
	yaml = inMode(yaml)
	if err := os.WriteFile(s.cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	s.cmd = exec.Command(wrapper[0], append(wrapper[1:], ferryBin, "serve", "-c", s.cfg)...)
	run(t, s)
	return s
}

// With few descriptors and the default max_connections, idle connections
// made accept fail with EMFILE, which ended the server. The budget is
// lowered to what fits, with a warning, and the rest are refused.
func TestDescriptorExhaustionNeverStopsTheServer(t *testing.T) {
	if _, err := exec.LookPath("prlimit"); err != nil {
		t.Skip("prlimit not installed")
	}
	for _, h2c := range []bool{false, true} {
		if h2c && directMode {
			continue // h2c is the front's
		}
		cfg := opsConfig("", "", "")
		if h2c {
			cfg = h2cConfig("")
		}
		s := startFerryUnder(t, cfg, "prlimit", "--nofile=256:256")
		var idle []net.Conn
		for range 300 {
			c, err := net.Dial("tcp", hostOf(s.url))
			if err != nil {
				t.Fatal(err)
			}
			idle = append(idle, c)
		}
		// The last one is answered (refused or served) only once all the
		// others have been accepted.
		idle[len(idle)-1].Write([]byte("GET /pid HTTP/1.1\r\nHost: x\r\n\r\n"))
		idle[len(idle)-1].SetReadDeadline(time.Now().Add(10 * time.Second))
		line, _ := bufio.NewReader(idle[len(idle)-1]).ReadString('\n')
		// In direct mode the workers hold the connections, each under its own
		// descriptor limit: the last one is served, or waits in the kernel's queue.
		if !strings.HasPrefix(line, "HTTP/1.1 503") && !(directMode && strings.HasPrefix(line, "HTTP/1.1 200")) {
			t.Errorf("h2c %v: the 300th connection got %q, want a 503", h2c, line)
		}
		for _, c := range idle {
			c.Close()
		}
		s.alive(t)
		s.logged(t, "max_connections does not fit", "lowered_to")
	}
}

// The admin TCP listeners close idle connections and hold few at once, so
// that they cannot take the descriptors the app's port needs.
func TestAdminListenersHaveTimeoutsAndACap(t *testing.T) {
	s := startFerry(t, opsConfig("", "  health_address: 127.0.0.1:0\n", ""))
	addr := hostOf(s.tcpAdmin(t))
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("GET /health HTTP/1.1\r\nHost: x\r\n\r\n"))
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	start := time.Now()
	r := bufio.NewReader(c)
	if line, _ := r.ReadString('\n'); !strings.HasPrefix(line, "HTTP/1.1 200") {
		t.Fatalf("/health: %q", line)
	}
	if _, err := io.Copy(io.Discard, r); err != nil {
		t.Fatalf("an idle keep-alive connection to /health was still open after %s: %v", time.Since(start).Round(time.Second), err)
	}

	var open []net.Conn
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	for range 64 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		open = append(open, c)
	}
	if got := rawExchange(t, addr, "GET /health HTTP/1.1\r\nHost: x\r\n\r\n"); !strings.HasPrefix(got, "HTTP/1.1 503") {
		t.Fatalf("a 65th admin connection: %.80q, want 503", got)
	}
	s.alive(t)
}
