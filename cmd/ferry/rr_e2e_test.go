package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptrace"
	"net/textproto"

	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// These tests run testdata/rr_worker.php, the PHP side of RoadRunner's HTTP
// protocol written from its specification (its header lists the sources),
// under the real ferry binary.

func rrConfig(protocol, relay, extra string) string {
	return fmt.Sprintf(`server:
  address: "%%ADDR%%"
  max_body_size: 1MiB
admin:
  socket: "%%ADMIN%%"
pool:
  protocol: %s
  relay: %s
  command: ["php", "%%DIR%%/testdata/rr_worker.php"]
  num_workers: 2
%s`, protocol, relay, extra)
}

type rrEcho struct {
	PID      int                 `json:"pid"`
	Method   string              `json:"method"`
	URI      string              `json:"uri"`
	Protocol string              `json:"protocol"`
	Remote   string              `json:"remote"`
	Headers  map[string][]string `json:"headers"`
	Cookies  map[string]string   `json:"cookies"`
	Query    map[string]any      `json:"query"`
	Parsed   json.RawMessage     `json:"parsed"`
	Uploads  json.RawMessage     `json:"uploads"`
	Body     string              `json:"body"`
}

func rrDo(t *testing.T, req *http.Request) (*http.Response, string) {
	t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp, readAll(t, resp)
}

func rrDecode(t *testing.T, body string) rrEcho {
	t.Helper()
	var e rrEcho
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("bad JSON %q: %v", body, err)
	}
	return e
}

func TestRoadRunnerWorker(t *testing.T) {
	for _, relay := range []string{"pipes", "tcp", "unix"} {
		t.Run(relay, func(t *testing.T) {
			s := startFerry(t, rrConfig("roadrunner", relay, ""))
			rrRequests(t, s)
		})
	}
}

// The JSON context of roadrunner-http < 3.5: a worker that only reads JSON
// serves the same requests under pool.protocol: roadrunner-json.
func TestRoadRunnerJSONContext(t *testing.T) {
	s := startFerry(t, rrConfig("roadrunner-json", "pipes", "  env: {RR_TEST_JSON_ONLY: '1'}\n"))
	rrRequests(t, s)
}

func rrRequests(t *testing.T, s *server) {
	t.Run("hello", func(t *testing.T) {
		resp, body := get(t, s.url+"/")
		expectStatus(t, resp, body, 200)
		if !strings.HasPrefix(body, "Hello from RoadRunner worker ") || resp.Header.Get("Content-Type") != "text/plain" {
			t.Fatalf("got %q (%s)", body, resp.Header.Get("Content-Type"))
		}
	})
	t.Run("query, cookies and multi-value headers", func(t *testing.T) {
		req, _ := http.NewRequest("GET", s.url+"/echo?a=1&list[]=x&list[]=y", nil)
		req.Header.Add("X-Multi", "one")
		req.Header.Add("X-Multi", "two")
		req.Header.Add("Cookie", "sid=abc; theme=dark%20blue")
		resp, body := rrDo(t, req)
		expectStatus(t, resp, body, 200)
		e := rrDecode(t, body)
		host := strings.TrimPrefix(s.url, "http://")
		if e.Method != "GET" || strings.ReplaceAll(strings.ReplaceAll(e.URI, "%5B", "["), "%5D", "]") != s.url+"/echo?a=1&list[]=x&list[]=y" || e.Protocol != "1.1" || e.Remote != "127.0.0.1" {
			t.Fatalf("request line: %+v", e)
		}
		if fmt.Sprint(e.Headers["X-Multi"]) != "[one two]" || fmt.Sprint(e.Headers["Host"]) != "["+host+"]" {
			t.Fatalf("headers: %v", e.Headers)
		}
		if e.Cookies["sid"] != "abc" || e.Cookies["theme"] != "dark blue" {
			t.Fatalf("cookies: %v", e.Cookies)
		}
		if e.Query["a"] != "1" || fmt.Sprint(e.Query["list"]) != "[x y]" {
			t.Fatalf("query: %v", e.Query)
		}
		if string(e.Parsed) != "null" || e.Body != "" {
			t.Fatalf("a GET has no parsed body: %s %q", e.Parsed, e.Body)
		}
	})
	t.Run("response headers and status", func(t *testing.T) {
		resp, body := get(t, s.url+"/headers")
		expectStatus(t, resp, body, 201)
		if fmt.Sprint(resp.Header["X-Multi"]) != "[one two]" || len(resp.Cookies()) != 2 || body != "made" {
			t.Fatalf("headers %v, body %q", resp.Header, body)
		}
	})
	t.Run("form post", func(t *testing.T) {
		form := "name=Ann&tags[]=a&tags[]=b&addr[city]=Oslo&addr[zip]=0150&name=Bob&empty="
		resp, body := rrPost(t, s.url+"/echo", "application/x-www-form-urlencoded", strings.NewReader(form))
		expectStatus(t, resp, body, 200)
		e := rrDecode(t, body)
		want := `{"name":"Bob","tags":["a","b"],"addr":{"city":"Oslo","zip":"0150"},"empty":""}`
		if string(e.Parsed) != want {
			t.Fatalf("parsed body %s, want %s", e.Parsed, want)
		}
	})
	t.Run("raw body", func(t *testing.T) {
		resp, body := rrPost(t, s.url+"/echo", "application/json", strings.NewReader(`{"k":[1,2]}`))
		expectStatus(t, resp, body, 200)
		if e := rrDecode(t, body); e.Body != `{"k":[1,2]}` || string(e.Parsed) != "null" {
			t.Fatalf("body %q parsed %s", e.Body, e.Parsed)
		}
	})
	t.Run("multipart upload", func(t *testing.T) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		mw.WriteField("title", "holiday")
		fw, _ := mw.CreateFormFile("photo", "dir/beach.txt")
		fw.Write([]byte("sand and sea"))
		fw, _ = mw.CreateFormFile("docs[]", "a.txt")
		fw.Write([]byte("first"))
		fw, _ = mw.CreateFormFile("docs[]", "b.txt")
		fw.Write([]byte("second!"))
		mw.CreateFormFile("nothing", "")
		mw.Close()
		resp, body := rrPost(t, s.url+"/echo", mw.FormDataContentType(), &buf)
		expectStatus(t, resp, body, 200)
		e := rrDecode(t, body)
		if string(e.Parsed) != `{"title":"holiday"}` {
			t.Fatalf("fields %s", e.Parsed)
		}
		type up struct {
			Class, Name, Type, Content string
			Size, Error                int
		}
		var ups struct {
			Photo   up
			Docs    []up
			Nothing up
		}
		if err := json.Unmarshal(e.Uploads, &ups); err != nil {
			t.Fatalf("uploads %s: %v", e.Uploads, err)
		}
		p := ups.Photo
		if p.Class != `Nyholm\Psr7\UploadedFile` || p.Name != "beach.txt" || p.Size != 12 || p.Error != 0 ||
			p.Content != "sand and sea" || p.Type != "application/octet-stream" {
			t.Fatalf("photo %+v", p)
		}
		if len(ups.Docs) != 2 || ups.Docs[0].Content != "first" || ups.Docs[1].Content != "second!" || ups.Docs[1].Size != 7 {
			t.Fatalf("docs %+v", ups.Docs)
		}
		if ups.Nothing.Error != 4 || ups.Nothing.Size != 0 {
			t.Fatalf("an empty file input is UPLOAD_ERR_NO_FILE: %+v", ups.Nothing)
		}
	})
	t.Run("streamed response", func(t *testing.T) {
		var hints []string
		trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
			hints = append(hints, fmt.Sprint(code, " ", h.Get("Link")))
			return nil
		}}
		req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), "GET", s.url+"/stream", nil)
		resp, body := rrDo(t, req)
		expectStatus(t, resp, body, 200)
		if body != "chunk1;chunk2;chunk3;chunk4;chunk5;chunk6;end" || resp.Header.Get("X-Streamed") != "yes" {
			t.Fatalf("got %q %v", body, resp.Header)
		}
		if len(resp.TransferEncoding) == 0 || resp.TransferEncoding[0] != "chunked" {
			t.Fatalf("the answer was not streamed: transfer encoding %v", resp.TransferEncoding)
		}
		if strings.Join(hints, "|") != "103 </style.css>; rel=preload; as=style" {
			t.Fatalf("1xx answers seen: %q", hints)
		}
	})
	t.Run("worker error", func(t *testing.T) {
		resp, body := get(t, s.url+"/error")
		expectStatus(t, resp, body, 500)
		resp, body = get(t, s.url+"/")
		expectStatus(t, resp, body, 200) // the worker stays
	})
}

func rrPost(t *testing.T, url, ctype string, body interface{ Read([]byte) (int, error) }) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, body)
	req.Header.Set("Content-Type", ctype)
	return rrDo(t, req)
}

// Worker::stop() in place of an answer retires the worker and runs the request
// on another one.
func TestRoadRunnerWorkerStop(t *testing.T) {
	flag := filepath.Join(t.TempDir(), "stopped")
	s := startFerry(t, rrConfig("roadrunner", "pipes", fmt.Sprintf("  env: {RR_TEST_STOP_FLAG: %q}\n", flag)))
	resp, body := get(t, s.url+"/stop")
	expectStatus(t, resp, body, 200)
	if !strings.HasPrefix(body, "served by ") {
		t.Fatalf("got %q", body)
	}
	if _, err := os.Stat(flag); err != nil {
		t.Fatal("no worker answered with stop: the test proves nothing")
	}
	if !waitLog(s, "worker asked to stop") || !waitLog(s, "worker stopped") {
		t.Fatalf("the stopping worker was not retired:\n%s", s.logText())
	}
	until(t, "a replacement worker", 10*time.Second, func() bool {
		return strings.Count(s.adminGet(t, "/workers"), `"PID"`) == 2
	})
	resp, body = get(t, s.url+"/")
	expectStatus(t, resp, body, 200)
}

// A client that leaves a RoadRunner stream gets the worker a STOP frame; the
// worker ends the stream with an empty frame and serves the next request.
func TestRoadRunnerStreamStop(t *testing.T) {
	dir := t.TempDir()
	s := startFerry(t, strings.Replace(rrConfig("roadrunner", "pipes", fmt.Sprintf("  exec_ttl: 3s\n  env: {RR_TEST_DIR: %q}\n", dir)), "num_workers: 2", "num_workers: 1", 1))
	pids := func() string {
		var ws []struct{ PID int }
		json.Unmarshal([]byte(s.adminGet(t, "/workers")), &ws)
		return fmt.Sprint(ws)
	}
	before := pids()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", s.url+"/endless", nil)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 64)
	for !strings.Contains(string(buf), "tick7;") { // past the first PING
		var b [64]byte
		n, err := resp.Body.Read(b[:])
		if err != nil {
			t.Fatalf("after %q: %v", buf, err)
		}
		buf = append(buf, b[:n]...)
	}
	resp.Body.Close()
	until(t, "the worker to see the STOP frame", 5*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(dir, "stopped"))
		return err == nil
	})
	resp, body := get(t, s.url+"/")
	expectStatus(t, resp, body, 200)
	if after := pids(); after != before {
		t.Fatalf("the worker changed:\n%s\n%s", before, after)
	}
}

// ferry serve -c .rr.yaml reads RoadRunner's configuration, names what it
// ignores, and ferry workers / reload find the server it started.
func TestRoadRunnerConfigFile(t *testing.T) {
	dir := t.TempDir()
	wd, _ := os.Getwd()
	static := filepath.Join(dir, "public")
	os.Mkdir(static, 0o755)
	os.WriteFile(filepath.Join(static, "robots.txt"), []byte("User-agent: *\n"), 0o644)
	cfg := fmt.Sprintf(`version: "3"
rpc:
  listen: tcp://127.0.0.1:6001
server:
  command: "php %s/testdata/rr_worker.php"
  relay: pipes
  env:
    APP_ENV: test
http:
  address: 127.0.0.1:0
  max_request_size: 2
  middleware: ["static", "gzip"]
  static:
    dir: %q
  pool:
    num_workers: 2
    max_jobs: 100
    allocate_timeout: 30s
    supervisor:
      exec_ttl: 10s
      max_worker_memory: 128
kv:
  local:
    driver: memory
jobs:
  consume: []
logs:
  level: debug
  mode: production
`, wd, static)
	os.WriteFile(filepath.Join(dir, ".rr.yaml"), []byte(cfg), 0o644)
	s := startRR(t, dir)
	if !strings.Contains(s.logText(), "ignored: rpc, kv, jobs, logs.mode, http.middleware.gzip\n") {
		t.Fatalf("the ignored sections are not named on one line:\n%s", s.logText())
	}
	resp, body := get(t, s.url+"/")
	expectStatus(t, resp, body, 200)
	resp, body = get(t, s.url+"/robots.txt")
	expectStatus(t, resp, body, 200)
	if body != "User-agent: *\n" {
		t.Fatalf("static file: %q", body)
	}
	out := ferryIn(t, dir, "workers", "-c", ".rr.yaml")
	if strings.Count(out, "ready")+strings.Count(out, "working") != 2 {
		t.Fatalf("ferry workers:\n%s", out)
	}
	if out := ferryIn(t, dir, "reload", "-c", ".rr.yaml"); !strings.Contains(out, "reloaded 2 workers") {
		t.Fatalf("ferry reload: %s", out)
	}
	resp, body = get(t, s.url+"/")
	expectStatus(t, resp, body, 200)
}

func ferryIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(ferryBin, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ferry %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// startRR runs `ferry serve` without -c in dir, where .rr.yaml is the only
// configuration: the admin socket lands there too.
func startRR(t *testing.T, dir string) *server {
	t.Helper()
	s := &server{admin: filepath.Join(dir, "ferry.sock"), cmd: exec.Command(ferryBin, "serve")}
	s.cmd.Dir = dir
	run(t, s)
	return s
}
