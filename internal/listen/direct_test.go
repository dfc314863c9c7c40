package listen

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fdFlags reads the file status flags of fd 3 as a child process sees them.
func childFlags(t *testing.T, f *os.File) int {
	t.Helper()
	cmd := exec.Command("sh", "-c", "cat /proc/self/fdinfo/3")
	cmd.ExtraFiles = []*os.File{f}
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "flags:"); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 8, 64)
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
	}
	t.Fatalf("no flags in fdinfo: %s", out)
	return 0
}

// Workers wait for the shared socket with epoll and several wake for one
// connection: the losers must get EAGAIN, never block in accept. Starting a
// worker must not take O_NONBLOCK away from the socket they share, which
// os/exec does to a descriptor Go knows as non-blocking (File.Fd), as
// net.TCPListener.File would give.
func TestDirectListenerStaysNonBlockingAcrossWorkerStarts(t *testing.T) {
	d, err := Direct("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(context.Background(), nil)
	for i := range 3 {
		if fl := childFlags(t, d.File()); fl&unix.O_NONBLOCK == 0 {
			t.Fatalf("start %d: the worker got the socket blocking (flags %o)", i, fl)
		}
	}
	fl, err := unix.FcntlInt(d.File().Fd(), unix.F_GETFL, 0)
	if err != nil || fl&unix.O_NONBLOCK == 0 {
		t.Fatalf("the server's socket is blocking after starting workers (flags %o, %v)", fl, err)
	}
	// One queue for everyone: SO_REUSEPORT would give each socket its own.
	if v, err := unix.GetsockoptInt(int(d.File().Fd()), unix.SOL_SOCKET, unix.SO_REUSEPORT); err != nil || v != 0 {
		t.Fatalf("SO_REUSEPORT = %d (%v), want 0", v, err)
	}
	if v, err := unix.GetsockoptInt(int(d.File().Fd()), unix.SOL_SOCKET, unix.SO_ACCEPTCONN); err != nil || v != 1 {
		t.Fatalf("SO_ACCEPTCONN = %d (%v): not listening", v, err)
	}
}

// The server holds the socket while no worker accepts: connections wait in
// its queue, and at shutdown the ones no worker took get a 503, not a reset.
func TestDirectListenerAnswersWhatIsLeftInTheQueue(t *testing.T) {
	d, err := Direct("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	const n = 5
	conns := make([]net.Conn, n)
	for i := range conns {
		c, err := net.Dial("tcp", d.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	if got := d.Close(context.Background(), nil); got != n {
		t.Fatalf("answered %d connections, want %d", got, n)
	}
	for i, c := range conns {
		c.SetDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		resp.Body.Close()
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("connection %d: %s, want 503 with Retry-After", i, resp.Status)
		}
	}
	if _, err := net.DialTimeout("tcp", d.Addr().String(), time.Second); err == nil {
		t.Fatal("the socket still accepts connections after Close")
	}
}
