package voting_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	ferryBin   string // built once by TestMain
	exampleDir string
)

func TestMain(m *testing.M) {
	wd, err := os.Getwd()
	if err != nil {
		panic(err)
	}
	exampleDir = wd
	for _, bin := range []string{"tarantool", "php", "go"} {
		if _, err := exec.LookPath(bin); err != nil {
			fmt.Fprintf(os.Stderr, "examples/voting tests need %s on PATH (make deps installs it)\n", bin)
			os.Exit(1)
		}
	}
	dir, err := os.MkdirTemp("", "voting-e2e")
	if err != nil {
		panic(err)
	}
	ferryBin = filepath.Join(dir, "ferry")
	build := exec.Command("go", "build", "-o", ferryBin, "./cmd/ferry")
	build.Dir = filepath.Join(wd, "..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build ./cmd/ferry: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// ferry is `ferry serve` running examples/voting/worker.php.
type ferry struct {
	url string
	cmd *exec.Cmd
	mu  sync.Mutex
	log bytes.Buffer
}

// startFerry runs 2 workers; with fibers each runs requests concurrently (pool.fibers).
func startFerry(t testing.TB, tt *tarantool, fibers bool) *ferry {
	t.Helper()
	return startFerryWith(t, tt.uri(), 2, fibers)
}

// startFerryWith serves the app with VOTING_TARANTOOL=uri (several comma-separated URIs make
// a replica set).
func startFerryWith(t testing.TB, uri string, workers int, fibers bool) *ferry {
	t.Helper()
	dir := t.TempDir()
	// A hung Tarantool must give its 503 quickly, so the read timeout is short; but in a
	// replica set a synchronous write may wait up to replication_synchro_timeout (2 s in
	// init.lua) for its quorum, and a client that gives up before that turns a slow commit
	// (a loaded CI machine under -race) into a 503.
	readTimeout := "1"
	if strings.Contains(uri, ",") {
		readTimeout = "3"
	}
	// Port 0: ferry picks a free port and names it in its first line, so no
	// other process can take it between a probe and the listen.
	cfg := fmt.Sprintf(`server:
  address: 127.0.0.1:0
  static: {dir: %q}
pool:
  command: [php, %q]
  num_workers: %d
  fibers: %t
  env:
    VOTING_TARANTOOL: %q
    VOTING_CONNECT_TIMEOUT: "0.5"
    VOTING_READ_TIMEOUT: %q
admin: {socket: %q}
log: {level: warn}
`, filepath.Join(exampleDir, "public"), filepath.Join(exampleDir, "worker.php"), workers, fibers, uri, readTimeout, filepath.Join(dir, "admin.sock"))
	cfgPath := filepath.Join(dir, "ferry.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	f := &ferry{cmd: exec.Command(ferryBin, "serve", "-c", cfgPath)}
	f.cmd.Dir = dir
	stderr, _ := f.cmd.StderrPipe()
	if err := f.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := sync.Once{}
		for sc.Scan() {
			f.mu.Lock()
			f.log.WriteString(sc.Text() + "\n")
			f.mu.Unlock()
			if rest, ok := strings.CutPrefix(sc.Text(), "Ferry is serving on "); ok {
				once.Do(func() {
					f.url, _, _ = strings.Cut(rest, " ")
					close(ready)
				})
			}
		}
	}()
	done := make(chan struct{})
	go func() { f.cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		f.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			f.cmd.Process.Kill()
			t.Errorf("ferry did not stop within 15 s of SIGTERM")
		}
		if t.Failed() {
			f.mu.Lock()
			t.Logf("ferry log:\n%s", tail(f.log.String(), 4000))
			f.mu.Unlock()
		}
	})
	select {
	case <-ready:
	case <-done:
		t.Fatalf("ferry exited during start:\n%s", f.log.String())
	case <-time.After(20 * time.Second):
		t.Fatalf("ferry did not start within 20 s")
	}
	return f
}

var httpClient = &http.Client{
	Timeout:   10 * time.Second,
	Transport: &http.Transport{MaxIdleConnsPerHost: 32},
	// Redirects are part of what is tested.
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

type reply struct {
	status int
	header http.Header
	body   string
	took   time.Duration
}

// voter returns the voter cookie the reply set, "" if none.
func (r reply) voter() string {
	for _, c := range (&http.Response{Header: r.header}).Cookies() {
		if c.Name == "voter" {
			return c.Value
		}
	}
	return ""
}

func do(t testing.TB, method, target, cookie string, form url.Values, wantJSON bool) reply {
	t.Helper()
	r, err := request(method, target, cookie, form, wantJSON)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func request(method, target, cookie string, form url.Values, wantJSON bool) (reply, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("User-Agent", "voting-e2e/1.0")
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if wantJSON {
		req.Header.Set("Accept", "application/json")
	}
	if cookie != "" {
		req.Header.Set("Cookie", "voter="+cookie)
	}
	start := time.Now()
	resp, err := httpClient.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, err
	}
	return reply{resp.StatusCode, resp.Header, string(b), time.Since(start)}, nil
}

// newVoter opens the home page without a cookie and returns the session it was given.
func newVoter(t testing.TB, f *ferry) string {
	t.Helper()
	r := do(t, "GET", f.url+"/", "", nil, false)
	if r.status != 200 || r.voter() == "" {
		t.Fatalf("GET / without a cookie: status %d, voter cookie %q; body: %s", r.status, r.voter(), tail(r.body, 500))
	}
	return r.voter()
}

type voteReply struct {
	OK      bool   `json:"ok"`
	Outcome string `json:"outcome"`
	Vote    int    `json:"vote"`
}

func vote(t testing.TB, f *ferry, cookie string, winner, loser int) (int, voteReply) {
	t.Helper()
	r := do(t, "POST", f.url+"/vote", cookie, url.Values{"winner": {strconv.Itoa(winner)}, "loser": {strconv.Itoa(loser)}}, true)
	var v voteReply
	if err := json.Unmarshal([]byte(r.body), &v); err != nil {
		t.Fatalf("POST /vote: status %d, body not JSON: %q", r.status, tail(r.body, 300))
	}
	return r.status, v
}

var stickerRe = regexp.MustCompile(`<li data-id="(\d+)" data-rating="(-?\d+)">`)

// shown lists the stickers of a page in display order.
func shown(t testing.TB, body string) []rated {
	t.Helper()
	var out []rated
	for _, m := range stickerRe.FindAllStringSubmatch(body, -1) {
		id, _ := strconv.Atoi(m[1])
		rating, _ := strconv.Atoi(m[2])
		out = append(out, rated{id, rating})
	}
	return out
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
