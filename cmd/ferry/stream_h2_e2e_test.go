package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The same over HTTP/2 (h2c here; HTTPS takes the same path): parts leave as
// DATA frames as they are made, a reset stream stops the generator, and a
// 103 reaches the client as an informational HEADERS frame.
func TestStreamedAnswersHTTP2(t *testing.T) {
	dir := t.TempDir()
	cfg := strings.Replace(streamConfig(dir), "  write_timeout: 1s\n", "  write_timeout: 1s\n  http2: {h2c: true}\n", 1)
	s := startFerry(t, cfg)
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	defer tr.CloseIdleConnections()
	_, pid := get(t, s.url+"/pid")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/gate", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.ProtoMajor != 2 {
		t.Fatalf("not HTTP/2: %s", resp.Proto)
	}
	r := bufio.NewReader(resp.Body)
	if line, err := r.ReadString('\n'); err != nil || line != "first\n" {
		t.Fatalf("first part over h2: %q %v", line, err)
	}
	os.WriteFile(filepath.Join(dir, "gate"), nil, 0o644)
	if rest, err := io.ReadAll(r); err != nil || string(rest) != "second\n" {
		t.Fatalf("rest over h2: %q %v", rest, err)
	}
	resp.Body.Close()

	sctx, stop := context.WithCancel(context.Background())
	req, _ = http.NewRequestWithContext(sctx, "GET", s.url+"/endless", nil)
	resp, err = tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	r = bufio.NewReader(resp.Body)
	for i := 1; i <= 3; i++ {
		if line, err := r.ReadString('\n'); err != nil || line != fmt.Sprintf("data: %d\n", i) {
			t.Fatalf("event %d over h2: %q %v", i, line, err)
		}
		r.ReadString('\n')
	}
	stop() // RST_STREAM: the connection stays, the stream ends
	until(t, "the worker to see the stop", 5*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(dir, "stopped"))
		return err == nil
	})

	var hints []textproto.MIMEHeader
	trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
		if code == 103 {
			hints = append(hints, h)
			os.WriteFile(filepath.Join(dir, "gate"), nil, 0o644)
		}
		return nil
	}}
	os.Remove(filepath.Join(dir, "gate"))
	req, _ = http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), "GET", s.url+"/hints?gate=1", nil)
	resp, err = tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp)
	if body != "hinted" || len(hints) != 1 || len(hints[0].Values("Link")) != 2 || resp.Header.Get("Link") != "" {
		t.Fatalf("103 over h2: body %q, hints %v, final Link %q", body, hints, resp.Header.Get("Link"))
	}
	resp, body = get(t, s.url+"/pid")
	if body != pid {
		t.Fatalf("the worker was replaced: %s, then %s", pid, body)
	}
}
