package relay

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ferry-php/ferry/internal/frame"
)

const testMaxFrame = 1 << 20

func newFactory(t *testing.T, kind, dir string) Factory {
	t.Helper()
	f, err := New(kind, dir, testMaxFrame, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func bootCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestHandshakeEveryKind starts a worker over each transport, checks what it was
// told in its environment and exchanges frames with it.
func TestHandshakeEveryKind(t *testing.T) {
	for _, tc := range []struct{ kind, relay string }{
		{"pipes", "pipes:3,4"},
		{"stdio", "pipes"},
		{"unix", "unix://"},
		{"tcp", "tcp://127.0.0.1:"},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			f := newFactory(t, tc.kind, t.TempDir())
			tokens := map[string]bool{}
			for i := range 2 {
				cmd, p := testWorkerCmd(t, modeEcho)
				var logs lockedBuffer
				cmd.Stderr = &logs
				c, err := f.Start(bootCtx(t), cmd, nil)
				if err != nil {
					t.Fatalf("start: %v (worker stderr: %s)", err, logs.String())
				}
				if c.PID != cmd.Process.Pid {
					t.Errorf("Conn.PID = %d, worker pid %d", c.PID, cmd.Process.Pid)
				}
				if got := envValue(cmd.Env, "FERRY_RELAY"); !strings.HasPrefix(got, tc.relay) || (tc.kind != "unix" && tc.kind != "tcp" && got != tc.relay) {
					t.Errorf("FERRY_RELAY = %q, want %q", got, tc.relay)
				}
				tok := envValue(cmd.Env, "FERRY_RELAY_TOKEN")
				if len(tok) != 32 || strings.Trim(tok, "0123456789abcdef") != "" || tokens[tok] {
					t.Errorf("FERRY_RELAY_TOKEN = %q: want 32 hex digits, new for each worker", tok)
				}
				tokens[tok] = true
				for id := range uint32(3) {
					echo(t, c, id+uint32(i)*10, []byte(strings.Repeat("x", int(id)*1000)))
				}
				c.Close()
				if err := p.wait(); err != nil {
					t.Errorf("worker exit: %v (stderr: %s)", err, logs.String())
				}
			}
		})
	}
}

// TestPipesKeepStdoutForLogs: what a worker prints on stdout or stderr is log
// output; frames travel on fds 3 and 4 and are not disturbed by it.
func TestPipesKeepStdoutForLogs(t *testing.T) {
	f := newFactory(t, "pipes", "")
	cmd, p := testWorkerCmd(t, modeNoisy)
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	c, err := f.Start(bootCtx(t), cmd, nil)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	if cmd.Stdin != nil {
		t.Errorf("the worker's stdin is %v, want nil (/dev/null)", cmd.Stdin)
	}
	for id := range uint32(5) {
		echo(t, c, id, []byte("payload"))
	}
	c.Close()
	if err := p.wait(); err != nil {
		t.Fatalf("worker exit: %v (stderr: %s)", err, stderr.String())
	}
	if got := strings.Count(stdout.String(), noiseOut); got != 6 {
		t.Errorf("cmd.Stdout received %d of the 6 lines the worker printed: %q", got, stdout.String())
	}
	if got := strings.Count(stderr.String(), noiseErr); got != 6 {
		t.Errorf("cmd.Stderr received %d of the 6 lines the worker printed: %q", got, stderr.String())
	}
}

// TestPipesExtraFilesKeepTheirNumbers: the relay's fds go after the caller's.
func TestPipesExtraFilesKeepTheirNumbers(t *testing.T) {
	f := newFactory(t, "pipes", "")
	cmd, p := testWorkerCmd(t, modeEcho)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	cmd.ExtraFiles = append(cmd.ExtraFiles, r)
	c, err := f.Start(bootCtx(t), cmd, nil)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	if got := envValue(cmd.Env, "FERRY_RELAY"); got != "pipes:4,5" {
		t.Errorf("FERRY_RELAY = %q, want pipes:4,5", got)
	}
	echo(t, c, 1, []byte("hi"))
	c.Close()
	p.wait()
}

// TestPipesRequireTheToken: a pipes worker must prove it is the process that
// was given FERRY_RELAY_TOKEN; stdio lets a foreign worker leave it out.
func TestPipesRequireTheToken(t *testing.T) {
	for _, tc := range []struct {
		kind, mode string
		want       string // in the BootError; "" means Start succeeds
	}{
		{"pipes", modeBadToken, "token other than the FERRY_RELAY_TOKEN"},
		{"pipes", modeNoToken, "without the token from FERRY_RELAY_TOKEN"},
		{"stdio", modeBadToken, "token other than the FERRY_RELAY_TOKEN"},
		{"stdio", modeNoToken, ""},
	} {
		t.Run(tc.kind+"/"+tc.mode, func(t *testing.T) {
			f := newFactory(t, tc.kind, "")
			cmd, p := testWorkerCmd(t, tc.mode)
			c, err := f.Start(bootCtx(t), cmd, nil)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("start: %v", err)
				}
				echo(t, c, 7, []byte("ok"))
				c.Close()
				p.wait()
				return
			}
			if err == nil {
				c.Close()
				t.Fatalf("Start accepted a worker that answered the handshake %s", tc.mode)
			}
			var be *BootError
			if !errors.As(err, &be) || !strings.Contains(be.Reason, tc.want) {
				t.Fatalf("error = %v (%T), want a BootError saying %q", err, err, tc.want)
			}
			// The relay is closed, so the worker sees EOF and leaves.
			if err := p.wait(); err != nil {
				t.Errorf("worker exit: %v", err)
			}
		})
	}
}

// TestMaxFrameStillApplies: the handshake's small bound does not replace the
// configured one afterwards, and a frame sent right behind the handshake
// answer is not lost when the reader is swapped.
func TestMaxFrameStillApplies(t *testing.T) {
	f, err := New("pipes", "", 64<<10, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd, p := testWorkerCmd(t, modeEager)
	c, err := f.Start(bootCtx(t), cmd, nil)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	defer p.wait()
	defer c.Close()
	if fr, err := c.Read(); err != nil || string(fr.Payload) != `{"stop":true}` {
		t.Fatalf("frame behind the handshake: %q, %v", fr.Payload, err)
	}
	echo(t, c, 1, make([]byte, 60<<10))
	if err := c.Write(frame.Append(nil, frame.CodecRaw, 0, []uint32{0, 2}, make([]byte, 70<<10))); err != nil {
		t.Fatal(err)
	}
	var de *frame.DecodeError
	if _, err := c.Read(); !errors.As(err, &de) || de.Kind != frame.ErrTooLarge {
		t.Fatalf("reading a 70 KiB frame with a 64 KiB limit: %v, want too_large", err)
	}
}

// TestUnixSocketDirIsPrivate: the socket lives in a directory of its own, mode
// 0700, that Close removes; not at a name in a shared directory that anyone
// could guess and take first.
func TestUnixSocketDirIsPrivate(t *testing.T) {
	for _, base := range []string{"", t.TempDir()} {
		f, err := New("unix", base, testMaxFrame, nil)
		if err != nil {
			t.Fatal(err)
		}
		cmd, p := testWorkerCmd(t, modeEcho)
		c, err := f.Start(bootCtx(t), cmd, nil)
		if err != nil {
			f.Close()
			t.Fatalf("start: %v", err)
		}
		echo(t, c, 1, []byte("hi"))
		sock := strings.TrimPrefix(envValue(cmd.Env, "FERRY_RELAY"), "unix://")
		dir := filepath.Dir(sock)
		want := base
		if want == "" {
			want = os.TempDir()
		}
		if filepath.Dir(dir) != filepath.Clean(want) || !strings.HasPrefix(filepath.Base(dir), "ferry-relay-") {
			t.Errorf("socket %s: want it in a ferry-relay-* directory of its own under %s", sock, want)
		}
		if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 || !st.IsDir() {
			t.Errorf("socket directory %s: %v, %v; want a 0700 directory", dir, st.Mode(), err)
		}
		c.Close()
		p.wait()
		f.Close()
		if _, err := os.Lstat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("after Close, %s: %v; want it removed", dir, err)
		}
		if _, err := os.Lstat(sock); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("after Close, %s: %v; want it removed", sock, err)
		}
	}
}
