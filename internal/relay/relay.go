// Package relay connects the server to a worker process and performs the
// handshake: pipes (fds 3 and 4 of the worker, or its stdin/stdout for foreign
// protocols), unix sockets or TCP. What a relay hands back is a Conn whose worker
// has proved, with the token it was started with, that it is the one expected.
package relay

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/ferry-php/ferry/internal/frame"
	"github.com/ferry-php/ferry/internal/protocol"
	"github.com/ferry-php/ferry/internal/protocol/ferryproto"
)

// Factory starts workers connected over one kind of transport.
type Factory interface {
	// Start launches cmd and returns its connection once the worker has answered
	// the handshake with its token, or ctx ends. started runs as soon as the
	// process exists, so the caller can reap it (and cancel ctx with a cause when
	// it exits).
	//
	// The caller sets cmd.Stdout and cmd.Stderr: both are log streams, since the
	// relay never travels on them (a nil cmd.Stdout shares cmd.Stderr). The only
	// exception is the "stdio" kind, whose factory owns stdin and stdout. The
	// factory owns FERRY_RELAY and FERRY_RELAY_TOKEN in cmd.Env (a nil cmd.Env
	// starts from the server's environment) and, for "pipes", appends two files
	// to cmd.ExtraFiles.
	Start(ctx context.Context, cmd *exec.Cmd, started func()) (*Conn, error)
	Close() error
}

// New returns the factory for kind: "pipes" (the default), "stdio", "unix" or
// "tcp". dir is where the private directory of the unix socket is created
// (default: the system temp dir); maxFrame bounds every payload read from a
// worker.
//
// The workers' protocol (nil: Ferry's own) says how they learn where the
// relay is and how they identify themselves: by a token given to each, or by
// their pid alone (protocol.Traits.ByPID), and whether "pipes" are their
// stdin and stdout (protocol.Traits.Stdio).
func New(kind, dir string, maxFrame uint32, proto protocol.Protocol) (Factory, error) {
	if proto == nil {
		proto = ferryproto.Protocol{}
	}
	t := proto.Traits()
	switch kind {
	case "", "pipes":
		return pipes{maxFrame: maxFrame, proto: proto, stdio: t.Stdio, byPID: t.ByPID}, nil
	case "stdio":
		return pipes{maxFrame: maxFrame, proto: proto, stdio: true, byPID: t.ByPID}, nil
	case "unix", "tcp":
		s, err := listen(kind, dir, maxFrame, helloTimeout)
		if err != nil {
			return nil, err
		}
		s.proto, s.byPID = proto, t.ByPID
		return s, nil
	}
	if t.Stdio {
		return nil, fmt.Errorf("relay: unknown kind %q (want pipes, unix or tcp)", kind)
	}
	return nil, fmt.Errorf("relay: unknown kind %q (want pipes, stdio, unix or tcp)", kind)
}

// Conn is a handshaken stream to one worker. Reads come from one goroutine at a
// time; writes must be serialised by the caller.
type Conn struct {
	PID int // as reported by the worker
	// Waits: the worker says when all it runs is waiting ({"waiting":true}), so
	// a Fiber worker can be sent jobs in batches while it is busy (docs/protocol.md).
	Waits bool
	// Direct: the worker serves server.address itself (server.mode: direct),
	// with ext/ferry's event loop; it said so with "direct":true.
	Direct bool
	r      *frame.Reader
	w      io.Writer
	c      []io.Closer
	dl     interface{ SetReadDeadline(time.Time) error }
}

// Read returns the next frame from the worker.
func (c *Conn) Read() (frame.Frame, error) { return c.r.Read() }

// Buffered reports how many bytes have arrived past the last frame read: 0
// means the worker has nothing more in flight on the stream right now.
func (c *Conn) Buffered() int { return c.r.Buffered() }

// Write sends bytes that already hold whole frames, in one write call.
func (c *Conn) Write(b []byte) error {
	_, err := c.w.Write(b)
	return err
}

// Close releases the transport; the worker sees EOF.
func (c *Conn) Close() error {
	var errs []error
	for _, cl := range c.c {
		errs = append(errs, cl.Close())
	}
	return errors.Join(errs...)
}

// BootError explains why a worker never became ready. Output holds whatever the
// worker wrote on the protocol stream instead of a frame.
type BootError struct {
	Reason string
	Output []byte
}

func (e *BootError) Error() string {
	if len(e.Output) == 0 {
		return e.Reason
	}
	return fmt.Sprintf("%s; the worker wrote %q", e.Reason, e.Output)
}

type hello struct {
	PID   int    `json:"pid"`
	Token string `json:"token,omitempty"`
	Waits bool   `json:"waits,omitempty"`
	// Direct is the worker's alone: it accepts on FERRY_DIRECT_FD.
	Direct bool `json:"direct,omitempty"`
}

// helloMax bounds the handshake answer, far below maxFrame, because on a socket
// it is read before anyone knows who is talking.
const helloMax = 4 << 10

// newToken returns the secret a worker must present: only the process started
// with it (and its owner) can read it from the environment.
func newToken() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func sameToken(got, want string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// baseEnv is the environment the protocol's relay variables are added to;
// without this a nil cmd.Env would shrink to those alone.
func baseEnv(cmd *exec.Cmd) []string {
	if cmd.Env == nil {
		return os.Environ()
	}
	return cmd.Env
}

// handshake sends the server pid and waits for the worker's answer, which must
// be a CONTROL frame carrying its own pid. raw is the stream c reads from; on
// success c gets its frame reader, bounded by maxFrame.
func handshake(c *Conn, raw io.Reader, maxFrame uint32, deadline time.Time) (hello, error) {
	msg, _ := json.Marshal(hello{PID: os.Getpid(), Waits: true})
	if err := c.Write(frame.Append(nil, frame.Control|frame.JSON, 0, nil, msg)); err != nil {
		return hello{}, &BootError{Reason: "cannot send the handshake: " + err.Error()}
	}
	if !deadline.IsZero() {
		c.dl.SetReadDeadline(deadline)
		defer c.dl.SetReadDeadline(time.Time{})
	}
	hr := frame.NewReader(raw, min(maxFrame, helloMax))
	f, err := hr.Read()
	if err != nil {
		return hello{}, readFailure(hr, err)
	}
	var h hello
	if f.Flags&frame.Control == 0 || json.Unmarshal(f.Payload, &h) != nil || h.PID <= 0 {
		return hello{}, &BootError{Reason: "the worker answered the handshake with something other than CONTROL {\"pid\":N,\"token\":\"...\"}", Output: clip(f.Payload)}
	}
	// Whatever the worker sent after its answer is already in hr's buffer and
	// must reach the reader that replaces it.
	if rest := hr.Rest(); len(rest) > 0 {
		raw = io.MultiReader(bytes.NewReader(bytes.Clone(rest)), raw)
	}
	c.r = frame.NewReader(raw, maxFrame)
	c.PID = h.PID
	c.Waits = h.Waits
	c.Direct = h.Direct
	return h, nil
}

func readFailure(r *frame.Reader, err error) error {
	var de *frame.DecodeError
	switch {
	case errors.As(err, &de):
		// Rest still starts with the bytes the decoder looked at (de.Raw):
		// joining both would quote them twice.
		out := bytes.Clone(r.Rest())
		if len(out) == 0 {
			out = de.Raw
		}
		return &BootError{Reason: "the worker wrote something other than a frame before the handshake (" + de.Error() + ")", Output: clip(out)}
	case errors.Is(err, os.ErrDeadlineExceeded):
		return &BootError{Reason: "no handshake from the worker within allocate_timeout"}
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return &BootError{Reason: "the worker exited or closed the relay before the handshake"}
	}
	return &BootError{Reason: "handshake failed: " + err.Error()}
}

func clip(b []byte) []byte {
	if len(b) > 2048 {
		return b[:2048]
	}
	return b
}
