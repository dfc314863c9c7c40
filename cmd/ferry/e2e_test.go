package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

type echoed struct {
	Method  string                     `json:"method"`
	Path    string                     `json:"path"`
	URI     string                     `json:"uri"`
	Query   map[string]any             `json:"query"`
	Post    map[string]any             `json:"post"`
	Files   map[string]map[string]any  `json:"files"`
	Cookies map[string]string          `json:"cookies"`
	Headers map[string][]string        `json:"headers"`
	Body    string                     `json:"body"`
	Proto   string                     `json:"protocol"`
	Extra   map[string]json.RawMessage `json:"-"`
}

func decode(t *testing.T, body string) echoed {
	t.Helper()
	var e echoed
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("bad JSON %q: %v", body, err)
	}
	return e
}

func TestHTTPRequestsReachPHP(t *testing.T) {
	s := startFerry(t, appConfig(""))

	t.Run("GET with query, cookies and repeated headers", func(t *testing.T) {
		req, _ := http.NewRequest("GET", s.url+"/echo?a=1&list[]=x&list[]=y", nil)
		req.Header.Add("X-Test", "one")
		req.Header.Add("X-Test", "two")
		req.Header.Add("Cookie", "sid=abc; theme=dark")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp)
		expectStatus(t, resp, body, 200)
		e := decode(t, body)
		if e.Method != "GET" || e.Path != "/echo" || e.Query["a"] != "1" || fmt.Sprint(e.Query["list"]) != "[x y]" {
			t.Fatalf("request not decoded: %+v", e)
		}
		if e.Cookies["sid"] != "abc" || e.Cookies["theme"] != "dark" {
			t.Fatalf("cookies: %v", e.Cookies)
		}
		if fmt.Sprint(e.Headers["X-Test"]) != "[one two]" {
			t.Fatalf("headers: %v", e.Headers)
		}
	})

	t.Run("urlencoded form", func(t *testing.T) {
		resp, err := client.PostForm(s.url+"/echo", url.Values{"name": {"Ada Lovelace"}, "tags[]": {"a", "b"}})
		if err != nil {
			t.Fatal(err)
		}
		e := decode(t, readAll(t, resp))
		if e.Method != "POST" || e.Post["name"] != "Ada Lovelace" || fmt.Sprint(e.Post["tags"]) != "[a b]" {
			t.Fatalf("form: %+v", e.Post)
		}
	})

	t.Run("multipart with uploads, files removed afterwards", func(t *testing.T) {
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		mw.WriteField("title", "report")
		mw.WriteField("meta[lang]", "fr")
		fw, _ := mw.CreateFormFile("doc", "notes.txt")
		fw.Write([]byte("file content \x00 binary"))
		mw.Close()
		resp, err := client.Post(s.url+"/echo", mw.FormDataContentType(), &buf)
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp)
		expectStatus(t, resp, body, 200)
		e := decode(t, body)
		if e.Post["title"] != "report" || fmt.Sprint(e.Post["meta"]) != "map[lang:fr]" {
			t.Fatalf("multipart fields: %v", e.Post)
		}
		doc := e.Files["doc"]
		if doc["name"] != "notes.txt" || doc["content"] != "file content \x00 binary" || doc["exists"] != true {
			t.Fatalf("upload: %v", doc)
		}
		tmp, _ := doc["tmp_name"].(string)
		if _, err := os.Stat(tmp); !os.IsNotExist(err) {
			t.Fatalf("uploaded temp file %s still exists after the request", tmp)
		}
	})

	t.Run("raw JSON body", func(t *testing.T) {
		resp, err := client.Post(s.url+"/echo", "application/json", strings.NewReader(`{"k":[1,2]}`))
		if err != nil {
			t.Fatal(err)
		}
		if e := decode(t, readAll(t, resp)); e.Body != `{"k":[1,2]}` {
			t.Fatalf("body %q", e.Body)
		}
	})

	t.Run("status, multi-value headers and cookies out", func(t *testing.T) {
		resp, body := get(t, s.url+"/headers")
		expectStatus(t, resp, body, 201)
		if fmt.Sprint(resp.Header.Values("X-Multi")) != "[one two]" {
			t.Fatalf("X-Multi: %v", resp.Header.Values("X-Multi"))
		}
		cookies := resp.Cookies()
		if len(cookies) != 2 || cookies[0].Name != "a" || cookies[1].Name != "session" || !cookies[1].HttpOnly {
			t.Fatalf("cookies: %v", resp.Header.Values("Set-Cookie"))
		}
	})

	t.Run("echoed output ends up in the body", func(t *testing.T) {
		_, body := get(t, s.url+"/print")
		if body != "printed returned" {
			t.Fatalf("body %q", body)
		}
	})

	t.Run("reset hooks run between requests", func(t *testing.T) {
		for i := 0; i < 5; i++ {
			if _, body := get(t, s.url+"/counter"); body != "1" {
				t.Fatalf("counter %q: state leaked across requests", body)
			}
		}
	})

	t.Run("large response", func(t *testing.T) {
		_, body := get(t, s.url+"/big?n=3000000")
		if len(body) != 3000000 {
			t.Fatalf("got %d bytes", len(body))
		}
	})
}

func TestHTTPErrors(t *testing.T) {
	s := startFerry(t, appConfig("  exec_ttl: 1s\n  allocate_timeout: 1s\n"))

	t.Run("413 body too large", func(t *testing.T) {
		resp, err := client.Post(s.url+"/echo", "text/plain", bytes.NewReader(make([]byte, 2<<20)))
		if err != nil {
			t.Fatal(err)
		}
		body := readAll(t, resp)
		expectStatus(t, resp, body, 413)
	})

	t.Run("413 chunked body too large", func(t *testing.T) {
		req, _ := http.NewRequest("POST", s.url+"/echo", io.MultiReader(bytes.NewReader(make([]byte, 2<<20))))
		req.ContentLength = -1
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		expectStatus(t, resp, readAll(t, resp), 413)
	})

	t.Run("431 headers too large", func(t *testing.T) {
		req, _ := http.NewRequest("GET", s.url+"/echo", nil)
		req.Header.Set("X-Huge", strings.Repeat("h", 70<<10))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		expectStatus(t, resp, readAll(t, resp), 431)
	})

	t.Run("500 on an uncaught exception, no details without debug", func(t *testing.T) {
		resp, body := get(t, s.url+"/throw")
		expectStatus(t, resp, body, 500)
		if strings.Contains(body, "secret detail") {
			t.Fatalf("exception details leaked: %q", body)
		}
		if !waitLog(s, "secret detail") {
			t.Fatalf("exception details not logged")
		}
	})

	t.Run("502 when the worker dies, and the server keeps serving", func(t *testing.T) {
		resp, body := get(t, s.url+"/crash")
		expectStatus(t, resp, body, 502)
		for i := 0; i < 10; i++ {
			resp, body := get(t, s.url+"/pid")
			expectStatus(t, resp, body, 200)
		}
	})

	t.Run("504 at exec_ttl", func(t *testing.T) {
		resp, body := get(t, s.url+"/sleep?ms=5000")
		expectStatus(t, resp, body, 504)
	})

}

func TestHTTP503WhenNoWorkerFreesUp(t *testing.T) {
	s := startFerry(t, appConfig("  pipeline: 1\n  allocate_timeout: 300ms\n"))
	var wg sync.WaitGroup
	for i := 0; i < 2; i++ { // occupy both workers
		wg.Add(1)
		go func() { defer wg.Done(); get(t, s.url+"/sleep?ms=1500") }()
	}
	until(t, "both workers busy", 10*time.Second, func() bool { return s.metric(t, "ferry_jobs_in_flight") == 2 })
	resp, body := get(t, s.url+"/pid")
	expectStatus(t, resp, body, 503)
	if resp.Header.Get("Retry-After") == "" {
		t.Fatal("503 without Retry-After")
	}
	wg.Wait()
}

func waitLog(s *server, needle string) bool {
	for i := 0; i < 100; i++ {
		if strings.Contains(s.logText(), needle) {
			return true
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// exec_ttl answers 504 on the PHP path too (a PSR-7 app's request, which
// php/worker finishes, where the C path hands it back in direct mode).
func TestPSR7AppExecTTL(t *testing.T) {
	s := startFerry(t, strings.Replace(appConfig("  exec_ttl: 1s\n"), "testdata/app.php", "testdata/psr7.php", 1))
	resp, body := get(t, s.url+"/sleep?ms=5000")
	expectStatus(t, resp, body, 504)
	resp, body = get(t, s.url+"/sleep?ms=1")
	expectStatus(t, resp, body, 202)
}

func TestPSR7App(t *testing.T) {
	s := startFerry(t, strings.Replace(appConfig(""), "testdata/app.php", "testdata/psr7.php", 1))
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	mw.WriteField("f", "v")
	fw, _ := mw.CreateFormFile("up", "a.txt")
	fw.Write([]byte("uploaded"))
	mw.Close()
	req, _ := http.NewRequest("POST", s.url+"/psr?q=1", &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("X-Test", "yes")
	req.Header.Set("Cookie", "c=1")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, resp)
	expectStatus(t, resp, body, 202)
	var got map[string]any
	json.Unmarshal([]byte(body), &got)
	if got["path"] != "/psr" || fmt.Sprint(got["query"]) != "map[q:1]" || fmt.Sprint(got["parsed"]) != "map[f:v]" ||
		fmt.Sprint(got["cookies"]) != "map[c:1]" || got["header"] != "yes" || fmt.Sprint(got["files"]) != "map[up:map[content:uploaded name:a.txt]]" {
		t.Fatalf("PSR-7 request: %s", body)
	}
	if fmt.Sprint(resp.Header.Values("X-Multi")) != "[a b]" {
		t.Fatalf("X-Multi %v", resp.Header.Values("X-Multi"))
	}
}

func TestReloadDuringRequestsLosesNone(t *testing.T) {
	s := startFerry(t, appConfig(""))
	_, before := get(t, s.url+"/pid")
	var failed, done atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := client.Get(s.url + "/sleep?ms=3")
				if err != nil {
					failed.Add(1)
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				done.Add(1)
				if resp.StatusCode != 200 {
					failed.Add(1)
				}
			}
		}()
	}
	until(t, "load before the reload", 10*time.Second, func() bool { return done.Load() >= 25 })
	out, err := exec.Command(ferryBin, "reload", "-c", s.cfg).CombinedOutput()
	if err != nil {
		t.Fatalf("ferry reload: %v %s", err, out)
	}
	after := done.Load()
	until(t, "load after the reload", 10*time.Second, func() bool { return done.Load() >= after+25 })
	close(stop)
	wg.Wait()
	if failed.Load() != 0 || done.Load() < 50 {
		t.Fatalf("%d of %d requests failed during reload", failed.Load(), done.Load())
	}
	table, err := exec.Command(ferryBin, "workers", "-c", s.cfg).CombinedOutput()
	live, retired, _ := strings.Cut(string(table), "RETIRED")
	if err != nil || !strings.Contains(live, "CPU%") || !strings.Contains(live, "USS") || strings.Contains(live, before+" ") ||
		!regexp.MustCompile(`(?m)^`+before+` +reload +\d+ `).MatchString(retired) {
		t.Fatalf("ferry workers after reload: %v\n%s (old pid %s: retired for reload)", err, table, before)
	}
	js, err := exec.Command(ferryBin, "workers", "-c", s.cfg, "--json").Output()
	var l workerList
	if err != nil || json.Unmarshal(js, &l) != nil || len(l.Workers) != 2 || l.Workers[0].RSS == 0 ||
		l.Workers[0].USS == 0 || l.Workers[0].USS > l.Workers[0].PSS || l.Workers[0].PSS > l.Workers[0].RSS || len(l.Retired) < 2 {
		t.Fatalf("ferry workers --json: %v\n%s", err, js)
	}
}

func TestWorkersRunWithOpcacheAndPreload(t *testing.T) {
	s := startFerry(t, appConfig(""))
	if _, body := get(t, s.url+"/opcache"); body != "opcache on, not preloaded" {
		t.Fatalf("default workers: %q", body)
	}
	s = startFerry(t, appConfig("  php:\n    preload: \"%DIR%/testdata/preload.php\"\n"))
	if _, body := get(t, s.url+"/opcache"); body != "opcache on, preloaded" {
		t.Fatalf("with pool.php.preload: %q", body)
	}
}

func TestBadConfigIsRejectedWithPath(t *testing.T) {
	cfg := t.TempDir() + "/ferry.yaml"
	os.WriteFile(cfg, []byte("pool:\n  num_workers: 1\n  max_jobs: -3\n"), 0o644)
	out, err := exec.Command(ferryBin, "serve", "-c", cfg).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "pool.max_jobs") {
		t.Fatalf("want an error naming pool.max_jobs, got %v: %s", err, out)
	}
}

func TestBootFailureIsReadable(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(dir+"/broken.php", []byte("<?php\necho 'oops';\nfunction {\n"), 0o644)
	cfg := dir + "/ferry.yaml"
	os.WriteFile(cfg, []byte(fmt.Sprintf("server:\n  address: %q\nadmin:\n  socket: \"\"\npool:\n  command: [php, %s/broken.php]\n  num_workers: 1\n  allocate_timeout: 5s\n", anyPort, dir)), 0o644)
	out, err := exec.Command(ferryBin, "serve", "-c", cfg).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "syntax error") {
		t.Fatalf("want PHP's syntax error quoted, got %v: %s", err, out)
	}
}
