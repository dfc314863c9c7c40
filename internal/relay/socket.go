package relay

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/ferry-php/ferry/internal/protocol"
	"github.com/ferry-php/ferry/internal/protocol/ferryproto"
)

// sockets accepts connections dialled by the workers on a unix or TCP listener.
// Any local process can dial, so a connection only reaches a caller of Start
// when it presents the token that Start gave its worker; everything else is
// closed as soon as it has spoken (or failed to within helloTimeout).
type sockets struct {
	ln       net.Listener
	addr     string // as given to the worker in FERRY_RELAY
	dir      string // private directory of the unix socket, removed by Close
	maxFrame uint32
	slots    chan struct{} // one per connection still in its handshake
	hello    time.Duration // how long a connection may take to present its token
	done     chan struct{}
	once     sync.Once

	mu      sync.Mutex
	want    map[string]chan *Conn // by token, for workers being started
	pending map[net.Conn]struct{} // not yet matched; closed by Close
	closed  bool

	proto protocol.Protocol
	// Workers of a protocol without tokens present their pid (bypid.go).
	byPID   bool
	wantPID map[int]chan *Conn
	early   map[int]*Conn
}

const (
	// helloTimeout bounds a socket that connects and then says nothing; a real
	// worker answers within milliseconds of connecting.
	helloTimeout = 5 * time.Second
	// maxPending bounds the connections in their handshake at once, so a flood
	// of idle dials cannot exhaust descriptors or memory.
	maxPending = 64
)

func listen(kind, dir string, maxFrame uint32, hello time.Duration) (*sockets, error) {
	s := &sockets{
		maxFrame: maxFrame,
		hello:    hello,
		slots:    make(chan struct{}, maxPending),
		done:     make(chan struct{}),
		want:     map[string]chan *Conn{},
		pending:  map[net.Conn]struct{}{},
		wantPID:  map[int]chan *Conn{},
		proto:    ferryproto.Protocol{},
		early:    map[int]*Conn{},
	}
	var err error
	if kind == "unix" {
		err = s.listenUnix(dir)
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

// listenUnix puts the socket in a fresh directory only this user can enter, so
// no one else can dial it, pre-create it or guess its name.
func (s *sockets) listenUnix(dir string) error {
	if dir == "" {
		dir = os.TempDir()
	}
	d, err := os.MkdirTemp(dir, "ferry-relay-*")
	if err != nil {
		return err
	}
	if err := os.Chmod(d, 0o700); err != nil {
		os.RemoveAll(d)
		return err
	}
	path := filepath.Join(d, "relay.sock")
	s.ln, err = net.Listen("unix", path)
	if err != nil {
		os.RemoveAll(d)
		return err
	}
	os.Chmod(path, 0o600)
	s.dir, s.addr = d, "unix://"+path
	return nil
}

func (s *sockets) accept() {
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			select {
			case <-s.done:
				return
			default:
			}
			// Out of descriptors or similar: keep serving once it passes.
			time.Sleep(10 * time.Millisecond)
			continue
		}
		select {
		case s.slots <- struct{}{}:
			go s.greet(nc)
		default:
			nc.Close()
		}
	}
}

func (s *sockets) greet(nc net.Conn) {
	defer func() { <-s.slots }()
	if !s.track(nc, true) {
		nc.Close()
		return
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
	}
	c := &Conn{w: nc, c: []io.Closer{nc}, dl: nc}
	h, err := handshake(c, nc, s.maxFrame, time.Now().Add(s.hello))
	s.track(nc, false)
	switch {
	case err != nil:
		nc.Close()
	case s.byPID:
		if !s.deliverPID(h.PID, c) {
			nc.Close()
		}
	case !s.deliver(h.Token, c):
		nc.Close()
	}
}

// track adds nc to (or removes it from) the connections Close must close; it
// reports false once the factory is closed.
func (s *sockets) track(nc net.Conn, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !add {
		delete(s.pending, nc)
		return true
	}
	if s.closed {
		return false
	}
	s.pending[nc] = struct{}{}
	return true
}

// deliver hands c to the worker that was given token. Tokens are single use:
// a second connection with the same one is refused.
func (s *sockets) deliver(token string, c *Conn) bool {
	if token == "" {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for want, ch := range s.want {
		if sameToken(token, want) {
			delete(s.want, want)
			ch <- c
			return true
		}
	}
	return false
}

// forget stops waiting for token and closes a connection that came in anyway.
func (s *sockets) forget(token string, ch chan *Conn) {
	s.mu.Lock()
	delete(s.want, token)
	s.mu.Unlock()
	select {
	case c := <-ch:
		c.Close()
	default:
	}
}

func (s *sockets) Start(ctx context.Context, cmd *exec.Cmd, started func()) (*Conn, error) {
	if s.byPID {
		return s.startByPID(ctx, cmd, started)
	}
	token := newToken()
	ch := make(chan *Conn, 1)
	s.mu.Lock()
	closed := s.closed
	if !closed {
		s.want[token] = ch
	}
	s.mu.Unlock()
	if closed {
		return nil, &BootError{Reason: "the relay listening on " + s.addr + " is closed"}
	}
	if cmd.Stdout == nil {
		cmd.Stdout = cmd.Stderr
	}
	cmd.Env = s.proto.Env(baseEnv(cmd), s.addr, token)
	if err := cmd.Start(); err != nil {
		s.forget(token, ch)
		return nil, &BootError{Reason: "cannot start the worker: " + err.Error()}
	}
	if started != nil {
		started()
	}
	select {
	case c := <-ch:
		return c, nil
	case <-s.done:
		s.forget(token, ch)
		return nil, &BootError{Reason: "the relay listening on " + s.addr + " was closed"}
	case <-ctx.Done():
		s.forget(token, ch)
		if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
			return nil, &BootError{Reason: cause.Error() + " before connecting to " + s.addr}
		}
		return nil, &BootError{Reason: "the worker did not connect to " + s.addr + " with its token within allocate_timeout"}
	}
}

func (s *sockets) Close() error {
	var err error
	s.once.Do(func() {
		s.mu.Lock()
		s.closed = true
		for nc := range s.pending {
			nc.Close()
		}
		for _, c := range s.early {
			c.Close()
		}
		s.mu.Unlock()
		close(s.done)
		err = s.ln.Close()
		if s.dir != "" {
			os.RemoveAll(s.dir)
		}
	})
	return err
}
