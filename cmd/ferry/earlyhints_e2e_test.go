package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// 103 Early Hints reach a real client before the final answer: the worker
// holds its final answer until the test has seen the 103.
func TestEarlyHints(t *testing.T) {
	dir := t.TempDir()
	s := startFerry(t, streamConfig(dir))
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	hinted := func(path string, gate bool) ([]textproto.MIMEHeader, *http.Response, string) {
		var got []textproto.MIMEHeader
		trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
			if code == 103 {
				got = append(got, h)
				if gate {
					os.WriteFile(filepath.Join(dir, "gate"), nil, 0o644)
				}
			}
			return nil
		}}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", s.url+path, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return got, resp, readAll(t, resp)
	}
	got, resp, body := hinted("/hints?gate=1", true)
	expectStatus(t, resp, body, 200)
	if body != "hinted" || len(got) != 1 || strings.Join(got[0].Values("Link"), ",") != "</style.css>; rel=preload; as=style,</app.js>; rel=preload; as=script" {
		t.Fatalf("body %q, 103s %v", body, got)
	}
	// The next request on the same connection gets its hints too, and a
	// streamed answer may follow them.
	os.Remove(filepath.Join(dir, "gate"))
	got, resp, body = hinted("/hints-stream", false)
	expectStatus(t, resp, body, 201)
	if body != "abc" || len(got) != 1 || got[0].Get("Link") != "</style.css>; rel=preload; as=style" {
		t.Fatalf("body %q, 103s %v", body, got)
	}
}

// A client that pipelines gets no 103 for a request sent before the answer to
// the previous one went out: fasthttp may still hold that answer in its
// buffer, and a 103 written to the socket would overtake it.
func TestEarlyHintsPipelined(t *testing.T) {
	s := startFerry(t, streamConfig(t.TempDir()))
	c, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	host := strings.TrimPrefix(s.url, "http://")
	if _, err := io.WriteString(c, "GET /pid HTTP/1.1\r\nHost: "+host+"\r\n\r\nGET /hints-stream HTTP/1.1\r\nHost: "+host+"\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(c)
	var statuses []string
	for _, m := range regexp.MustCompile(`HTTP/1\.1 (\d{3}) `).FindAllStringSubmatch(string(out), -1) {
		statuses = append(statuses, m[1])
	}
	if got := strings.Join(statuses, ","); got != "200,201" && got != "200,103,201" {
		t.Fatalf("status lines %s out of order:\n%q", got, out)
	}
}
