package relay

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/ferry-php/ferry/internal/frame"
)

// The test binary doubles as the worker: re-executed with workerModeEnv set, it
// speaks the relay protocol as docs/protocol.md describes it, without the PHP
// SDK, so these tests pin the server's side of the contract on their own.
const workerModeEnv = "RELAY_TEST_WORKER"

// Worker modes.
const (
	modeEcho     = "echo"     // answer the handshake, then echo every frame
	modeNoisy    = "noisy"    // echo, and print to stdout and stderr all along
	modeBadToken = "badtoken" // answer with a token of its own
	modeNoToken  = "notoken"  // answer with the pid alone
	modeGated    = "gated"    // wait for a byte on fd 3 before dialling
	modeEager    = "eager"    // send a frame right behind the handshake answer
)

const (
	noiseOut = "stdout garbage \x01\x02 not a frame\n"
	noiseErr = "stderr garbage\n"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(workerModeEnv); mode != "" {
		if err := runTestWorker(mode); err != nil {
			fmt.Fprintln(os.Stderr, "test worker:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testRelayEnds opens the transport FERRY_RELAY names.
func testRelayEnds(mode string) (io.Reader, io.Writer, error) {
	where := os.Getenv("FERRY_RELAY")
	switch {
	case where == "pipes":
		return os.Stdin, os.Stdout, nil
	case strings.HasPrefix(where, "pipes:"):
		var in, out int
		if _, err := fmt.Sscanf(where, "pipes:%d,%d", &in, &out); err != nil {
			return nil, nil, fmt.Errorf("FERRY_RELAY=%q: %v", where, err)
		}
		return os.NewFile(uintptr(in), "jobs"), os.NewFile(uintptr(out), "answers"), nil
	}
	if mode == modeGated {
		var b [1]byte
		if _, err := os.NewFile(3, "gate").Read(b[:]); err != nil {
			return nil, nil, fmt.Errorf("gate: %v", err)
		}
	}
	network, addr, ok := strings.Cut(where, "://")
	if !ok {
		return nil, nil, fmt.Errorf("FERRY_RELAY=%q", where)
	}
	nc, err := net.Dial(network, addr)
	return nc, nc, err
}

func runTestWorker(mode string) error {
	if mode == modeNoisy {
		fmt.Fprint(os.Stdout, noiseOut)
		fmt.Fprint(os.Stderr, noiseErr)
	}
	r, w, err := testRelayEnds(mode)
	if err != nil {
		return err
	}
	fr := frame.NewReader(r, 1<<20)
	f, err := fr.Read()
	if err != nil {
		return fmt.Errorf("reading the server hello: %v", err)
	}
	if f.Flags&frame.Control == 0 {
		return fmt.Errorf("server hello has flags %#x", f.Flags)
	}
	answer := map[string]any{"pid": os.Getpid(), "token": os.Getenv("FERRY_RELAY_TOKEN")}
	switch mode {
	case modeBadToken:
		answer["token"] = strings.Repeat("ab", 16)
	case modeNoToken:
		delete(answer, "token")
	}
	msg, _ := json.Marshal(answer)
	out := frame.Append(nil, frame.Control|frame.JSON, 0, nil, msg)
	if mode == modeEager {
		out = frame.Append(out, frame.Control|frame.JSON, 0, nil, []byte(`{"stop":true}`))
	}
	if _, err := w.Write(out); err != nil {
		return err
	}
	for {
		f, err := fr.Read()
		if err != nil {
			return nil // the server closed the relay
		}
		if mode == modeNoisy {
			fmt.Fprint(os.Stdout, noiseOut)
			fmt.Fprint(os.Stderr, noiseErr)
		}
		if _, err := w.Write(frame.Append(nil, f.Flags, f.Stream, f.Options, f.Payload)); err != nil {
			return err
		}
	}
}

// lockedBuffer collects a worker's log output, written by exec's copying
// goroutine while the test may look at it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// testProc is a started worker that the test reaps exactly once.
type testProc struct {
	cmd  *exec.Cmd
	once sync.Once
	err  error
}

func (p *testProc) wait() error {
	p.once.Do(func() { p.err = p.cmd.Wait() })
	return p.err
}

// testWorkerCmd builds the command for a worker in mode; the test's cleanup
// kills and reaps it if it is still around.
func testWorkerCmd(t *testing.T, mode string) (*exec.Cmd, *testProc) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// A race-enabled worker would otherwise linger a second at exit.
	cmd.Env = append(os.Environ(), workerModeEnv+"="+mode, "GORACE=atexit_sleep_ms=0")
	p := &testProc{cmd: cmd}
	t.Cleanup(func() {
		if cmd.Process != nil {
			cmd.Process.Kill()
			p.wait()
		}
	})
	return cmd, p
}

func envValue(env []string, key string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == key {
			v = val // the last one wins, as for exec
		}
	}
	return v
}

// echo sends one job-like frame and checks the worker sends it back intact.
func echo(t *testing.T, c *Conn, id uint32, payload []byte) {
	t.Helper()
	if err := c.Write(frame.Append(nil, frame.CodecRaw, 0, []uint32{0, id}, payload)); err != nil {
		t.Fatalf("write job %d: %v", id, err)
	}
	f, err := c.Read()
	if err != nil {
		t.Fatalf("read answer %d: %v", id, err)
	}
	if f.Flags != frame.CodecRaw || len(f.Options) != 2 || f.Options[1] != id || !bytes.Equal(f.Payload, payload) {
		t.Fatalf("answer %d came back as flags %#x options %v payload %q", id, f.Flags, f.Options, f.Payload)
	}
}
