package main

import (
	"io"
	"net"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestH2CPriorKnowledgeBesideHTTP1(t *testing.T) {
	cfg := strings.Replace(appConfig(""), "  max_body_size: 1MiB\n",
		"  max_body_size: 1MiB\n  read_header_timeout: 1s\n  http2:\n    h2c: true\n", 1)
	s := startFerry(t, cfg)

	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	h2c := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	resp, e := echoReq(t, h2c, mustRequest(t, "GET", s.url+"/echo"))
	if resp.ProtoMajor != 2 || e.Protocol != "HTTP/2.0" || e.Scheme != "http" {
		t.Errorf("h2c: %s, PHP saw %s %s", resp.Proto, e.Protocol, e.Scheme)
	}
	// HTTP/1.x on the same port, including a request shorter than the preface.
	resp, e = echoReq(t, client, mustRequest(t, "GET", s.url+"/echo"))
	if resp.ProtoMajor != 1 || e.Protocol != "HTTP/1.1" {
		t.Errorf("HTTP/1.1 beside h2c: %s / %s", resp.Proto, e.Protocol)
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	conn.Write([]byte("GET /pid HTTP/1.0\r\n\r\n"))
	b, _ := io.ReadAll(conn)
	conn.Close()
	if !strings.HasPrefix(string(b), "HTTP/1.0 200") && !strings.HasPrefix(string(b), "HTTP/1.1 200") {
		t.Errorf("short HTTP/1.0 request: %q", b)
	}
	// A client that sends nothing is closed after read_header_timeout.
	idle, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	idle.SetReadDeadline(time.Now().Add(10 * time.Second))
	start := time.Now()
	if _, err := idle.Read(make([]byte, 1)); err == nil {
		t.Error("a silent connection got bytes")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Error("a silent connection was still open after 10s")
	}
	idle.Close()
	if time.Since(start) > 5*time.Second {
		t.Errorf("silent connection closed after %s", time.Since(start))
	}
	if _, err := exec.LookPath("curl"); err == nil {
		out, err := exec.Command("curl", "-sS", "--http2-prior-knowledge", "-w", " %{http_version}", s.url+"/print").CombinedOutput()
		if err != nil || string(out) != "printed returned 2" {
			t.Errorf("curl --http2-prior-knowledge: %q %v", out, err)
		}
		// curl --http2 on http:// asks to upgrade (Upgrade: h2c).
		out, err = exec.Command("curl", "-sS", "--http2", "-w", " %{http_version}", s.url+"/print").CombinedOutput()
		if err != nil || string(out) != "printed returned 2" {
			t.Errorf("curl --http2 (Upgrade: h2c): %q %v", out, err)
		}
		// With a body the upgrade is declined and the request served over HTTP/1.1.
		out, err = exec.Command("curl", "-sS", "--http2", "-d", "a=1", "-w", " %{http_version}", s.url+"/print").CombinedOutput()
		if err != nil || string(out) != "printed returned 1.1" {
			t.Errorf("curl --http2 with a body: %q %v", out, err)
		}
	}
	// The upgrade by hand: 101, then the answer to the first request on stream 1.
	up, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	up.SetDeadline(time.Now().Add(10 * time.Second))
	up.Write([]byte("GET /pid HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAoAAAAAIAAAAA\r\n\r\n"))
	head := make([]byte, 64)
	n, _ := io.ReadAtLeast(up, head, 20)
	if !strings.HasPrefix(string(head[:n]), "HTTP/1.1 101 Switching Protocols\r\n") {
		t.Errorf("upgrade answer: %q", head[:n])
	}
}
