// Package relay connects the server to a worker process and performs the
// handshake: pipes (the worker's stdin/stdout), unix sockets or TCP. What a relay
// hands back is a Conn that has already exchanged pids with the worker.
package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	"github.com/ferry-php/ferry/internal/frame"
)

// Factory starts workers connected over one kind of transport.
type Factory interface {
	// Start launches cmd and returns its connection once the worker has answered
	// the handshake, or ctx ends. started runs as soon as the process exists, so the
	// caller can reap it (and cancel ctx with a cause when it exits). cmd.Stderr must
	// be set by the caller; the factory owns stdin, stdout and FERRY_RELAY.
	Start(ctx context.Context, cmd *exec.Cmd, started func()) (*Conn, error)
	Close() error
}

// New returns the factory for kind ("pipes", "unix" or "tcp"). dir holds the unix
// socket; maxFrame bounds every payload read from a worker.
func New(kind, dir string, maxFrame uint32) (Factory, error) {
	switch kind {
	case "", "pipes":
		return pipes{maxFrame: maxFrame}, nil
	case "unix", "tcp":
		return listen(kind, dir, maxFrame)
	}
	return nil, fmt.Errorf("relay: unknown kind %q (want pipes, unix or tcp)", kind)
}

// Conn is a handshaken stream to one worker. Reads come from one goroutine at a
// time; writes must be serialised by the caller.
type Conn struct {
	PID int // as reported by the worker
	r   *frame.Reader
	w   io.Writer
	c   []io.Closer
	dl  interface{ SetReadDeadline(time.Time) error }
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
	PID int `json:"pid"`
}

// handshake sends the server pid and waits for the worker's answer, which must
// be a CONTROL frame carrying its own pid.
func handshake(c *Conn, deadline time.Time) error {
	msg, _ := json.Marshal(hello{PID: os.Getpid()})
	if err := c.Write(frame.Append(nil, frame.Control|frame.JSON, 0, nil, msg)); err != nil {
		return &BootError{Reason: "cannot send the handshake: " + err.Error()}
	}
	if c.dl != nil && !deadline.IsZero() {
		c.dl.SetReadDeadline(deadline)
		defer c.dl.SetReadDeadline(time.Time{})
	}
	f, err := c.Read()
	if err != nil {
		return readFailure(c, err)
	}
	var h hello
	if f.Flags&frame.Control == 0 || json.Unmarshal(f.Payload, &h) != nil || h.PID <= 0 {
		return &BootError{Reason: "the worker answered the handshake with something other than CONTROL {\"pid\":N}", Output: clip(f.Payload)}
	}
	c.PID = h.PID
	return nil
}

func readFailure(c *Conn, err error) error {
	var de *frame.DecodeError
	switch {
	case errors.As(err, &de):
		out := append(de.Raw, c.r.Rest()...)
		return &BootError{Reason: "the worker wrote text instead of a frame (stray output before the handshake?)", Output: clip(out)}
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

// pipes talks over the worker's stdin and stdout.
type pipes struct{ maxFrame uint32 }

func (p pipes) Start(ctx context.Context, cmd *exec.Cmd, started func()) (*Conn, error) {
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, err
	}
	cmd.Stdin, cmd.Stdout = inR, outW
	cmd.Env = append(cmd.Env, "FERRY_RELAY=pipes")
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, &BootError{Reason: "cannot start the worker: " + err.Error()}
	}
	if started != nil {
		started()
	}
	c := &Conn{r: frame.NewReader(outR, p.maxFrame), w: inW, c: []io.Closer{inW, outR}, dl: outR}
	deadline, _ := ctx.Deadline()
	if err := handshake(c, deadline); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (pipes) Close() error { return nil }

// waiters pairs accepted sockets with the processes that dialled them, by pid.
type waiters struct {
	mu      sync.Mutex
	want    map[int]chan *Conn
	orphans map[int]*Conn
}

func (w *waiters) deliver(c *Conn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ch, ok := w.want[c.PID]; ok {
		delete(w.want, c.PID)
		ch <- c
		return
	}
	w.orphans[c.PID] = c
}

func (w *waiters) wait(pid int) chan *Conn {
	ch := make(chan *Conn, 1)
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.orphans[pid]; ok {
		delete(w.orphans, pid)
		ch <- c
		return ch
	}
	w.want[pid] = ch
	return ch
}

func (w *waiters) forget(pid int) {
	w.mu.Lock()
	delete(w.want, pid)
	if c, ok := w.orphans[pid]; ok {
		c.Close()
		delete(w.orphans, pid)
	}
	w.mu.Unlock()
}
