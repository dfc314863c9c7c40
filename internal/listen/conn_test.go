package listen

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// pair returns a wrapped server-side conn and the raw client side.
func pair(t *testing.T) (*Conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cl, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Listen(ln, Options{Front: NewConn}).Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close(); sc.(*Conn).TCPConn.Close() })
	return sc.(*Conn), cl
}

// readTimeout blocks in Read until it fails and reports after how long.
func readTimeout(t *testing.T, c *Conn) time.Duration {
	t.Helper()
	start := time.Now()
	_, err := c.Read(make([]byte, 10))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("want a deadline error, got %v", err)
	}
	return time.Since(start)
}

func TestLaterDeadlineIsHonouredNotEarlierOne(t *testing.T) {
	c, _ := pair(t)
	now := time.Now()
	c.SetReadDeadline(now.Add(100 * time.Millisecond))
	c.SetReadDeadline(now.Add(500 * time.Millisecond)) // recorded, not armed
	if d := readTimeout(t, c); d < 450*time.Millisecond || d > 3*time.Second {
		t.Fatalf("read timed out after %v, want about 500ms", d)
	}
}

func TestEarlierDeadlineIsArmedAtOnce(t *testing.T) {
	c, _ := pair(t)
	now := time.Now()
	c.SetReadDeadline(now.Add(5 * time.Second))
	c.SetReadDeadline(now.Add(100 * time.Millisecond))
	if d := readTimeout(t, c); d > 2*time.Second {
		t.Fatalf("read timed out after %v, want about 100ms", d)
	}
}

func TestClearedDeadlineNeverFires(t *testing.T) {
	c, cl := pair(t)
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	c.SetReadDeadline(time.Time{})
	go func() { time.Sleep(300 * time.Millisecond); cl.Write([]byte("late")) }()
	buf := make([]byte, 10)
	n, err := c.Read(buf)
	if err != nil || string(buf[:n]) != "late" {
		t.Fatalf("read %q, %v; want the late bytes", buf[:n], err)
	}
}

func TestWriteDeadlineMovedLater(t *testing.T) {
	c, _ := pair(t) // the client never reads, so a big write blocks
	now := time.Now()
	c.SetWriteDeadline(now.Add(100 * time.Millisecond))
	c.SetWriteDeadline(now.Add(500 * time.Millisecond))
	_, err := c.Write(make([]byte, 64<<20))
	d := time.Since(now)
	if !errors.Is(err, os.ErrDeadlineExceeded) || d < 450*time.Millisecond {
		t.Fatalf("write ended after %v with %v, want a deadline error after about 500ms", d, err)
	}
}

func TestMovingLaterArmsNoTimer(t *testing.T) {
	c, _ := pair(t)
	now := time.Now()
	c.SetReadDeadline(now.Add(time.Minute))
	for i := 1; i <= 100; i++ {
		c.SetReadDeadline(now.Add(time.Minute + time.Duration(i)*time.Millisecond))
	}
	if got, want := c.readSet.Load(), now.Add(time.Minute).UnixNano(); got != want {
		t.Fatalf("armed deadline moved to %d, want it left at %d", got, want)
	}
}

// A static file leaves through ReadFrom (sendfile), which must honour a
// deadline moved later as Write does: before, the earlier armed deadline of a
// previous response on the connection cut the file short.
func TestSendfileHonoursTheDeadlineMovedLater(t *testing.T) {
	c, _ := pair(t) // the client never reads, so the file blocks
	f, err := os.Create(t.TempDir() + "/big")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(64 << 20); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	c.SetWriteDeadline(now.Add(100 * time.Millisecond))
	c.SetWriteDeadline(now.Add(500 * time.Millisecond))
	_, err = c.ReadFrom(&io.LimitedReader{R: f, N: 64 << 20})
	d := time.Since(now)
	if !errors.Is(err, os.ErrDeadlineExceeded) || d < 450*time.Millisecond {
		t.Fatalf("sendfile ended after %v with %v, want a deadline error after about 500ms", d, err)
	}
}
