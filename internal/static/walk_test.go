package static

import (
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

// Every HTTP test also runs with the os.Root walk, the path taken on kernels
// without openat2.
func init() {
	staticVariants = append(staticVariants, struct {
		name  string
		apply func(*Files)
	}{"walk", func(s *Files) { s.walk = true }})
}

func TestStaticUsesOpenat2WhereAvailable(t *testing.T) {
	s := &Files{Dir: t.TempDir()}
	r := s.docroot()
	if r == nil {
		t.Fatal("no docroot")
	}
	if r.root != nil {
		t.Skip("this kernel refuses openat2; only the walk is in use")
	}
	if r.fd < 0 {
		t.Fatal("neither openat2 nor the walk is set up")
	}
	if s.docroot() != r {
		t.Error("the docroot was opened twice")
	}
}

// openFilesUnder lists this process's descriptors that point beneath dir.
func openFilesUnder(t *testing.T, dir string) []string {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	var open []string
	for _, e := range ents {
		target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && strings.HasPrefix(target, dir+string(filepath.Separator)) {
			open = append(open, target)
		}
	}
	return open
}

// Every response, whatever its kind, closes the files it opened. The garbage
// collector is held off: an *os.File's cleanup would otherwise close a leaked
// descriptor and hide the leak.
func TestStaticClosesEveryFile(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	eachStatic(t, func(t *testing.T, start func(*Files) string) {
		root := t.TempDir()
		tree(t, root, map[string]string{"a.css": strings.Repeat("a", 50000), "a.css.gz": "gz", "a.css.br": "br"})
		addr := start(&Files{Dir: root, Prefix: "/"})
		etag := string(fetch(t, addr, "GET", "/a.css").Header.Peek("ETag"))
		reqs := [][]string{
			{"GET"}, {"HEAD"}, {"GET", "If-None-Match", etag}, {"GET", "Range", "bytes=5-9"},
			{"GET", "Range", "bytes=99999-"}, {"GET", "If-Match", `"x"`}, {"GET", "Accept-Encoding", "gzip"},
			{"GET", "Accept-Encoding", "br, gzip"}, {"HEAD", "Accept-Encoding", "br"},
		}
		for i := 0; i < 5; i++ {
			for _, q := range reqs {
				fetch(t, addr, q[0], "/a.css", q[1:]...)
			}
		}
		// The server closes a body stream after writing it, which the client may
		// see a moment before it happens.
		deadline := time.Now().Add(10 * time.Second)
		for open := openFilesUnder(t, root); len(open) > 0; open = openFilesUnder(t, root) {
			if time.Now().After(deadline) {
				t.Fatalf("still open after the responses: %q", open)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
}

// The walk must hold the same line as openat2 on symlinks, component by
// component: a link to a directory outside, chained links, a loop.
func TestStaticResolversAgreeOnSymlinkChains(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "root")
	tree(t, dir, map[string]string{"out/x.txt": "outside", "root/in/x.txt": "inside"})
	for name, target := range map[string]string{
		"root/l1": "l2", "root/l2": "in", "root/outdir": "../out", "root/loop": "loop",
		"root/in/up": "..", "root/in/upup": "../..", "root/chain": "in/up/in/x.txt",
	} {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{
		"l1/x.txt": "inside", "chain": "inside", "in/up/in/x.txt": "inside",
		"outdir/x.txt": "", "loop": "", "in/upup/out/x.txt": "", "in/up/../out/x.txt": "",
	}
	for _, walk := range []bool{false, true} {
		s := &Files{Dir: root, walk: walk}
		for rel, content := range want {
			got := ""
			if f, _, err := s.docroot().open(rel); err == nil {
				b, _ := io.ReadAll(f)
				f.Close()
				got = string(b)
			}
			if got != content {
				t.Errorf("walk=%v %s: got %q, want %q", walk, rel, got, content)
			}
		}
	}
}

func BenchmarkStaticServe(b *testing.B) {
	root := b.TempDir()
	tree(b, root, map[string]string{"a/b/c.css": strings.Repeat("x", 4096)})
	for _, walk := range []bool{false, true} {
		b.Run("walk="+strconv.FormatBool(walk), func(b *testing.B) {
			s := &Files{Dir: root, Prefix: "/", walk: walk}
			var ctx fasthttp.RequestCtx
			for b.Loop() {
				ctx.Request.SetRequestURI("/a/b/c.css")
				if !s.Serve(&ctx) {
					b.Fatal("not served")
				}
				ctx.Response.Reset()
			}
		})
	}
}
