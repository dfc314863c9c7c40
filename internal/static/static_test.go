package static

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const staticSecret = "TOP-SECRET-OUTSIDE-THE-DOCROOT"

// secretBeside makes dir/root (returned) and dir/secret.txt, which must never be served.
func secretBeside(t *testing.T) (root, secret string) {
	dir := t.TempDir()
	root = filepath.Join(dir, "root")
	secret = filepath.Join(dir, "secret.txt")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	tree(t, dir, map[string]string{"secret.txt": staticSecret})
	return root, secret
}

// A file whose name looks percent-encoded was once re-parsed as a URI, and
// "%2e%2e%2f" became "../".
func TestStaticEncodedNameIsNotReparsed(t *testing.T) {
	eachStatic(t, func(t *testing.T, start func(*Files) string) {
		root, _ := secretBeside(t)
		tree(t, root, map[string]string{"%2e%2e%2fsecret.txt": "decoy", "%2e%2e%2f..%2fsecret.txt": "decoy2"})
		addr := start(&Files{Dir: root, Prefix: "/"})
		wantFile(t, fetch(t, addr, "GET", "/%252e%252e%252fsecret.txt"), "encoded name", "decoy")
		wantFile(t, fetch(t, addr, "GET", "/%252e%252e%252f..%252fsecret.txt"), "encoded name 2", "decoy2")
	})
}

// Symlinks are followed only while they stay beneath the docroot.
func TestStaticSymlinkOutOfRootIsNotServed(t *testing.T) {
	eachStatic(t, func(t *testing.T, start func(*Files) string) {
		root, secret := secretBeside(t)
		tree(t, root, map[string]string{"real.txt": "inside", "sub/deep.txt": "deep"})
		links := map[string]string{
			"rel.txt":      "../secret.txt",
			"abs.txt":      secret,
			"up":           "..",
			"sub/climb":    "../../secret.txt",
			"alias.txt":    "real.txt",
			"sub/back.txt": "../real.txt",
			"absinside":    filepath.Join(root, "real.txt"),
			"proc":         "/proc/self/root" + secret,
		}
		for name, target := range links {
			if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(name))); err != nil {
				t.Fatal(err)
			}
		}
		addr := start(&Files{Dir: root, Prefix: "/"})
		for _, p := range []string{"/rel.txt", "/abs.txt", "/up/secret.txt", "/sub/climb", "/absinside", "/proc"} {
			r := fetch(t, addr, "GET", p)
			wantFellThrough(t, r, p)
			if bytes.Contains(r.Body(), []byte(staticSecret)) {
				t.Errorf("%s served the secret", p)
			}
		}
		// A relative link to another file of the docroot is served.
		wantFile(t, fetch(t, addr, "GET", "/alias.txt"), "/alias.txt", "inside")
		wantFile(t, fetch(t, addr, "GET", "/sub/back.txt"), "/sub/back.txt", "inside")
	})
}

func TestStaticPrefixMatchesWholeSegments(t *testing.T) {
	eachStatic(t, func(t *testing.T, start func(*Files) string) {
		root := t.TempDir()
		tree(t, root, map[string]string{"x/a.txt": "a", "b.txt": "b"})
		for _, prefix := range []string{"/static", "/static/"} {
			addr := start(&Files{Dir: root, Prefix: prefix})
			wantFile(t, fetch(t, addr, "GET", "/static/x/a.txt"), prefix+" /static/x/a.txt", "a")
			wantFile(t, fetch(t, addr, "GET", "/static/b.txt"), prefix+" /static/b.txt", "b")
			for _, p := range []string{"/staticx/a.txt", "/staticb.txt", "/static", "/static/", "/b.txt", "/"} {
				wantFellThrough(t, fetch(t, addr, "GET", p), prefix+" "+p)
			}
		}
	})
}

// Names with characters that are special in a URI are served by their own name.
func TestStaticServesNamesWithURICharacters(t *testing.T) {
	eachStatic(t, func(t *testing.T, start func(*Files) string) {
		root := t.TempDir()
		files := map[string]string{
			"a":              "plain a",
			"a?b.txt":        "question mark",
			"a#b.txt":        "hash",
			"100%.txt":       "percent",
			"%41.txt":        "literal percent-41",
			"A.txt":          "capital A",
			"with space.txt": "space",
			"ünï cödé.txt":   "utf-8",
			"semi;colon.txt": "semicolon",
			"back\\slash":    "backslash",
			"plus+sign.txt":  "plus",
		}
		tree(t, root, files)
		addr := start(&Files{Dir: root, Prefix: "/"})
		for target, name := range map[string]string{
			"/a%3Fb.txt":                          "a?b.txt",
			"/a%23b.txt":                          "a#b.txt",
			"/100%25.txt":                         "100%.txt",
			"/%2541.txt":                          "%41.txt",
			"/%41.txt":                            "A.txt",
			"/with%20space.txt":                   "with space.txt",
			"/%C3%BCn%C3%AF%20c%C3%B6d%C3%A9.txt": "ünï cödé.txt",
			"/semi;colon.txt":                     "semi;colon.txt",
			"/back%5Cslash":                       "back\\slash",
			"/plus+sign.txt":                      "plus+sign.txt",
			"/a?b.txt":                            "a", // a real query string
		} {
			wantFile(t, fetch(t, addr, "GET", target), target, files[name])
		}
	})
}

// Files must never create anything in the docroot (fasthttp's FS used to
// leave compressed copies such as style.css.fasthttp.gz beside the files).
func TestStaticWritesNothingIntoTheDocroot(t *testing.T) {
	eachStatic(t, func(t *testing.T, start func(*Files) string) {
		root := t.TempDir()
		css := strings.Repeat("body { color: #123456; margin: 0 auto; }\n", 400)
		tree(t, root, map[string]string{"style.css": css, "app.js": strings.Repeat("console.log(1);\n", 500)})
		before := listing(t, root)
		addr := start(&Files{Dir: root, Prefix: "/"})
		for _, ae := range []string{"gzip", "br", "gzip, deflate, br, zstd"} {
			for _, p := range []string{"/style.css", "/app.js"} {
				r := fetch(t, addr, "GET", p, "Accept-Encoding", ae)
				if r.StatusCode() != 200 || len(r.Header.Peek("Content-Encoding")) != 0 {
					t.Errorf("%s (%s): status %d encoding %q, want the file as it is", p, ae, r.StatusCode(), r.Header.Peek("Content-Encoding"))
				}
			}
		}
		if after := listing(t, root); !slices.Equal(before, after) {
			t.Errorf("the docroot changed:\nbefore %q\nafter  %q", before, after)
		}
	})
}

func gzipped(t *testing.T, name, s string) string {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Name = name // makes these bytes recognisable
	io.WriteString(w, s)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestStaticPrecompressedSiblings(t *testing.T) {
	eachStatic(t, func(t *testing.T, start func(*Files) string) {
		root := t.TempDir()
		css := strings.Repeat("p { margin: 0 }\n", 100)
		gz := gzipped(t, "sibling", css)
		tree(t, root, map[string]string{
			"style.css": css, "style.css.gz": gz, "style.css.br": "brotli bytes",
			"only.js": "gz only", "only.js.gz": gzipped(t, "only", "gz only"),
			"dir.txt": "dir sibling", "dir.txt.gz/x": "a directory named like a sibling",
		})
		addr := start(&Files{Dir: root, Prefix: "/"})
		for _, c := range []struct{ ae, path, enc, body string }{
			{"gzip", "/style.css", "gzip", gz},
			{"br", "/style.css", "br", "brotli bytes"},
			{"gzip, br", "/style.css", "br", "brotli bytes"},
			{"br;q=0.5, gzip", "/style.css", "gzip", gz},
			{"br;q=0, gzip;q=0", "/style.css", "", css},
			{"*", "/style.css", "br", "brotli bytes"},
			{"*, br;q=0", "/style.css", "gzip", gz},
			{"identity", "/style.css", "", css},
			{"", "/style.css", "", css},
			{"br, gzip", "/only.js", "gzip", gzipped(t, "only", "gz only")},
			{"gzip", "/dir.txt", "", "dir sibling"},
		} {
			var hdr []string
			if c.ae != "" {
				hdr = []string{"Accept-Encoding", c.ae}
			}
			what := c.path + " with Accept-Encoding " + c.ae
			r := fetch(t, addr, "GET", c.path, hdr...)
			wantFile(t, r, what, c.body)
			if got := string(r.Header.Peek("Content-Encoding")); got != c.enc {
				t.Errorf("%s: Content-Encoding %q, want %q", what, got, c.enc)
			}
			if got := string(r.Header.Peek("Vary")); got != "Accept-Encoding" {
				t.Errorf("%s: Vary %q, want Accept-Encoding", what, got)
			}
			want := "text/css; charset=utf-8"
			if strings.HasSuffix(c.path, ".js") {
				want = "text/javascript; charset=utf-8"
			} else if strings.HasSuffix(c.path, ".txt") {
				want = "text/plain; charset=utf-8"
			}
			if got := string(r.Header.ContentType()); got != want {
				t.Errorf("%s: Content-Type %q, want %q", what, got, want)
			}
		}
		gr, err := gzip.NewReader(strings.NewReader(gz))
		if err != nil {
			t.Fatal(err)
		}
		if plain, _ := io.ReadAll(gr); string(plain) != css || gr.Name != "sibling" {
			t.Errorf("the gzip sibling does not decode to the file")
		}
	})
}

// Every request opens the file again: a file changed in place (same inode)
// is served whole as it is now, never cut to the size it had before.
func TestStaticFileChangedInPlaceIsServedWhole(t *testing.T) {
	eachStatic(t, func(t *testing.T, start func(*Files) string) {
		root := t.TempDir()
		p := filepath.Join(root, "data.txt")
		tree(t, root, map[string]string{"data.txt": "version one"})
		addr := start(&Files{Dir: root, Prefix: "/"})
		first := fetch(t, addr, "GET", "/data.txt")
		wantFile(t, first, "first", "version one")
		for _, next := range []string{"version two is a good deal longer than the first one", "v3", ""} {
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(f, next)
			f.Close()
			r := fetch(t, addr, "GET", "/data.txt")
			wantFile(t, r, "after rewriting to "+next, next)
			if bytes.Equal(r.Header.Peek("ETag"), first.Header.Peek("ETag")) {
				t.Errorf("ETag %s did not change with the content", r.Header.Peek("ETag"))
			}
		}
	})
}
