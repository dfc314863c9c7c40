package main

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"slices"
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

// spoolConfig serves app.php with everything the server and its workers put
// on disk under tmp: uploads, spooled bodies and the workers' spool
// directories (uploads.dir), and PHP's own temp files (TMPDIR), where a worker
// that does not know FERRY_SPOOL_DIR spools.
func spoolConfig(tmp string, workers int, extra string) string {
	cfg := strings.Replace(appConfig(fmt.Sprintf("  env: {TMPDIR: %q}\n%s", tmp, extra)),
		"  max_body_size: 1MiB\n", fmt.Sprintf("  max_body_size: 1MiB\n  body_buffer_size: 1KiB\n  uploads: {dir: %q}\n", tmp), 1)
	return strings.Replace(cfg, "num_workers: 2", fmt.Sprintf("num_workers: %d", workers), 1)
}

// clean reports whether tmp holds only the spool directories of live
// workers, live of them, and no file at all: nothing spooled was left behind.
func clean(t testing.TB, tmp string, live int) (bool, string) {
	t.Helper()
	var left []string
	dirs := 0
	filepath.WalkDir(tmp, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil || path == tmp:
		case d.IsDir() && strings.HasPrefix(d.Name(), "ferry-spool-") && filepath.Dir(path) == tmp:
			dirs++
		default:
			left = append(left, strings.TrimPrefix(path, tmp))
		}
		return nil
	})
	return len(left) == 0 && dirs == live, fmt.Sprintf("%d spool directories (want %d), left behind: %v", dirs, live, left)
}

// waitClean waits until the workers gone have exited and tmp is clean.
func waitClean(t testing.TB, tmp string, live int, gone ...int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ok, what := clean(t, tmp, live)
		if ok && !slices.ContainsFunc(gone, running) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("10s on: %s; workers that should have exited still running: %v", what, slices.ContainsFunc(gone, running))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Output past the spool threshold goes to a temp file the server sends and
// removes: the client gets all of it while PHP's memory stays flat.
func TestSpooledOutput(t *testing.T) {
	tmp := t.TempDir()
	s := startFerry(t, spoolConfig(tmp, 2, ""))
	resp, body := get(t, s.url+"/spool?kib=8192")
	expectStatus(t, resp, body, 200)
	if len(body) != 8192*1024 || !strings.HasPrefix(body, "0...") || !strings.Contains(body, "\n8191.") {
		t.Fatalf("spooled body: %d bytes", len(body))
	}
	if peak, _ := strconv.Atoi(resp.Header.Get("X-Peak")); peak > 6<<20 {
		t.Fatalf("PHP's peak memory %d while printing 8 MiB: the body was buffered", peak)
	}
	if ok, what := clean(t, tmp, 2); !ok {
		t.Fatal(what)
	}
	resp, body = get(t, s.url+"/spool?kib=4")
	expectStatus(t, resp, body, 200)
	if len(body) != 4096 {
		t.Fatalf("small output: %d bytes", len(body))
	}
}

// A worker killed mid-request leaves nothing on disk: not the output it was
// spooling (each such request left a 2 MB ferry-out file in the temp dir
// before: PHP removes it only once it has answered), nor the request's
// spooled body or uploads. And a worker that exits right after answering
// with a spooled file (max_jobs) does not take the file away before the
// server has opened it.
func TestSpoolLeftByADeadWorker(t *testing.T) {
	t.Run("killed by exec_ttl", func(t *testing.T) {
		tmp := t.TempDir()
		s := startFerry(t, spoolConfig(tmp, 1, "  exec_ttl: 1s\n"))
		for _, req := range []func() (*http.Response, error){
			func() (*http.Response, error) { return client.Get(s.url + "/spool?kib=2048&hang_ms=30000") },
			func() (*http.Response, error) { // a spooled request body
				return client.Post(s.url+"/sleep?ms=30000", "application/octet-stream", strings.NewReader(strings.Repeat("b", 64<<10)))
			},
			func() (*http.Response, error) { // uploads
				var buf bytes.Buffer
				mw := multipart.NewWriter(&buf)
				fw, _ := mw.CreateFormFile("doc", "notes.txt")
				fw.Write(bytes.Repeat([]byte("u"), 64<<10))
				mw.Close()
				return client.Post(s.url+"/sleep?ms=30000", mw.FormDataContentType(), &buf)
			},
		} {
			old := s.workers(t)[0].PID
			resp, err := req()
			if err != nil {
				t.Fatal(err)
			}
			body := readAll(t, resp)
			expectStatus(t, resp, body, http.StatusGatewayTimeout)
			waitClean(t, tmp, 1, old)
		}
		resp, body := get(t, s.url+"/spool?kib=2048")
		expectStatus(t, resp, body, 200)
		if len(body) != 2048*1024 {
			t.Fatalf("spooled by the replacement: %d bytes", len(body))
		}
	})
	t.Run("retired after each answer", func(t *testing.T) {
		tmp := t.TempDir()
		s := startFerry(t, spoolConfig(tmp, 1, "  max_jobs: 1\n"))
		var pids []int
		for i := 0; i < 5; i++ {
			pids = append(pids, s.workers(t)[0].PID)
			resp, body := get(t, s.url+"/spool?kib=2048")
			expectStatus(t, resp, body, 200)
			if len(body) != 2048*1024 {
				t.Fatalf("answer %d: %d bytes", i, len(body))
			}
			until(t, "the next worker", 10*time.Second, func() bool {
				ws := s.workers(t)
				return len(ws) == 1 && !slices.Contains(pids, ws[0].PID) && ws[0].State == "ready"
			})
		}
		waitClean(t, tmp, 1, pids...)
	})
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
