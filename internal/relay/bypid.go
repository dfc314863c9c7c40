package relay

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"
)

// RRVersion is the RoadRunner release whose worker protocol Ferry speaks,
// given to workers as RR_VERSION.
const RRVersion = "2025.1.0"

// NewRoadRunner returns the factory for workers built on RoadRunner's PHP
// side (spiral/roadrunner-worker): they find the relay in RR_RELAY ("pipes"
// is their stdin and stdout, as RoadRunner does it; else tcp://host:port or
// unix://path) and answer the handshake with their pid alone. On a socket the
// connection is therefore matched to the process by that pid, as RoadRunner
// matches it; the unix socket's private directory still keeps other users out.
func NewRoadRunner(kind, dir string, maxFrame uint32) (Factory, error) {
	switch kind {
	case "", "pipes", "stdio":
		return pipes{maxFrame: maxFrame, stdio: true, rr: true}, nil
	case "unix", "tcp":
		s, err := listen(kind, dir, maxFrame, helloTimeout)
		if err != nil {
			return nil, err
		}
		s.rr = true
		return s, nil
	}
	return nil, fmt.Errorf("relay: unknown kind %q (want pipes, unix or tcp)", kind)
}

// rrEnv is a RoadRunner worker's environment: RR_MODE tells
// Spiral\RoadRunner\Environment which plugin runs it (http).
func rrEnv(cmd *exec.Cmd, relay string) []string {
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	return append(env, "RR_RELAY="+relay, "RR_MODE=http", "RR_VERSION="+RRVersion)
}

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
	if ch, ok := s.byPID[pid]; ok {
		delete(s.byPID, pid)
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

// startRR is Start for RoadRunner workers on a socket.
func (s *sockets) startRR(ctx context.Context, cmd *exec.Cmd, started func()) (*Conn, error) {
	if cmd.Stdout == nil {
		cmd.Stdout = cmd.Stderr
	}
	cmd.Env = rrEnv(cmd, s.addr)
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
	s.byPID[pid] = ch
	s.mu.Unlock()
	forget := func() {
		s.mu.Lock()
		delete(s.byPID, pid)
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
		return nil, &BootError{Reason: "the worker did not connect to " + s.addr + " (RR_RELAY) and send its pid within allocate_timeout"}
	}
}
