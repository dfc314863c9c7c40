package relay

import (
	"context"
	"os/exec"
	"time"
)

// Workers whose protocol has no token (protocol.Traits.ByPID, RoadRunner's)
// answer the handshake with their pid alone. On a socket the connection is
// therefore matched to the process by that pid, as RoadRunner matches it; the
// unix socket's private directory still keeps other users out.

// deliverPID hands c to the worker process pid. A worker may connect before
// Start has learnt its pid (cmd.Start returns after the child runs), so an
// unclaimed connection waits for it until the hello timeout.
func (s *sockets) deliverPID(pid int, c *Conn) bool {
	if pid <= 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	if ch, ok := s.wantPID[pid]; ok {
		delete(s.wantPID, pid)
		ch <- c
		return true
	}
	if _, dup := s.early[pid]; dup {
		return false
	}
	s.early[pid] = c
	time.AfterFunc(s.hello, func() {
		s.mu.Lock()
		stale := s.early[pid] == c
		if stale {
			delete(s.early, pid)
		}
		s.mu.Unlock()
		if stale {
			c.Close()
		}
	})
	return true
}

// startByPID is Start for workers matched by pid.
func (s *sockets) startByPID(ctx context.Context, cmd *exec.Cmd, started func()) (*Conn, error) {
	if cmd.Stdout == nil {
		cmd.Stdout = cmd.Stderr
	}
	cmd.Env = s.proto.Env(baseEnv(cmd), s.addr, "")
	if err := cmd.Start(); err != nil {
		return nil, &BootError{Reason: "cannot start the worker: " + err.Error()}
	}
	if started != nil {
		started()
	}
	pid := cmd.Process.Pid
	ch := make(chan *Conn, 1)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, &BootError{Reason: "the relay listening on " + s.addr + " is closed"}
	}
	if c, ok := s.early[pid]; ok {
		delete(s.early, pid)
		s.mu.Unlock()
		return c, nil
	}
	s.wantPID[pid] = ch
	s.mu.Unlock()
	forget := func() {
		s.mu.Lock()
		delete(s.wantPID, pid)
		s.mu.Unlock()
		select {
		case c := <-ch:
			c.Close()
		default:
		}
	}
	select {
	case c := <-ch:
		return c, nil
	case <-s.done:
		forget()
		return nil, &BootError{Reason: "the relay listening on " + s.addr + " was closed"}
	case <-ctx.Done():
		forget()
		if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
			return nil, &BootError{Reason: cause.Error() + " before connecting to " + s.addr}
		}
		return nil, &BootError{Reason: "the worker did not connect to " + s.addr + " and send its pid within allocate_timeout"}
	}
}
