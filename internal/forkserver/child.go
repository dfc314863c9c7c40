package forkserver

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// process is a process this server did not start (a zygote's child, a
// refork's mold), watched through a pidfd: that works for any process and
// cannot be fooled by a reused pid.
type process struct {
	pid   int
	pidfd *os.File      // nil where the kernel has no pidfd_open (before Linux 5.3)
	done  chan struct{} // closed once it has exited
}

func openProcess(pid int) *process {
	p := &process{pid: pid, done: make(chan struct{})}
	if fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK); err == nil {
		p.pidfd = os.NewFile(uintptr(fd), "pidfd")
	}
	return p
}

// watch closes p.done once the process has exited, and collects it if it is
// this server's child: a process whose parent went is reparented to the
// nearest subreaper, which is this server when it runs as a container's pid
// 1, and would stay a zombie there. Otherwise it is not ours to collect.
func (p *process) watch() {
	if p.pidfd == nil {
		for syscall.Kill(p.pid, 0) == nil {
			time.Sleep(50 * time.Millisecond)
		}
		close(p.done)
		return
	}
	if rc, err := p.pidfd.SyscallConn(); err == nil {
		// A pidfd reads as ready once its process has exited: the first
		// call asks the poller to wait for that, the second returns.
		first := true
		rc.Read(func(uintptr) bool {
			if first {
				first = false
				return false
			}
			return true
		})
		rc.Control(func(fd uintptr) {
			var info unix.Siginfo
			unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG, nil)
		})
	}
	close(p.done)
	p.pidfd.Close()
}

// kill sends SIGKILL while the process lives, to it only.
func (p *process) kill() { p.signal(unix.SIGKILL) }

// signal sends sig while the process lives, to it only.
func (p *process) signal(sig syscall.Signal) {
	select {
	case <-p.done:
		return
	default:
	}
	if p.pidfd != nil {
		if rc, err := p.pidfd.SyscallConn(); err == nil {
			rc.Control(func(fd uintptr) { unix.PidfdSendSignal(int(fd), sig, nil, 0) })
			return
		}
	}
	syscall.Kill(p.pid, sig)
}

// parent reads the process's parent pid; 0 when it is gone.
func parent(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// Child is a worker forked by a zygote.
type Child struct {
	PID    int
	p      *process
	done   chan struct{}
	status string
}

// adopt watches the child the zygote says it forked. Its pidfd is opened
// before its parent is checked, so a pid the zygote names that is not its
// own child (a mistake, or an app that writes on the zygote's socket) is
// refused, never watched or killed.
func (z *Zygote) adopt(pid int) (*Child, error) {
	p := openProcess(pid)
	if parent(pid) != z.pid {
		if p.pidfd != nil {
			p.pidfd.Close()
		}
		z.mu.Lock()
		delete(z.children, pid)
		z.mu.Unlock()
		return nil, fmt.Errorf("the zygote named pid %d as its new worker, which is not its child", pid)
	}
	c := &Child{PID: pid, p: p, done: make(chan struct{})}
	go func() {
		p.watch()
		c.status = z.statusOf(pid)
		if c.status == "" {
			c.status = "exited (status unknown: its zygote had gone)"
		}
		close(c.done)
	}()
	return c, nil
}

// Done is closed once the child has exited.
func (c *Child) Done() <-chan struct{} { return c.done }

// Status describes how the child exited, as os.ProcessState.String does;
// valid once Done is closed.
func (c *Child) Status() string { return c.status }

// Kill sends SIGKILL, to this process only even if its pid was reused.
func (c *Child) Kill() { c.p.kill() }

// Signal sends sig, to this process only even if its pid was reused.
func (c *Child) Signal(sig syscall.Signal) { c.p.signal(sig) }

// rights packs fds for a unix socket message.
func rights(fds []int) []byte {
	if len(fds) == 0 {
		return nil
	}
	return unix.UnixRights(fds...)
}
