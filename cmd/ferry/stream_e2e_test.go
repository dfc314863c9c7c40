package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

func streamConfig(dir string, extra ...string) string {
	return fmt.Sprintf(`server:
  address: "%%ADDR%%"
  # On, so that the tests show it never holds a streamed part back.
  compression: {enabled: true, min_size: 0}
  # Shorter than the longest stream below: it applies per part.
  write_timeout: 1s
admin:
  socket: "%%ADMIN%%"
pool:
  command: ["php", "%%DIR%%/testdata/stream.php"]
  num_workers: 1
  exec_ttl: 2s
  env: {STREAM_TEST_DIR: %q}
%s`, dir, strings.Join(extra, ""))
}

// open starts a request and returns its response with the body unread.
func open(t *testing.T, ctx context.Context, url string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", url, nil)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func TestStreamedAnswers(t *testing.T) {
	t.Run("sequential", func(t *testing.T) { streamedAnswers(t, "") })
	t.Run("fibers", func(t *testing.T) { streamedAnswers(t, "  fibers: true\n") })
}

func streamedAnswers(t *testing.T, mode string) {
	dir := t.TempDir()
	s := startFerry(t, streamConfig(dir, mode))
	_, pid := get(t, s.url+"/pid")

	t.Run("each part reaches the client as it is made", func(t *testing.T) {
		// The worker makes the second part only once the gate file exists, which
		// the test creates after reading the first: a server that buffered the
		// answer would never deliver the first part, and the read times out.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/gate", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		// Compressed, and flushed after each part: a compressor that waited
		// for its window to fill would hold "first" back. (Direct mode does
		// not compress: docs/direct.md.)
		enc := "gzip"
		if directMode {
			enc = ""
		}
		if resp.StatusCode != 200 || len(resp.TransferEncoding) == 0 || resp.TransferEncoding[0] != "chunked" || resp.Header.Get("Content-Encoding") != enc || (enc != "" && resp.Header.Get("Vary") != "Accept-Encoding") {
			t.Fatalf("status %d, transfer encoding %v, content encoding %q, vary %q", resp.StatusCode, resp.TransferEncoding, resp.Header.Get("Content-Encoding"), resp.Header.Get("Vary"))
		}
		r := bufio.NewReader(decoder(t, enc, resp.Body))
		line, err := r.ReadString('\n')
		if err != nil || line != "first\n" {
			t.Fatalf("first part: %q %v", line, err)
		}
		os.WriteFile(filepath.Join(dir, "gate"), nil, 0o644)
		rest, err := io.ReadAll(r)
		if err != nil || string(rest) != "second\n" {
			t.Fatalf("rest: %q %v", rest, err)
		}
	})
	t.Run("a stream outlives write_timeout", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		resp := open(t, ctx, s.url+"/endless?tag=-long")
		defer resp.Body.Close()
		r := bufio.NewReader(resp.Body)
		start := time.Now()
		for i := 1; time.Since(start) < 1500*time.Millisecond; i++ {
			if line, err := r.ReadString('\n'); err != nil || line != fmt.Sprintf("data: %d\n", i) {
				t.Fatalf("event %d after %v: %q %v", i, time.Since(start), line, err)
			}
			r.ReadString('\n')
		}
	})
	t.Run("a client that stops reading is cut at write_timeout and the worker stays", func(t *testing.T) {
		c, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.(*net.TCPConn).SetReadBuffer(4096)
		io.WriteString(c, "GET /large?mb=256 HTTP/1.1\r\nHost: x\r\n\r\n")
		// Never read: the worker's next part waits, past write_timeout (1s) but not
		// exec_ttl (2s, which would replace the worker).
		resp, body := get(t, s.url+"/pid")
		expectStatus(t, resp, body, 200)
		if body != pid {
			t.Fatalf("the worker was replaced: pid %s, then %s", pid, body)
		}
	})
	t.Run("echo and parts keep their order", func(t *testing.T) {
		resp, body := get(t, s.url+"/echo-then-stream")
		expectStatus(t, resp, body, 200)
		if body != "echoed;one;printed;two;" {
			t.Fatalf("got %q", body)
		}
	})
	// Also when the generator blocks between its parts (usleep, as
	// examples/sse does), which in Fiber mode gave the worker no chance to
	// read the STOP.
	for _, q := range []string{"", "?block&tag=-blocking"} {
		t.Run("a client that leaves stops the stream and the worker stays"+q, func(t *testing.T) {
			clientLeaves(t, s.url+"/endless"+q, filepath.Join(dir, "stopped"+strings.TrimPrefix(q, "?block&tag=")), pid)
		})
	}
	t.Run("a worker that fails midway cuts the response short", func(t *testing.T) {
		resp, err := client.Get(s.url + "/fail-midway")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil || string(b) != "partial\n" {
			t.Fatalf("the client must see an incomplete body: %q %v", b, err)
		}
		_, body := get(t, s.url+"/pid")
		if body != pid {
			t.Fatalf("an error in the generator replaced the worker: %s, then %s", pid, body)
		}
	})
	t.Run("every encoding flushes each part", func(t *testing.T) {
		frontOnly(t, "direct mode does not compress (docs/direct.md)")
		for _, enc := range []string{"br", "zstd", "gzip"} {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/endless?tag=-"+enc, nil)
			req.Header.Set("Accept-Encoding", enc)
			resp, err := http.DefaultTransport.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.Header.Get("Content-Encoding"); got != enc {
				t.Fatalf("asked for %s, got %q", enc, got)
			}
			// Three 9-byte events never fill a compressor's window: without a
			// flush per part the reads below time out.
			r := bufio.NewReader(decoder(t, enc, resp.Body))
			for i := 1; i <= 3; i++ {
				if line, err := r.ReadString('\n'); err != nil || line != fmt.Sprintf("data: %d\n", i) {
					t.Fatalf("%s: event %d: %q %v", enc, i, line, err)
				}
				r.ReadString('\n')
			}
			resp.Body.Close()
			cancel()
		}
	})
	t.Run("an empty stream is an empty answer", func(t *testing.T) {
		resp, body := get(t, s.url+"/empty-stream")
		expectStatus(t, resp, body, 204)
	})
}

// A 1 GiB body streamed from PHP never sits whole in the server's or PHP's
// memory: both high-water marks stay far below it.
func TestLargeStreamedBody(t *testing.T) {
	const mib = 1024
	s := startFerry(t, streamConfig(t.TempDir()))
	_, pid := get(t, s.url+"/pid")
	start := time.Now()
	resp, err := client.Get(s.url + "/large?mb=" + strconv.Itoa(mib))
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || n != mib<<20 {
		t.Fatalf("read %d bytes: %v", n, err)
	}
	t.Logf("%d MiB in %v", mib, time.Since(start))
	for name, p := range map[string]string{"ferry": strconv.Itoa(s.cmd.Process.Pid), "the PHP worker": pid} {
		hwm := highWater(t, p)
		t.Logf("%s: VmHWM %d MiB", name, hwm>>20)
		if hwm > 200<<20 {
			t.Errorf("%s peaked at %d MiB of RSS for a %d MiB body", name, hwm>>20, mib)
		}
	}
}

// highWater reads a process's peak resident set size (VmHWM) in bytes.
func highWater(t *testing.T, pid string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// The SSE example: every event reaches the reader before the worker makes the
// next one (each event says when it was made).
func TestSSEExample(t *testing.T) {
	s := startFerry(t, `server:
  address: "%ADDR%"
admin:
  socket: "%ADMIN%"
pool:
  command: ["php", "%DIR%/../../examples/sse/worker.php"]
  num_workers: 1
`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp := open(t, ctx, s.url+"/events?count=3&every_ms=300")
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	r := bufio.NewReader(resp.Body)
	var received []time.Time
	var sent []float64
	for len(sent) < 3 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("after %d events: %v", len(sent), err)
		}
		if data, ok := strings.CutPrefix(line, "data: "); ok {
			received = append(received, time.Now())
			var ev struct {
				N    int     `json:"n"`
				Sent float64 `json:"sent"`
			}
			if err := json.Unmarshal([]byte(data), &ev); err != nil || ev.N != len(sent)+1 {
				t.Fatalf("event %q: %v", data, err)
			}
			sent = append(sent, ev.Sent)
		}
	}
	for i := 0; i+1 < len(sent); i++ {
		made := time.Unix(0, int64(sent[i+1]*1e9))
		if !received[i].Before(made) {
			t.Errorf("event %d arrived at %v, after event %d was made at %v: held back", i+1, received[i], i+2, made)
		}
	}
}

// A shutdown tells open streams to end, as if their clients had left: the
// client gets a complete answer and the drain does not wait for its budget
// (here write_timeout 30s + destroy_timeout).
func TestShutdownEndsStreams(t *testing.T) {
	dir := t.TempDir()
	s := startFerry(t, strings.Replace(streamConfig(dir), "write_timeout: 1s", "write_timeout: 30s", 1))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp := open(t, ctx, s.url+"/endless")
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if line, err := r.ReadString('\n'); err != nil || line != "data: 1\n" {
		t.Fatalf("%q %v", line, err)
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	if _, err := io.ReadAll(r); err != nil {
		t.Fatalf("the stream did not end cleanly: %v", err)
	}
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("ferry still draining 10s after SIGTERM")
	}
	if _, err := os.Stat(filepath.Join(dir, "stopped")); err != nil {
		t.Fatal("the generator was not stopped")
	}
}

// HTTP/1.0 has no chunked encoding: a streamed answer is the bytes up to the
// connection's close, and no 1xx comes first.
func TestStreamedAnswerHTTP10(t *testing.T) {
	s := startFerry(t, streamConfig(t.TempDir()))
	for i := 0; i < 2; i++ { // the worker serves on after the connection closed
		c, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(c, "GET /hints-stream HTTP/1.0\r\n\r\n")
		out, err := io.ReadAll(c)
		c.Close()
		head, body, _ := strings.Cut(string(out), "\r\n\r\n")
		if err != nil || !strings.HasPrefix(head, "HTTP/1.1 201 ") || strings.Contains(head, "chunked") || body != "abc" {
			t.Fatalf("%q %v", out, err)
		}
	}
}

// Psr7Worker streams a PSR-7 body of unknown size (here a pipe) in parts.
func TestPsr7StreamedBody(t *testing.T) {
	s := startFerry(t, strings.Replace(appConfig(""), "testdata/app.php", "testdata/psr7.php", 1))
	const n = 5<<20 + 3
	resp, err := client.Get(s.url + "/pipe?bytes=" + strconv.Itoa(n))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || len(b) != n || strings.Trim(string(b), "\x00") != "" {
		t.Fatalf("%d bytes, %v", len(b), err)
	}
	if len(resp.TransferEncoding) == 0 || resp.TransferEncoding[0] != "chunked" {
		t.Fatalf("not streamed: %v", resp.TransferEncoding)
	}
}

// decoder reads a body in the content encoding enc, as a browser would.
func decoder(t *testing.T, enc string, body io.Reader) io.Reader {
	t.Helper()
	switch enc {
	case "gzip":
		z, err := gzip.NewReader(body)
		if err != nil {
			t.Fatal(err)
		}
		return z
	case "br":
		return brotli.NewReader(body)
	case "zstd":
		z, err := zstd.NewReader(body, zstd.WithDecoderConcurrency(1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(z.Close)
		return z
	}
	return body
}

// clientLeaves reads three events of an endless stream, closes the
// connection, and waits for the generator to note its StreamStoppedException
// in stopped: it was stopped, not killed by exec_ttl, which would take 2s and
// replace the worker (pid).
func clientLeaves(t *testing.T, url, stopped, pid string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp := open(t, ctx, url)
	r := bufio.NewReader(resp.Body)
	for i := 1; i <= 3; i++ {
		if line, err := r.ReadString('\n'); err != nil || line != fmt.Sprintf("data: %d\n", i) {
			t.Fatalf("event %d: %q %v", i, line, err)
		}
		r.ReadString('\n')
	}
	resp.Body.Close() // before its end: the connection closes
	until(t, "the worker to see the stop", 5*time.Second, func() bool {
		_, err := os.Stat(stopped)
		return err == nil
	})
	resp2, body := get(t, strings.Split(url, "/endless")[0]+"/pid")
	expectStatus(t, resp2, body, 200)
	if body != pid {
		t.Fatalf("the worker was replaced: pid %s, then %s", pid, body)
	}
}
