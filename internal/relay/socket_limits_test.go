package relay

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

func listenTest(t *testing.T, kind string, hello time.Duration) *sockets {
	t.Helper()
	s, err := listen(kind, t.TempDir(), testMaxFrame, hello)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// waitEOF reports whether the server hung up on nc within d.
func waitEOF(nc net.Conn, d time.Duration) error {
	nc.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, nc)
	return err
}

func TestSilentConnectionTimesOut(t *testing.T) {
	s := listenTest(t, "unix", 100*time.Millisecond)
	nc, err := rogue(s.addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := waitEOF(nc, 10*time.Second); err != nil {
		t.Fatalf("a connection that never answered the hello is still open: %v", err)
	}
}

// TestPendingConnectionsAreBounded: beyond maxPending connections in their
// handshake, new ones are closed before the server writes anything, and Close
// hangs up on the ones still waiting.
func TestPendingConnectionsAreBounded(t *testing.T) {
	s := listenTest(t, "tcp", time.Minute)
	var held []net.Conn
	defer func() {
		for _, nc := range held {
			nc.Close()
		}
	}()
	for range maxPending {
		nc, err := rogue(s.addr, nil) // returns once the hello arrived
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, nc)
	}
	nc, err := net.Dial("tcp", strings.TrimPrefix(s.addr, "tcp://"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := closedAtOnce(nc); err != nil {
		t.Fatalf("connection %d: %v", maxPending+1, err)
	}
	s.Close()
	for i, nc := range held {
		if err := waitEOF(nc, 10*time.Second); err != nil {
			t.Fatalf("pending connection %d after Close: %v", i, err)
		}
	}
}

// TestTokenIsSingleUse: once a worker is delivered, its token opens nothing.
func TestTokenIsSingleUse(t *testing.T) {
	s := listenTest(t, "tcp", time.Minute)
	cmd, p := testWorkerCmd(t, modeEcho)
	c, err := s.Start(bootCtx(t), cmd, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.wait()
	defer c.Close()
	tok := envValue(cmd.Env, "FERRY_RELAY_TOKEN")
	nc, err := rogue(s.addr, claim(map[string]any{"pid": cmd.Process.Pid, "token": tok}))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if err := closedAtOnce(nc); err != nil {
		t.Fatalf("a second connection with a used token: %v", err)
	}
	echo(t, c, 1, []byte("hi"))
}

// TestLateWorkerIsRefused: a worker that connects after Start gave up on it
// is hung up on, not kept for anyone.
func TestLateWorkerIsRefused(t *testing.T) {
	s := listenTest(t, "unix", time.Minute)
	cmd, p := testWorkerCmd(t, modeGated)
	gateR, gateW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer gateR.Close()
	defer gateW.Close()
	cmd.ExtraFiles = []*os.File{gateR}
	ctx, cancel := context.WithCancelCause(context.Background())
	_, err = s.Start(ctx, cmd, func() { cancel(errors.New("test gave up")) })
	var be *BootError
	if !errors.As(err, &be) || !strings.Contains(be.Reason, "test gave up") {
		t.Fatalf("Start = %v, want a BootError quoting the cause", err)
	}
	gateW.Write([]byte{1})
	// The worker gets the hello, answers and then reads EOF: it exits 0.
	if err := p.wait(); err != nil {
		t.Fatalf("late worker: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.want) != 0 || len(s.pending) != 0 {
		t.Fatalf("after the late worker: %d waiting, %d pending", len(s.want), len(s.pending))
	}
}

func TestStartAfterClose(t *testing.T) {
	s := listenTest(t, "tcp", time.Minute)
	s.Close()
	cmd, _ := testWorkerCmd(t, modeEcho)
	if _, err := s.Start(bootCtx(t), cmd, nil); err == nil || cmd.Process != nil {
		t.Fatalf("Start after Close: %v (process started: %v)", err, cmd.Process != nil)
	}
}
