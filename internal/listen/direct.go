package listen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// DirectListener is server.address in server.mode: direct: a listening TCP
// socket the server creates and never accepts on while it serves, which every
// worker inherits and accepts on itself. One socket, one accept queue, shared
// by every worker of every generation (never SO_REUSEPORT, whose per-socket
// queues lose the connections waiting in a closing worker's queue): a worker
// that stops only stops taking from it, and whatever waits there is taken by
// the others, or by the next generation during a reload.
//
// The socket is non-blocking, and stays so: the workers wait for it with
// epoll, several wake for one connection, and those that lose the race must
// get EAGAIN from accept, not block in it. O_NONBLOCK belongs to the open
// file description, which the server and every worker share, so the server
// must never clear it. An *os.File made from a non-blocking descriptor clears
// it each time its Fd is read (os/exec does, for every worker started): this
// one is made while the socket is blocking, so Go does not know it as
// non-blocking and leaves its flags alone, and is set non-blocking after.
type DirectListener struct {
	file *os.File
	addr *net.TCPAddr
	once sync.Once
}

// Direct listens on addr as net.Listen does (the same address forms, IPv4
// and IPv6, SO_REUSEADDR), then hands the socket over to a DirectListener.
func Direct(addr string) (*DirectListener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer ln.Close() // the socket lives on in the duplicate
	tl := ln.(*net.TCPListener)
	rc, err := tl.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	var derr error
	if err := rc.Control(func(s uintptr) { fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, fmt.Errorf("server.mode: direct: duplicating the listening socket: %w", derr)
	}
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "direct:"+ln.Addr().String())
	if err := unix.SetNonblock(fd, true); err != nil {
		f.Close()
		return nil, err
	}
	return &DirectListener{file: f, addr: ln.Addr().(*net.TCPAddr)}, nil
}

// File is the socket, for a worker's ExtraFiles. It must stay open while any
// worker may still start: the server keeps it for its whole life.
func (d *DirectListener) File() *os.File { return d.file }

// Addr is where it listens (the port chosen, for port 0).
func (d *DirectListener) Addr() *net.TCPAddr { return d.addr }

// ShuttingDown is what a connection still in the accept queue gets once the
// last worker has gone: an answer a client or a load balancer knows to retry,
// rather than a reset.
var ShuttingDown = shuttingDown("the server is shutting down; retry\n")

func shuttingDown(body string) []byte {
	return fmt.Appendf(nil, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"+
		"Retry-After: 1\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
}

// Close ends the socket at shutdown, once the last worker has exited: the
// connections still in its accept queue, which no worker took, each get
// ShuttingDown (within ctx, and at most a second each) instead of the reset
// closing the socket would give them. It returns how many there were.
func (d *DirectListener) Close(ctx context.Context, log *slog.Logger) int {
	n := 0
	d.once.Do(func() {
		var wg sync.WaitGroup
		rc, err := d.file.SyscallConn()
		for err == nil {
			var cfd int
			var aerr error
			if err = rc.Control(func(s uintptr) { cfd, _, aerr = unix.Accept4(int(s), unix.SOCK_CLOEXEC) }); err != nil {
				break
			}
			if errors.Is(aerr, unix.EINTR) || errors.Is(aerr, unix.ECONNABORTED) {
				continue
			}
			if aerr != nil {
				break // EAGAIN: the queue is empty
			}
			n++
			wg.Go(func() { refuseLeft(ctx, cfd) })
		}
		d.file.Close()
		wg.Wait()
		if n > 0 && log != nil {
			log.Info("answered 503 to connections left in the accept queue after the last worker stopped", "connections", n)
		}
	})
	return n
}

// refuseLeft writes ShuttingDown, then reads what the client sent until it
// closes or the deadline passes: closing with its request unread would send
// a reset, which may reach the client before the answer does.
func refuseLeft(ctx context.Context, fd int) {
	f := os.NewFile(uintptr(fd), "left")
	c, err := net.FileConn(f)
	f.Close()
	if err != nil {
		return
	}
	defer c.Close()
	deadline := time.Now().Add(time.Second)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.SetDeadline(deadline)
	if _, err := c.Write(ShuttingDown); err != nil {
		return
	}
	if tc, ok := c.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	io.Copy(io.Discard, io.LimitReader(c, 1<<20))
}
