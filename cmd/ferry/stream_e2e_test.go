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
	"net/http/httptrace"
	"net/textproto"
	"os"
	"path/filepath"
	"regexp"
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
		// for its window to fill would hold "first" back.
		if resp.StatusCode != 200 || len(resp.TransferEncoding) == 0 || resp.TransferEncoding[0] != "chunked" || resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("Vary") != "Accept-Encoding" {
			t.Fatalf("status %d, transfer encoding %v, content encoding %q, vary %q", resp.StatusCode, resp.TransferEncoding, resp.Header.Get("Content-Encoding"), resp.Header.Get("Vary"))
		}
		r := bufio.NewReader(decoder(t, "gzip", resp.Body))
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
