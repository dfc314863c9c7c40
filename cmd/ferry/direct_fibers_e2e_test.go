package main

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// server.mode: direct with pool.fibers: the requests of all of a worker's connections
// run as Fibers on its loop (docs/direct.md). One worker serves testdata/direct_fibers.php,
// whose requests wait on the loop for what other requests do, so that every test below
// hangs (and fails on its deadline) unless two requests really run at once.

func directFibersConfig(t *testing.T) string {
	return fmt.Sprintf(`server:
  address: "%%ADDR%%"
  mode: direct
admin:
  socket: "%%ADMIN%%"
log:
  level: info
pool:
  command: ["php", "%%DIR%%/testdata/direct_fibers.php"]
  num_workers: 1
  fibers: true
  max_concurrency: 8
  php:
    extension: %q
`, extensionSO(t))
}

// fiberConn is one client connection that sends requests and reads their answers.
type fiberConn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dialFiber(t *testing.T, s *server) *fiberConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", strings.TrimPrefix(s.url, "http://"), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	return &fiberConn{t: t, c: c, r: bufio.NewReader(c)}
}

func (f *fiberConn) send(targets ...string) {
	f.t.Helper()
	var b strings.Builder
	for _, target := range targets {
		fmt.Fprintf(&b, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", target)
	}
	if _, err := io.WriteString(f.c, b.String()); err != nil {
		f.t.Fatal(err)
	}
}

// answer reads the next answer whole.
func (f *fiberConn) answer() (int, string) {
	f.t.Helper()
	resp, err := http.ReadResponse(f.r, nil)
	if err != nil {
		f.t.Fatalf("reading an answer: %v", err)
	}
	b, err := readAllErr(resp)
	if err != nil {
		f.t.Fatalf("reading an answer's body: %v", err)
	}
	return resp.StatusCode, string(b)
}

func (f *fiberConn) expect(want string) {
	f.t.Helper()
	status, body := f.answer()
	if status != 200 || body != want {
		f.t.Fatalf("answered %d %q, want 200 %q", status, body, want)
	}
}

// Two requests on two connections of one worker, each answering only once the other has
// started: both answer only if both run at once.
func TestDirectFibersRunRequestsAtOnce(t *testing.T) {
	s := startFerry(t, directFibersConfig(t))
	a, b := dialFiber(t, s), dialFiber(t, s)
	a.send("/meet?me=A&peer=B")
	if !waitLog(s, "meet: A started") {
		t.Fatalf("A did not start:\n%s", s.logText())
	}
	b.send("/meet?me=B&peer=A")
	b.expect("B met A")
	a.expect("A met B")
	// And the worker goes on serving both connections (keep-alive).
	a.send("/pid")
	b.send("/pid")
	_, pa := a.answer()
	_, pb := b.answer()
	if pa != pb || !strings.HasPrefix(pa, "pid ") {
		t.Fatalf("one worker should answer both: %q, %q", pa, pb)
	}
}

// Pipelined requests on one connection are answered in order while another connection's
// request waits, and that one answers once released.
func TestDirectFibersPipelineWhileAnotherWaits(t *testing.T) {
	s := startFerry(t, directFibersConfig(t))
	held, other := dialFiber(t, s), dialFiber(t, s)
	held.send("/hold?name=p")
	if !waitLog(s, "holding p") {
		t.Fatalf("/hold did not start:\n%s", s.logText())
	}
	other.send("/x?n=1", "/meet?me=M&peer=M", "/x?n=3", "/release?name=p", "/x?n=5")
	for _, want := range []string{"/x 1", "M met M", "/x 3", "released p", "/x 5"} {
		_, body := other.answer()
		if !strings.HasSuffix(body, want) {
			t.Fatalf("pipelined answer %q, want one ending %q", body, want)
		}
	}
	held.expect("p released")
}

// A client that leaves while its request waits costs only that request: the worker
// finishes it, drops its answer, and serves on.
func TestDirectFibersClientLeavesWhileWaiting(t *testing.T) {
	s := startFerry(t, directFibersConfig(t))
	gone := dialFiber(t, s)
	gone.send("/pid")
	_, before := gone.answer()
	gone.send("/hold?name=g")
	if !waitLog(s, "holding g") {
		t.Fatalf("/hold did not start:\n%s", s.logText())
	}
	gone.c.Close()
	other := dialFiber(t, s)
	other.send("/release?name=g")
	other.expect("released g")
	if !waitLog(s, "held g: released") {
		t.Fatalf("the held request did not end:\n%s", s.logText())
	}
	other.send("/pid")
	other.expect(before)
}

// A streamed answer goes out part by part while other requests run, and one whose client
// left stops.
func TestDirectFibersStreamedAnswer(t *testing.T) {
	s := startFerry(t, directFibersConfig(t))
	c := dialFiber(t, s)
	c.send("/stream?name=s")
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		t.Fatal(err)
	}
	if te := resp.TransferEncoding; len(te) != 1 || te[0] != "chunked" {
		t.Fatalf("Transfer-Encoding %v, want chunked", te)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != "first part\n" {
		t.Fatalf("first part: %q, %v", line, err)
	}
	other := dialFiber(t, s)
	other.send("/release?name=s")
	other.expect("released s")
	rest, err := io.ReadAll(resp.Body)
	if err != nil || string(rest) != "second part\n" {
		t.Fatalf("rest of the stream: %q, %v", rest, err)
	}
	c.send("/pid")
	c.expect(other.pidOf(t))
}

func (f *fiberConn) pidOf(t *testing.T) string {
	t.Helper()
	f.send("/pid")
	_, body := f.answer()
	return body
}

// SIGTERM while a request waits on the loop: the worker finishes it before it exits.
func TestDirectFibersSIGTERMFinishesWaitingRequests(t *testing.T) {
	s := startFerry(t, directFibersConfig(t))
	c := dialFiber(t, s)
	c.send("/sleep?name=z&ms=1500")
	if !waitLog(s, "sleeping z") {
		t.Fatalf("/sleep did not start:\n%s", s.logText())
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(c.r, nil)
	if err != nil {
		t.Fatalf("the waiting request was not answered: %v\n%s", err, s.logText())
	}
	b, _ := readAllErr(resp)
	if resp.StatusCode != 200 || string(b) != "z slept" || !resp.Close {
		t.Fatalf("answered %d %q (close %v), want 200 \"z slept\" closing the connection", resp.StatusCode, b, resp.Close)
	}
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		t.Fatalf("ferry did not exit after SIGTERM:\n%s", s.logText())
	}
	if strings.Contains(s.logText(), "ignored stop") {
		t.Fatalf("the worker had to be killed:\n%s", s.logText())
	}
}

// exit() in one request ends the worker: that request and the one waiting beside it are
// answered 502, as front mode's server answers them, and a new worker serves on.
func TestDirectFibersExitAnswers502(t *testing.T) {
	s := startFerry(t, directFibersConfig(t))
	waiting := dialFiber(t, s)
	waiting.send("/hold?name=x")
	if !waitLog(s, "holding x") {
		t.Fatalf("/hold did not start:\n%s", s.logText())
	}
	exiting := dialFiber(t, s)
	exiting.send("/exit")
	for name, c := range map[string]*fiberConn{"/exit": exiting, "/hold": waiting} {
		if status, body := c.answer(); status != 502 {
			t.Fatalf("%s answered %d %q, want 502", name, status, body)
		}
	}
	if !waitLog(s, "worker ready") {
		t.Fatalf("no worker replaced it:\n%s", s.logText())
	}
	resp, body := get(t, s.url+"/pid")
	expectStatus(t, resp, body, 200)
}

// pool.max_jobs counts the requests a worker served: it asks to be retired, and its
// successor serves on without a failed request.
func TestDirectFibersMaxJobs(t *testing.T) {
	s := startFerry(t, strings.Replace(directFibersConfig(t), "  max_concurrency: 8\n", "  max_concurrency: 8\n  max_jobs: 3\n", 1))
	pids := map[string]bool{}
	for i := 0; i < 7; i++ {
		resp, body := get(t, s.url+"/pid")
		expectStatus(t, resp, body, 200)
		pids[body] = true
	}
	// A retiring worker still answers what its keep-alive connection sends in its grace.
	if len(pids) < 2 || !waitLog(s, "served pool.max_jobs requests") {
		t.Fatalf("7 requests at max_jobs 3 met %d workers, want 2 or more: %v\n%s", len(pids), pids, s.logText())
	}
}

var errGatewayTimeout = errors.New("504")

// exec_ttl times the oldest request in flight: shorter ones that start and end beside it
// do not hide it, and the worker running it past exec_ttl ends, its client answered the
// front's 504 (it saw its connection close).
func TestDirectFibersExecTTLTimesTheOldestRequest(t *testing.T) {
	s := startFerry(t, strings.Replace(directFibersConfig(t), "  max_concurrency: 8\n", "  max_concurrency: 8\n  exec_ttl: 1s\n", 1))
	held := dialFiber(t, s)
	held.send("/hold?name=never")
	if !waitLog(s, "holding never") {
		t.Fatalf("/hold did not start:\n%s", s.logText())
	}
	ended := make(chan error, 1)
	go func() {
		resp, err := http.ReadResponse(held.r, nil)
		if err == nil && resp.StatusCode != http.StatusGatewayTimeout {
			err = fmt.Errorf("status %d, want the front's 504", resp.StatusCode)
		} else if err == nil {
			err = errGatewayTimeout
		}
		ended <- err
	}()
	for i := 0; ; i++ {
		select {
		case err := <-ended:
			if err != errGatewayTimeout {
				t.Fatalf("the request past exec_ttl: %v", err)
			}
			if !waitLog(s, "request exceeded exec_ttl") {
				t.Fatalf("the connection closed, but not for exec_ttl:\n%s", s.logText())
			}
			return
		default:
		}
		if i == 40 {
			t.Fatalf("the request held past exec_ttl (1s) was not ended:\n%s", s.logText())
		}
		// Requests that start and end while it is held (they fail too once the worker is killed).
		if resp, err := client.Get(s.url + "/sleep?name=beside&ms=100"); err == nil {
			readAllErr(resp)
		}
	}
}

// The front's TLS listener sends its requests over the relay to the same worker, whose
// Fibers run them beside its own connections' requests, each answer to its own side.
func TestDirectFibersServeTheRelayBeside(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	roots := writeCert(t, certFile, keyFile, "first")
	s := startFerry(t, strings.Replace(directFibersConfig(t), "  mode: direct\n",
		"  mode: direct\n  tls:\n    address: \"127.0.0.1:0\"\n    cert: \""+certFile+"\"\n    key: \""+keyFile+"\"\n", 1))
	m := httpsLine.FindStringSubmatch(s.logText())
	if m == nil {
		t.Fatalf("no HTTPS line in the log:\n%s", s.logText())
	}
	held := dialFiber(t, s)
	held.send("/hold?name=r")
	if !waitLog(s, "holding r") {
		t.Fatalf("/hold did not start:\n%s", s.logText())
	}
	c := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: true}}
	resp, err := c.Get(m[1] + "/release?name=r")
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(t, resp); resp.StatusCode != 200 || body != "released r" {
		t.Fatalf("over TLS: %s %q", resp.Status, body)
	}
	held.expect("r released")
}

// An upload is removed once its request is answered, as in front mode: before the client
// has the answer, not once the request's terminate hooks are done (here they wait until
// the test, having checked, releases them).
func TestDirectFibersUploadsGoOnceAnswered(t *testing.T) {
	s := startFerry(t, directFibersConfig(t))
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("doc", "notes.txt")
	fw.Write([]byte("file content"))
	mw.Close()
	resp, err := client.Post(s.url+"/upload?name=u", mw.FormDataContentType(), &buf)
	if err != nil {
		t.Fatal(err)
	}
	tmp := readAll(t, resp)
	if resp.StatusCode != 200 || !strings.Contains(tmp, "ferry-upload-") {
		t.Fatalf("upload: %d %q", resp.StatusCode, tmp)
	}
	_, statErr := os.Stat(tmp)
	other := dialFiber(t, s)
	other.send("/release?name=u")
	other.expect("released u")
	if !os.IsNotExist(statErr) {
		t.Fatalf("the upload %s was still there once its request was answered (%v)", tmp, statErr)
	}
}

// pool.max_concurrency bounds the requests in flight: past it, a connection's request
// waits unread until one ends.
func TestDirectFibersMaxConcurrency(t *testing.T) {
	s := startFerry(t, strings.Replace(directFibersConfig(t), "max_concurrency: 8", "max_concurrency: 2", 1))
	a, b, c := dialFiber(t, s), dialFiber(t, s), dialFiber(t, s)
	a.send("/sleep?name=a&ms=800")
	b.send("/sleep?name=b&ms=800")
	if !waitLog(s, "sleeping a") || !waitLog(s, "sleeping b") {
		t.Fatalf("/sleep did not start:\n%s", s.logText())
	}
	c.send("/sleep?name=c&ms=1")
	c.expect("c slept")
	a.expect("a slept")
	b.expect("b slept")
	// The worker's output reaches the log on its own way, maybe after the answers.
	if !waitLog(s, "sleeping c") || !waitLog(s, "slept a") || !waitLog(s, "slept b") {
		t.Fatalf("the workers' lines did not reach the log:\n%s", s.logText())
	}
	log := s.logText()
	started := strings.Index(log, "sleeping c")
	if first := min(strings.Index(log, "slept a"), strings.Index(log, "slept b")); first < 0 || started < first {
		t.Fatalf("the third request started before either of the two running ended:\n%s", log)
	}
}
