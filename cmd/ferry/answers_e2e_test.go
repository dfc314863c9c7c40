package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A file answer is read by the server: the part asked for, HEAD without a body,
// the file removed when the answer says so, and a 502 when it cannot be opened.
func TestFileAnswers(t *testing.T) {
	s := startFerry(t, appConfig(""))
	resp, body := get(t, s.url+"/file?offset=3&length=5")
	expectStatus(t, resp, body, 200)
	if body != "defgh" || resp.Header.Get("Content-Type") != "text/plain" || resp.ContentLength != 5 {
		t.Fatalf("ranged file answer: %q type %q length %d", body, resp.Header.Get("Content-Type"), resp.ContentLength)
	}
	kept := resp.Header.Get("X-Path")
	if _, err := os.Stat(kept); err != nil {
		t.Fatalf("a file sent without delete was removed: %v", err)
	}
	os.Remove(kept)

	resp, body = get(t, s.url+"/file?delete=1")
	expectStatus(t, resp, body, 200)
	if body != "abcdefghijklmnopqrstuvwxyz" {
		t.Fatalf("whole file answer: %q", body)
	}
	if _, err := os.Stat(resp.Header.Get("X-Path")); !os.IsNotExist(err) {
		t.Fatalf("a file sent with delete is still there: %v", err)
	}

	req, _ := http.NewRequest(http.MethodHead, s.url+"/file?delete=1", nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body = readAll(t, resp)
	if resp.StatusCode != 200 || body != "" || resp.ContentLength != 26 {
		t.Fatalf("HEAD of a file answer: %d %q length %d", resp.StatusCode, body, resp.ContentLength)
	}

	resp, body = get(t, s.url+"/missing-file")
	expectStatus(t, resp, body, 502)
	until(t, "the missing file is logged", 10*time.Second, func() bool { return strings.Contains(s.logText(), "answer file") })
	resp, body = get(t, s.url+"/counter")
	expectStatus(t, resp, body, 200) // the worker lives on
}

// Output past the spool threshold goes to a temp file the server sends and
// removes: the client gets all of it while PHP's memory stays flat.
func TestSpooledOutput(t *testing.T) {
	s := startFerry(t, appConfig(""))
	tmp := os.TempDir()
	before, _ := filepath.Glob(filepath.Join(tmp, "ferry-out-*"))
	resp, body := get(t, s.url+"/spool?kib=8192")
	expectStatus(t, resp, body, 200)
	if len(body) != 8192*1024 || !strings.HasPrefix(body, "0...") || !strings.Contains(body, "\n8191.") {
		t.Fatalf("spooled body: %d bytes", len(body))
	}
	if peak, _ := strconv.Atoi(resp.Header.Get("X-Peak")); peak > 6<<20 {
		t.Fatalf("PHP's peak memory %d while printing 8 MiB: the body was buffered", peak)
	}
	after, _ := filepath.Glob(filepath.Join(tmp, "ferry-out-*"))
	if len(after) > len(before) {
		t.Fatalf("spool files left behind: %v", after)
	}
	resp, body = get(t, s.url+"/spool?kib=4")
	expectStatus(t, resp, body, 200)
	if len(body) != 4096 {
		t.Fatalf("small output: %d bytes", len(body))
	}
}

// PHP's answers are compressed as the client asks, through the real binary;
// a small one, or one the client does not want compressed, goes as it is.
func TestCompressedAnswers(t *testing.T) {
	s := startFerry(t, strings.Replace(appConfig(""), "  max_body_size: 1MiB\n", "  max_body_size: 1MiB\n  compression: {enabled: true}\n", 1))
	raw := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: 30 * time.Second}
	fetch := func(path, accept string) (*http.Response, []byte) {
		req, _ := http.NewRequest(http.MethodGet, s.url+path, nil)
		if accept != "" {
			req.Header.Set("Accept-Encoding", accept)
		}
		resp, err := raw.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	resp, body := fetch("/big?n=100000", "gzip;q=0.5, br")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Encoding") != "br" || resp.Header.Get("Vary") != "Accept-Encoding" {
		t.Fatalf("status %d, Content-Encoding %q, Vary %q", resp.StatusCode, resp.Header.Get("Content-Encoding"), resp.Header.Get("Vary"))
	}
	if len(body) > 1000 || resp.ContentLength != int64(len(body)) {
		t.Fatalf("100000 x's compressed to %d bytes (Content-Length %d)", len(body), resp.ContentLength)
	}
	resp, body = fetch("/big?n=100000", "")
	if resp.Header.Get("Content-Encoding") != "" || len(body) != 100000 {
		t.Fatalf("without Accept-Encoding: %q, %d bytes", resp.Header.Get("Content-Encoding"), len(body))
	}
	resp, body = fetch("/counter", "gzip, br, zstd")
	if resp.Header.Get("Content-Encoding") != "" || string(body) == "" {
		t.Fatalf("a tiny answer was compressed: %q", resp.Header.Get("Content-Encoding"))
	}
}
