package relay

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ferry-php/ferry/internal/frame"
)

// rogue dials the relay like a worker would and sends answer (a handshake
// answer or any bytes) once it has the server's hello.
func rogue(addr string, answer []byte) (net.Conn, error) {
	network, a, _ := strings.Cut(addr, "://")
	nc, err := net.Dial(network, a)
	if err != nil {
		return nil, err
	}
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := frame.NewReader(nc, 4096).Read(); err != nil {
		return nc, err
	}
	_, err = nc.Write(answer)
	return nc, err
}

func claim(v any) []byte {
	msg, _ := json.Marshal(v)
	return frame.Append(nil, frame.Control|frame.JSON, 0, nil, msg)
}

// closedAtOnce reports why nc was not closed by the server without being sent
// anything, within a bound shorter than the handshake timeout.
func closedAtOnce(nc net.Conn) error {
	nc.SetReadDeadline(time.Now().Add(3 * time.Second))
	buf := make([]byte, 64)
	n, err := nc.Read(buf)
	switch {
	case n > 0:
		return fmt.Errorf("it was sent %q", buf[:n])
	case errors.Is(err, os.ErrDeadlineExceeded):
		return errors.New("it is still open")
	}
	return nil
}

// TestTCPRoguesAreNotDelivered: local processes that dial the relay first and
// claim the starting worker's pid, or bring a wrong token, are hung up on and
// never receive a request; the worker holding the token is the one delivered.
func TestTCPRoguesAreNotDelivered(t *testing.T) {
	f := newFactory(t, "tcp", "")
	cmd, p := testWorkerCmd(t, modeGated)
	gateR, gateW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer gateR.Close()
	defer gateW.Close()
	cmd.ExtraFiles = []*os.File{gateR}
	var problems []string
	c, err := f.Start(bootCtx(t), cmd, func() {
		addr := envValue(cmd.Env, "FERRY_RELAY")
		pid := cmd.Process.Pid
		for _, r := range []struct {
			name   string
			answer []byte
		}{
			{"a rogue claiming the worker's pid", claim(map[string]any{"pid": pid})},
			{"a rogue with the worker's pid and a wrong token", claim(map[string]any{"pid": pid, "token": strings.Repeat("0f", 16)})},
			{"a rogue with an empty token", claim(map[string]any{"pid": pid, "token": ""})},
			{"a rogue speaking HTTP", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n")},
		} {
			nc, err := rogue(addr, r.answer)
			if err == nil {
				err = closedAtOnce(nc)
			}
			if nc != nil {
				nc.Close()
			}
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", r.name, err))
			}
		}
		gateW.Write([]byte{1}) // now let the real worker dial
	})
	if len(problems) > 0 {
		if c != nil {
			c.Close()
		}
		t.Fatalf("rogue connections were not closed at once:\n%s", strings.Join(problems, "\n"))
	}
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	if c.PID != cmd.Process.Pid {
		t.Errorf("Conn.PID = %d, worker pid %d", c.PID, cmd.Process.Pid)
	}
	echo(t, c, 1, []byte("Cookie: secret"))
	c.Close()
	if err := p.wait(); err != nil {
		t.Errorf("worker exit: %v", err)
	}
}

func countFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// TestRogueFloodHoldsNoFDs: thousands of false claims must not leave sockets
// behind in the server, and the relay still serves a real worker afterwards.
func TestRogueFloodHoldsNoFDs(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("needs /proc/self/fd")
	}
	f := newFactory(t, "tcp", "")
	cmd, p := testWorkerCmd(t, modeGated)
	addr := ""
	// The relay's address is known once a worker has been started; that
	// worker is kept waiting until the flood is over.
	gateR, gateW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer gateR.Close()
	defer gateW.Close()
	cmd.ExtraFiles = []*os.File{gateR}
	var before, after int
	c, err := f.Start(bootCtx(t), cmd, func() {
		defer gateW.Write([]byte{1})
		addr = envValue(cmd.Env, "FERRY_RELAY")
		// Warm up whatever the runtime opens lazily for networking, and
		// wait until the server has hung up on that first connection.
		if nc, err := rogue(addr, []byte("warm-up\n")); err == nil {
			io.Copy(io.Discard, nc)
			nc.Close()
		}
		before = countFDs(t)
		const rogues, dialers = 5000, 16
		var wg sync.WaitGroup
		for d := range dialers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := d; i < rogues; i += dialers {
					var answer []byte
					switch i % 4 {
					case 0:
						answer = claim(map[string]any{"pid": 1_000_000 + i})
					case 1:
						answer = claim(map[string]any{"pid": 1_000_000 + i, "token": fmt.Sprintf("%032x", i)})
					case 2:
						answer = []byte("not a frame at all, but long enough\n")
					}
					nc, _ := rogue(addr, answer)
					if nc != nil {
						nc.Close()
					}
				}
			}()
		}
		wg.Wait()
		deadline := time.Now().Add(20 * time.Second)
		for after = countFDs(t); after > before && time.Now().Before(deadline); after = countFDs(t) {
			time.Sleep(10 * time.Millisecond)
		}
	})
	if after > before {
		t.Errorf("after 5000 rogue connections the process holds %d fds, %d before", after, before)
	}
	if err != nil {
		t.Fatalf("start after the flood: %v", err)
	}
	echo(t, c, 1, []byte("still served"))
	c.Close()
	p.wait()
}
