package relay

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/ferry-php/ferry/internal/frame"
)

// sockets accepts connections dialled by the workers on a unix or TCP listener.
type sockets struct {
	ln       net.Listener
	addr     string // as given to the worker in FERRY_RELAY
	maxFrame uint32
	w        *waiters
	path     string
}

// handshakeTimeout bounds a socket that connects and then says nothing.
const handshakeTimeout = 30 * time.Second

func listen(kind, dir string, maxFrame uint32) (*sockets, error) {
	s := &sockets{maxFrame: maxFrame, w: &waiters{want: map[int]chan *Conn{}, orphans: map[int]*Conn{}}}
	var err error
	if kind == "unix" {
		if dir == "" {
			dir = os.TempDir()
		}
		s.path = filepath.Join(dir, fmt.Sprintf("ferry-relay-%d.sock", os.Getpid()))
		os.Remove(s.path)
		s.ln, err = net.Listen("unix", s.path)
		if err == nil {
			os.Chmod(s.path, 0o600)
		}
		s.addr = "unix://" + s.path
	} else {
		s.ln, err = net.Listen("tcp", "127.0.0.1:0")
		if err == nil {
			s.addr = "tcp://" + s.ln.Addr().String()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	go s.accept()
	return s, nil
}

func (s *sockets) accept() {
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return
		}
		go s.greet(nc)
	}
}

func (s *sockets) greet(nc net.Conn) {
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	c := &Conn{r: frame.NewReader(nc, s.maxFrame), w: nc, c: []io.Closer{nc}, dl: nc}
	if err := handshake(c, time.Now().Add(handshakeTimeout)); err != nil {
		nc.Close()
		return
	}
	s.w.deliver(c)
}

func (s *sockets) Start(ctx context.Context, cmd *exec.Cmd, started func()) (*Conn, error) {
	cmd.Stdout = cmd.Stderr // stdout carries no protocol here; treat it as log output
	cmd.Env = append(cmd.Env, "FERRY_RELAY="+s.addr)
	if err := cmd.Start(); err != nil {
		return nil, &BootError{Reason: "cannot start the worker: " + err.Error()}
	}
	pid := cmd.Process.Pid
	ch := s.w.wait(pid)
	if started != nil {
		started()
	}
	select {
	case c := <-ch:
		return c, nil
	case <-ctx.Done():
		s.w.forget(pid)
		if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
			return nil, &BootError{Reason: cause.Error() + " before connecting to " + s.addr}
		}
		return nil, &BootError{Reason: "the worker did not connect to " + s.addr + " within allocate_timeout"}
	}
}

func (s *sockets) Close() error {
	err := s.ln.Close()
	if s.path != "" {
		os.Remove(s.path)
	}
	return err
}
