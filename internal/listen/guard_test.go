package listen

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func panicking(ctx *fasthttp.RequestCtx) {
	if string(ctx.Path()) == "/boom" {
		panic("injected")
	}
	ctx.WriteString("ok")
}

// A panic while serving one request is logged with its stack, counted, and
// closes that connection; the process and the other connections go on.
func TestPanicInAHandlerEndsOnlyItsConnection(t *testing.T) {
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: Recover(panicking, log)}
	go srv.Serve(Listen(ln, Options{Front: NewConn}))
	defer srv.Shutdown()
	before := Panics()
	got := roundTrip(t, ln.Addr().String(), "GET /boom HTTP/1.1\r\nHost: a\r\n\r\n")
	if !strings.HasPrefix(got, "HTTP/1.1 500") || !strings.Contains(got, "Connection: close") {
		t.Fatalf("a panicking handler over HTTP/1.1: %q, want a 500 that closes the connection", got)
	}
	if Panics() != before+1 || !strings.Contains(logs.String(), "injected") || !strings.Contains(logs.String(), "guard_test.go") {
		t.Fatalf("panics %d (was %d); log: %s", Panics(), before, logs.String())
	}
	if got := roundTrip(t, ln.Addr().String(), "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"); !strings.HasSuffix(got, "ok") {
		t.Fatalf("after a panic: %q", got)
	}

	// net/http's stacks: the stream is reset, the panic counted once.
	std := StdServer(panicking, Limits{}, 0, false, log)
	hln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go std.Serve(hln)
	defer std.Close()
	tr := &http.Transport{Protocols: new(http.Protocols)}
	tr.Protocols.SetUnencryptedHTTP2(true)
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	before = Panics()
	if resp, err := c.Get("http://" + hln.Addr().String() + "/boom"); err == nil {
		resp.Body.Close()
		t.Fatalf("a panicking handler over HTTP/2 answered %d", resp.StatusCode)
	}
	if Panics() != before+1 {
		t.Fatalf("HTTP/2 panic counted %d times", Panics()-before)
	}
	resp, err := c.Get("http://" + hln.Addr().String() + "/")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("HTTP/2 after a panic: %v %v", resp, err)
	}
	resp.Body.Close()
}

// Out of descriptors, accept fails with EMFILE: the listener waits it out,
// with a log line per burst, instead of ending Serve. Run in a child process
// whose descriptor limit is lowered.
func TestAcceptWaitsOutDescriptorExhaustion(t *testing.T) {
	if os.Getenv("FERRY_TEST_EMFILE") == "1" {
		emfileChild()
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestAcceptWaitsOutDescriptorExhaustion$")
	cmd.Env = append(os.Environ(), "FERRY_TEST_EMFILE=1")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	exited := make(chan struct{})
	addrLine, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("child: %v; %s", err, stderr.String())
	}
	go func() { cmd.Wait(); close(exited) }()
	addr := strings.TrimSpace(addrLine)
	var conns []net.Conn
	for range 100 { // the child can hold about 60
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(stderr.String(), "cannot accept connections") {
		if time.Now().After(deadline) {
			t.Fatalf("no EMFILE reached: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, c := range conns {
		c.Close()
	}
	// Once descriptors free up, the listener accepts again.
	for {
		resp := roundTrip(t, addr, "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
		if strings.HasSuffix(resp, "ok") {
			break
		}
		select {
		case <-exited:
			t.Fatalf("the server ended: %s", stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("not accepting again: %q; %s", resp, stderr.String())
		}
	}
	if n := strings.Count(stderr.String(), "cannot accept connections"); n > 5 {
		t.Errorf("%d log lines for one exhaustion, want one per burst:\n%s", n, stderr.String())
	}
}

func emfileChild() {
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: 64, Max: 64}); err != nil {
		panic(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Println(ln.Addr())
	srv := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) { ctx.WriteString("ok") }, ReadTimeout: 300 * time.Millisecond}
	err = srv.Serve(Listen(ln, Options{Front: NewConn, Log: slog.New(slog.NewTextHandler(os.Stderr, nil))}))
	fmt.Fprintln(os.Stderr, "Serve returned:", err)
	os.Exit(1)
}

// roundTrip sends raw bytes and reads until the server closes or 5 s pass;
// it returns everything the server sent.
func roundTrip(t *testing.T, addr, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(c)
	return string(b)
}
