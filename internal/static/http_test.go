package static

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

func httpDate(t time.Time) string { return t.UTC().Format(time.RFC1123[:len(time.RFC1123)-3] + "GMT") }

func TestStaticValidatorsAndConditionalRequests(t *testing.T) {
	eachStatic(t, func(t *testing.T, start func(*Files) string) {
		root := t.TempDir()
		tree(t, root, map[string]string{"a.txt": "hello"})
		mtime := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
		if err := os.Chtimes(filepath.Join(root, "a.txt"), mtime, mtime); err != nil {
			t.Fatal(err)
		}
		addr := start(&Files{Dir: root, Prefix: "/", CacheControl: "public, max-age=60"})
		r := fetch(t, addr, "GET", "/a.txt")
		wantFile(t, r, "plain", "hello")
		etag := string(r.Header.Peek("ETag"))
		if len(etag) < 3 || etag[0] != '"' || etag[len(etag)-1] != '"' || strings.HasPrefix(etag, "W/") {
			t.Fatalf("ETag %q, want a quoted strong tag", etag)
		}
		for h, want := range map[string]string{
			"Last-Modified": httpDate(mtime), "Cache-Control": "public, max-age=60",
			"Accept-Ranges": "bytes", "Content-Length": "5", "Content-Type": "text/plain; charset=utf-8",
		} {
			if got := string(r.Header.Peek(h)); got != want {
				t.Errorf("%s %q, want %q", h, got, want)
			}
		}
		before, after := httpDate(mtime.Add(-time.Hour)), httpDate(mtime.Add(time.Hour))
		for _, c := range []struct {
			name   string
			hdr    []string
			status int
		}{
			{"If-None-Match same", []string{"If-None-Match", etag}, 304},
			{"If-None-Match weak same", []string{"If-None-Match", "W/" + etag}, 304},
			{"If-None-Match in a list", []string{"If-None-Match", `"x", ` + etag}, 304},
			{"If-None-Match *", []string{"If-None-Match", "*"}, 304},
			{"If-None-Match other", []string{"If-None-Match", `"other"`}, 200},
			{"If-None-Match wins over IMS", []string{"If-None-Match", `"other"`, "If-Modified-Since", after}, 200},
			{"If-None-Match wins over stale IMS", []string{"If-None-Match", etag, "If-Modified-Since", before}, 304},
			{"IMS equal", []string{"If-Modified-Since", httpDate(mtime)}, 304},
			{"IMS later", []string{"If-Modified-Since", after}, 304},
			{"IMS earlier", []string{"If-Modified-Since", before}, 200},
			{"IMS garbage", []string{"If-Modified-Since", "yesterday"}, 200},
			{"If-Match same", []string{"If-Match", etag}, 200},
			{"If-Match *", []string{"If-Match", "*"}, 200},
			{"If-Match other", []string{"If-Match", `"other"`}, 412},
			{"If-Match weak", []string{"If-Match", "W/" + etag}, 412},
			{"If-Unmodified-Since earlier", []string{"If-Unmodified-Since", before}, 412},
			{"If-Unmodified-Since later", []string{"If-Unmodified-Since", after}, 200},
		} {
			r := fetch(t, addr, "GET", "/a.txt", c.hdr...)
			if r.StatusCode() != c.status {
				t.Errorf("%s: status %d, want %d", c.name, r.StatusCode(), c.status)
			}
			if c.status == 304 {
				if len(r.Body()) != 0 || string(r.Header.Peek("ETag")) != etag || string(r.Header.Peek("Vary")) == "" {
					t.Errorf("%s: 304 with body %q ETag %q Vary %q", c.name, r.Body(), r.Header.Peek("ETag"), r.Header.Peek("Vary"))
				}
			}
		}
		h := fetch(t, addr, "HEAD", "/a.txt", "If-None-Match", etag)
		if h.StatusCode() != 304 {
			t.Errorf("HEAD If-None-Match: status %d, want 304", h.StatusCode())
		}
	})
}

func TestStaticRanges(t *testing.T) {
	eachStatic(t, func(t *testing.T, start func(*Files) string) {
		root := t.TempDir()
		var b strings.Builder
		for i := 0; b.Len() < 100; i++ {
			fmt.Fprintf(&b, "%d,", i)
		}
		body := b.String()[:100]
		tree(t, root, map[string]string{"r.txt": body, "empty.txt": ""})
		addr := start(&Files{Dir: root, Prefix: "/"})
		etag := string(fetch(t, addr, "GET", "/r.txt").Header.Peek("ETag"))
		lm := string(fetch(t, addr, "GET", "/r.txt").Header.Peek("Last-Modified"))
		for _, c := range []struct {
			name       string
			hdr        []string
			status     int
			from, to   int // the part of body expected
			contentRng string
		}{
			{"closed", []string{"Range", "bytes=10-19"}, 206, 10, 20, "bytes 10-19/100"},
			{"open", []string{"Range", "bytes=90-"}, 206, 90, 100, "bytes 90-99/100"},
			{"suffix", []string{"Range", "bytes=-5"}, 206, 95, 100, "bytes 95-99/100"},
			{"suffix longer than the file", []string{"Range", "bytes=-500"}, 206, 0, 100, "bytes 0-99/100"},
			{"end past the file", []string{"Range", "bytes=95-200"}, 206, 95, 100, "bytes 95-99/100"},
			{"one byte", []string{"Range", "bytes=0-0"}, 206, 0, 1, "bytes 0-0/100"},
			{"huge end", []string{"Range", "bytes=3-99999999999999999999999"}, 206, 3, 100, "bytes 3-99/100"},
			{"unit case", []string{"Range", "Bytes=1-2"}, 206, 1, 3, "bytes 1-2/100"},
			{"start past the end", []string{"Range", "bytes=100-"}, 416, 0, 0, "bytes */100"},
			{"huge start", []string{"Range", "bytes=99999999999999999999999-"}, 416, 0, 0, "bytes */100"},
			{"empty suffix", []string{"Range", "bytes=-0"}, 416, 0, 0, "bytes */100"},
			{"several ranges", []string{"Range", "bytes=0-1,5-6"}, 200, 0, 100, ""},
			{"reversed", []string{"Range", "bytes=20-10"}, 200, 0, 100, ""},
			{"other unit", []string{"Range", "items=1-2"}, 200, 0, 100, ""},
			{"garbage", []string{"Range", "bytes=a-b"}, 200, 0, 100, ""},
			{"signed", []string{"Range", "bytes=+1-2"}, 200, 0, 100, ""},
			{"If-Range etag", []string{"Range", "bytes=1-2", "If-Range", etag}, 206, 1, 3, "bytes 1-2/100"},
			{"If-Range stale etag", []string{"Range", "bytes=1-2", "If-Range", `"stale"`}, 200, 0, 100, ""},
			{"If-Range weak etag", []string{"Range", "bytes=1-2", "If-Range", "W/" + etag}, 200, 0, 100, ""},
			{"If-Range date", []string{"Range", "bytes=1-2", "If-Range", lm}, 206, 1, 3, "bytes 1-2/100"},
			{"If-Range old date", []string{"Range", "bytes=1-2", "If-Range", httpDate(time.Unix(0, 0))}, 200, 0, 100, ""},
		} {
			r := fetch(t, addr, "GET", "/r.txt", c.hdr...)
			if r.StatusCode() != c.status || string(r.Header.Peek("Content-Range")) != c.contentRng {
				t.Errorf("%s: status %d Content-Range %q, want %d %q", c.name, r.StatusCode(), r.Header.Peek("Content-Range"), c.status, c.contentRng)
				continue
			}
			if want := body[c.from:c.to]; string(r.Body()) != want || r.Header.ContentLength() != len(want) {
				t.Errorf("%s: body %q (Content-Length %d), want %q", c.name, r.Body(), r.Header.ContentLength(), want)
			}
		}
		for _, rng := range []string{"bytes=0-", "bytes=-1"} {
			if r := fetch(t, addr, "GET", "/empty.txt", "Range", rng); r.StatusCode() != 416 || string(r.Header.Peek("Content-Range")) != "bytes */0" {
				t.Errorf("empty file %s: status %d Content-Range %q, want 416 bytes */0", rng, r.StatusCode(), r.Header.Peek("Content-Range"))
			}
		}
		// Ranges are not defined for HEAD: it describes the whole file.
		if r := fetch(t, addr, "HEAD", "/r.txt", "Range", "bytes=1-2"); r.StatusCode() != 200 || r.Header.ContentLength() != 100 {
			t.Errorf("HEAD with Range: status %d Content-Length %d, want 200 100", r.StatusCode(), r.Header.ContentLength())
		}
	})
}

func TestStaticHeadAndContentTypes(t *testing.T) {
	eachStatic(t, func(t *testing.T, start func(*Files) string) {
		root := t.TempDir()
		files := map[string]string{
			"a.css": "css", "b.html": "<p>", "c.js": "js", "d.json": "{}", "e.svg": "<svg/>",
			"f.png": "png", "G.CSS": "upper", "h.ferryunknown": "?", "noext": "none", "i.wasm": "w",
		}
		tree(t, root, files)
		addr := start(&Files{Dir: root, Prefix: "/"})
		for name, want := range map[string]string{
			"a.css": "text/css; charset=utf-8", "b.html": "text/html; charset=utf-8",
			"c.js": "text/javascript; charset=utf-8", "d.json": "application/json",
			"e.svg": "image/svg+xml", "f.png": "image/png", "G.CSS": "text/css; charset=utf-8",
			"h.ferryunknown": "application/octet-stream", "noext": "application/octet-stream",
			"i.wasm": "application/wasm",
		} {
			r := fetch(t, addr, "GET", "/"+name)
			wantFile(t, r, name, files[name])
			if got := string(r.Header.ContentType()); got != want {
				t.Errorf("%s: Content-Type %q, want %q", name, got, want)
			}
			h := fetch(t, addr, "HEAD", "/"+name)
			if h.StatusCode() != 200 || h.Header.ContentLength() != len(files[name]) || string(h.Header.ContentType()) != want {
				t.Errorf("HEAD %s: status %d Content-Length %d Content-Type %q", name, h.StatusCode(), h.Header.ContentLength(), h.Header.ContentType())
			}
		}
	})
}

func TestStaticFallsThroughForWhatItDoesNotServe(t *testing.T) {
	eachStatic(t, func(t *testing.T, start func(*Files) string) {
		root := t.TempDir()
		tree(t, root, map[string]string{
			".env": "SECRET=1", ".git/config": "x", "sub/.hidden": "x", "sub/ok.txt": "ok",
			".well-known/acme-challenge/tok": "acme", ".well-known/.x": "x",
			"index.php": "<?php", "lib/Mod.PHP": "<?php", ".htaccess": "x", "a.txt": "a",
			"sub/.well-known/x": "x",
		})
		if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
			t.Fatal(err)
		}
		addr := start(&Files{Dir: root, Prefix: "/", Forbid: []string{".php", ".htaccess"}})
		wantFile(t, fetch(t, addr, "GET", "/.well-known/acme-challenge/tok"), "well-known", "acme")
		wantFile(t, fetch(t, addr, "GET", "/sub/ok.txt"), "sub/ok.txt", "ok")
		for _, p := range []string{
			"/.env", "/.git/config", "/sub/.hidden", "/.well-known/.x", "/sub/.well-known/x",
			"/index.php", "/lib/Mod.PHP", "/lib/mod.php", "/.htaccess",
			"/", "/sub", "/sub/", "/.well-known/", "/missing.txt", "/a.txt/", "/a.txt/x",
			"/fifo", "/a%00.txt", "/sub/./ok.txt/..",
		} {
			wantFellThrough(t, fetch(t, addr, "GET", p), p)
		}
		for _, m := range []string{"POST", "PUT", "DELETE", "OPTIONS"} {
			wantFellThrough(t, fetch(t, addr, m, "/a.txt", "Content-Length", "0"), m)
		}
		// No Dir, no static files.
		addr = start(&Files{Prefix: "/"})
		wantFellThrough(t, fetch(t, addr, "GET", "/a.txt"), "without Dir")
	})
}

// A body stream goes out through sendfile(2) on a TCP connection; a large file
// and a range deep inside it must arrive intact.
func TestStaticLargeFile(t *testing.T) {
	eachStatic(t, func(t *testing.T, start func(*Files) string) {
		root := t.TempDir()
		big := make([]byte, 3<<20)
		for i := range big {
			big[i] = byte(i*7 + i>>11)
		}
		tree(t, root, map[string]string{"big.bin": string(big)})
		addr := start(&Files{Dir: root, Prefix: "/"})
		wantFile(t, fetch(t, addr, "GET", "/big.bin"), "big.bin", string(big))
		r := fetch(t, addr, "GET", "/big.bin", "Range", "bytes=1000000-2999999")
		if r.StatusCode() != fasthttp.StatusPartialContent || string(r.Body()) != string(big[1000000:3000000]) {
			t.Errorf("range of big.bin: status %d, %d bytes, not the expected ones", r.StatusCode(), len(r.Body()))
		}
	})
}
