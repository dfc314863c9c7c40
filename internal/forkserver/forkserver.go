// Package forkserver runs a zygote: a PHP process that boots the application
// once and then forks a worker each time the server asks, so that workers
// share what the boot loaded (OPcache, the autoloader, the container) and a
// new one is ready in milliseconds instead of a whole boot.
//
// The zygote is the worker command itself, started with
// FERRY_RELAY=zygote:unix:///... It runs the script up to where the script
// hands control to php/worker (the handshake), connects to this package's
// private socket and from then on only forks. Each fork request carries the
// child's relay pipes and log pipe as SCM_RIGHTS, so no child is reachable
// by anyone else, and the extra environment the child sets before it goes on
// with the handshake as an ordinary worker. The zygote reaps its children and
// reports their exit status; pidfds tell the server that a child has gone
// even when its zygote went first.
package forkserver

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// Zygote is one booted PHP process that forks workers.
type Zygote struct {
	conn  *net.UnixConn
	pid   int
	token string
	kill  func()
	// exited is closed once an adopted mold's process has gone (Adopt);
	// a zygote Start launched is its caller's to wait for.
	exited chan struct{}

	wmu sync.Mutex // one request on the socket at a time

	mu       sync.Mutex
	next     uint64
	waiting  map[uint64]chan forked
	children map[int]bool          // the pids of the workers it forked, watched
	status   map[int]string        // exit statuses of children, until collected
	exits    map[int]chan struct{} // closed when a child's status is reported
	dead     chan struct{}         // closed when the zygote has gone
	err      error                 // why it went, for the forks still waiting
}

type forked struct {
	pid int
	err error
}

// message is every message of the zygote's socket, either way.
type message struct {
	Zygote int    `json:"zygote,omitempty"` // its pid, in its first message
	Token  string `json:"token,omitempty"`
	Error  string `json:"error,omitempty"` // a boot it refuses, or a failed fork

	Fork   uint64            `json:"fork,omitempty"` // a request, by id
	Env    map[string]string `json:"env,omitempty"`
	Forked uint64            `json:"forked,omitempty"` // the answer to request id
	PID    int               `json:"pid,omitempty"`

	Output bool   `json:"output,omitempty"` // the descriptor given is its stdout and stderr from now on
	Exit   int    `json:"exit,omitempty"`   // a child's pid, reaped
	Status string `json:"status,omitempty"`
}

// BootError says why a zygote never became ready; the caller quotes what the
// process printed beside it.
type BootError struct{ Reason string }

func (e *BootError) Error() string { return e.Reason }

// Listener is a zygote's private socket, waiting for its one connection.
type Listener struct {
	ln   *net.UnixListener
	dir  string
	path string
}

// Listen makes a private directory under dir (the system temp dir when empty)
// holding the socket a zygote connects to.
func Listen(dir string) (*Listener, error) {
	sockDir, err := os.MkdirTemp(dir, "ferry-zygote-")
	if err != nil {
		return nil, fmt.Errorf("zygote socket directory: %w", err)
	}
	path := filepath.Join(sockDir, "z.sock")
	ln, err := net.ListenUnix("unixpacket", &net.UnixAddr{Name: path, Net: "unixpacket"})
	if err != nil {
		os.RemoveAll(sockDir)
		return nil, fmt.Errorf("zygote socket: %w", err)
	}
	return &Listener{ln: ln, dir: sockDir, path: path}, nil
}

// Path is the socket's, for FERRY_RELAY or a worker's mold request.
func (l *Listener) Path() string { return l.path }

// Close removes the socket; a zygote already accepted is not affected.
func (l *Listener) Close() {
	l.ln.Close()
	os.RemoveAll(l.dir)
}

// accept waits, until ctx ends, for the zygote's connection and its hello.
func (l *Listener) accept(ctx context.Context, token string, timeout string) (*net.UnixConn, int, error) {
	stop := context.AfterFunc(ctx, func() { l.ln.SetDeadline(time.Unix(1, 0)) })
	conn, err := l.ln.AcceptUnix()
	stop()
	if err != nil {
		if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
			return nil, 0, &BootError{Reason: cause.Error() + " before it was ready to fork"}
		}
		return nil, 0, &BootError{Reason: "the zygote did not become ready to fork within " + timeout}
	}
	pid, err := hello(ctx, conn, token)
	if err != nil {
		conn.Close()
		return nil, 0, err
	}
	return conn, pid, nil
}

// Start launches cmd as a zygote and waits, at most until ctx ends, for it to
// boot the application and connect with the token it is given in
// FERRY_RELAY_TOKEN. dir is where its private socket directory is made (the
// system temp dir when empty). started runs once the process exists, so the
// caller can reap it: the caller owns cmd.Wait.
func Start(ctx context.Context, cmd *exec.Cmd, dir string, started func(pid int)) (*Zygote, error) {
	token := newToken()
	l, err := Listen(dir)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, "FERRY_RELAY=zygote:unix://"+l.path, "FERRY_RELAY_TOKEN="+token)
	if err := cmd.Start(); err != nil {
		return nil, &BootError{Reason: "cannot start the zygote: " + err.Error()}
	}
	if started != nil {
		started(cmd.Process.Pid)
	}
	conn, _, err := l.accept(ctx, token, "allocate_timeout")
	if err != nil {
		cmd.Process.Kill()
		return nil, err
	}
	z := newZygote(conn, cmd.Process.Pid, token, func() { cmd.Process.Kill() })
	go z.readLoop()
	return z, nil
}

// Adopt takes a worker that has become a mold (a refork) as a zygote: it
// forked a process of its own that connects to l, presenting token.
func Adopt(ctx context.Context, l *Listener, token string) (*Zygote, error) {
	conn, pid, err := l.accept(ctx, token, "the refork's timeout")
	if err != nil {
		return nil, err
	}
	p := openProcess(pid)
	z := newZygote(conn, pid, token, p.kill)
	z.exited = p.done
	go p.watch()
	go z.readLoop()
	return z, nil
}

func newZygote(conn *net.UnixConn, pid int, token string, kill func()) *Zygote {
	return &Zygote{conn: conn, pid: pid, token: token, kill: kill, exited: make(chan struct{}),
		waiting: map[uint64]chan forked{}, children: map[int]bool{}, status: map[int]string{}, exits: map[int]chan struct{}{}, dead: make(chan struct{})}
}

// hello reads the zygote's first message: its pid and token, or why it refuses.
func hello(ctx context.Context, conn *net.UnixConn, token string) (int, error) {
	if d, ok := ctx.Deadline(); ok {
		conn.SetReadDeadline(d)
		defer conn.SetReadDeadline(time.Time{})
	}
	buf := make([]byte, 64<<10)
	n, _, _, _, err := conn.ReadMsgUnix(buf, nil)
	if err != nil {
		return 0, &BootError{Reason: "the zygote closed its socket before it was ready: " + err.Error()}
	}
	var m message
	if err := json.Unmarshal(buf[:n], &m); err != nil {
		return 0, &BootError{Reason: fmt.Sprintf("the zygote sent something other than its hello: %.200q", buf[:n])}
	}
	if m.Error != "" {
		return 0, &BootError{Reason: m.Error}
	}
	if subtle.ConstantTimeCompare([]byte(m.Token), []byte(token)) != 1 || m.Zygote <= 0 {
		return 0, &BootError{Reason: "the process on the zygote socket did not present the zygote's token"}
	}
	return m.Zygote, nil
}

// Token is what the zygote's children present in their handshake: they
// inherit it, and their relay pipes reach nobody else.
func (z *Zygote) Token() string { return z.token }

func newToken() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// PID is the zygote's process id.
func (z *Zygote) PID() int { return z.pid }

// Dead is closed once the zygote has gone.
func (z *Zygote) Dead() <-chan struct{} { return z.dead }

// Close asks the zygote to exit: it sees its socket close. Its children live on.
func (z *Zygote) Close() error { return z.conn.Close() }

// Exited is closed once an adopted mold has exited (see Adopt); never for a
// zygote Start launched, whose caller waits for its process.
func (z *Zygote) Exited() <-chan struct{} { return z.exited }

// Kill ends the zygote at once.
func (z *Zygote) Kill() { z.kill() }

func (z *Zygote) readLoop() {
	buf := make([]byte, 64<<10)
	var err error
	for {
		var n int
		n, _, _, _, err = z.conn.ReadMsgUnix(buf, nil)
		if err != nil {
			break
		}
		if n == 0 {
			err = errors.New("the zygote closed its socket")
			break
		}
		var m message
		if json.Unmarshal(buf[:n], &m) != nil {
			err = fmt.Errorf("the zygote sent a message that is not JSON: %.200q", buf[:n])
			z.kill()
			break
		}
		z.mu.Lock()
		switch {
		case m.Forked != 0:
			if ch := z.waiting[m.Forked]; ch != nil {
				delete(z.waiting, m.Forked)
				f := forked{pid: m.PID}
				if m.Error != "" || m.PID <= 0 {
					f.err = errors.New("the zygote could not fork: " + m.Error)
				} else {
					// Before its exit can be read: the report follows on this socket.
					z.children[m.PID] = true
				}
				ch <- f
			}
		case z.children[m.Exit]: // of nobody else's does it keep a status
			delete(z.children, m.Exit)
			z.status[m.Exit] = m.Status
			if ch := z.exits[m.Exit]; ch != nil {
				close(ch)
				delete(z.exits, m.Exit)
			}
		}
		z.mu.Unlock()
	}
	z.conn.Close()
	z.mu.Lock()
	z.err = err
	for id, ch := range z.waiting {
		ch <- forked{err: fmt.Errorf("the zygote went before it forked: %w", err)}
		delete(z.waiting, id)
	}
	close(z.dead)
	z.mu.Unlock()
}

// Fork asks the zygote for a worker holding files (fd 3, 4, ... in the order
// given; the last one is its stdout and stderr) and env set before it goes on.
// The caller closes its own copies of files afterwards.
func (z *Zygote) Fork(ctx context.Context, files []*os.File, env map[string]string) (*Child, error) {
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	ch := make(chan forked, 1)
	z.mu.Lock()
	select {
	case <-z.dead:
		z.mu.Unlock()
		return nil, fmt.Errorf("the zygote has gone: %w", z.err)
	default:
	}
	z.next++
	id := z.next
	z.waiting[id] = ch
	z.mu.Unlock()
	b, _ := json.Marshal(message{Fork: id, Env: env})
	z.wmu.Lock()
	_, _, err := z.conn.WriteMsgUnix(b, rights(fds), nil)
	z.wmu.Unlock()
	if err != nil {
		z.mu.Lock()
		delete(z.waiting, id)
		z.mu.Unlock()
		return nil, fmt.Errorf("cannot ask the zygote for a worker: %w", err)
	}
	var f forked
	select {
	case f = <-ch:
	case <-ctx.Done():
		z.mu.Lock()
		_, pending := z.waiting[id]
		delete(z.waiting, id)
		z.mu.Unlock()
		if pending {
			return nil, errors.New("the zygote did not fork within allocate_timeout")
		}
		f = <-ch // answered meanwhile: a child exists and must be owned
	}
	if f.err != nil {
		return nil, f.err
	}
	return z.adopt(f.pid)
}

// Output gives the zygote a log pipe of its own, copied to w until every
// process holding it has gone: a mold (Adopt) still writes to the pipe of
// the worker it was forked from, which that worker's end would close.
func (z *Zygote) Output(w io.Writer) error {
	r, wr, err := os.Pipe()
	if err != nil {
		return err
	}
	b, _ := json.Marshal(message{Output: true})
	z.wmu.Lock()
	_, _, err = z.conn.WriteMsgUnix(b, rights([]int{int(wr.Fd())}), nil)
	z.wmu.Unlock()
	wr.Close()
	if err != nil {
		r.Close()
		return err
	}
	go func() {
		io.Copy(w, r)
		r.Close()
	}()
	return nil
}

// statusOf waits a little for the zygote's report of pid's exit, which
// arrives just after the pidfd says it exited; "" when none comes.
func (z *Zygote) statusOf(pid int) string {
	z.mu.Lock()
	if st, ok := z.status[pid]; ok {
		delete(z.status, pid)
		z.mu.Unlock()
		return st
	}
	ch := make(chan struct{})
	z.exits[pid] = ch
	z.mu.Unlock()
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-ch:
	case <-z.dead:
	case <-t.C:
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	delete(z.exits, pid)
	st := z.status[pid]
	delete(z.status, pid)
	return st
}
