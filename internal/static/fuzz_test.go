package static

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// FuzzStaticPath sends arbitrary request targets to Static over a docroot full
// of traps (links out, names that decode to "../") and checks that nothing
// but a docroot file is ever served, and never the file beside the docroot.
func FuzzStaticPath(f *testing.F) {
	dir := f.TempDir()
	root := filepath.Join(dir, "root")
	secret := "FERRY-FUZZ-SECRET-" + filepath.Base(dir)
	inside := map[string]string{
		"a.txt": "file a", "sub/b.txt": "file b", ".well-known/c.txt": "file c",
		"%2e%2e%2fsecret.txt": "decoy 1", "%2e%2e%2f..%2fsecret.txt": "decoy 2", "..%2fsecret.txt": "decoy 3",
		"a?b": "file a?b", "a#b": "file a#b", "sp ace": "file sp ace", "sub/.env": "dotfile",
	}
	tree(f, dir, map[string]string{"secret.txt": secret, "sibling/secret.txt": secret})
	tree(f, root, inside)
	for name, target := range map[string]string{
		"up": "..", "rel.txt": "../secret.txt", "abs.txt": filepath.Join(dir, "secret.txt"),
		"sub/up2": "../..", "alias": "a.txt", "sibling": "../sibling",
	} {
		if err := os.Symlink(target, filepath.Join(root, filepath.FromSlash(name))); err != nil {
			f.Fatal(err)
		}
	}
	served := map[string]bool{}
	for _, c := range inside {
		served[c] = true
	}
	var statics []*Files
	for _, v := range staticVariants {
		s := &Files{Dir: root, Prefix: "/", Forbid: []string{".php"}}
		v.apply(s)
		statics = append(statics, s)
	}
	for _, seed := range []string{
		"/a.txt", "/%252e%252e%252fsecret.txt", "/%252e%252e%252f..%252fsecret.txt", "/..%252fsecret.txt",
		"/../secret.txt", "/%2e%2e/secret.txt", "/up/secret.txt", "/rel.txt", "/abs.txt", "/sub/up2/secret.txt",
		"/sibling/secret.txt", "/sub/../../secret.txt", "//secret.txt", "/.well-known/../../secret.txt",
		"http://host/../secret.txt", "/a%00b", "/\\..\\secret.txt", "/a%3Fb", "/a%23b", "/sp%20ace",
		"/sub/.env", "/alias", "/%2e%2e%2f%2e%2e%2fsecret.txt", "/.well-known/c.txt", "/sub/b.txt/..",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, target string) {
		for _, s := range statics {
			var ctx fasthttp.RequestCtx
			ctx.Request.Header.SetMethod("GET")
			ctx.Request.SetRequestURI(target)
			if !s.Serve(&ctx) {
				continue
			}
			body := ctx.Response.Body()
			if bytes.Contains(body, []byte(secret)) {
				t.Fatalf("%q served the file beside the docroot", target)
			}
			if ctx.Response.StatusCode() == 200 && !served[string(body)] {
				t.Fatalf("%q served %q, which is no docroot file", target, body)
			}
			if strings.Contains(string(body), "dotfile") {
				t.Fatalf("%q served a dotfile", target)
			}
		}
	})
}
