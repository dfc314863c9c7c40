package forkserver

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Child is a worker forked by a zygote. It is the zygote's child, not the
// server's, so it is watched through a pidfd: that works for any process and
// cannot be fooled by a reused pid.
type Child struct {
	PID    int
	z      *Zygote
	pidfd  *os.File // nil where the kernel has no pidfd_open (before Linux 5.3)
	done   chan struct{}
	status string
}

func (z *Zygote) watch(pid int) *Child {
	c := &Child{PID: pid, z: z, done: make(chan struct{})}
	if fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK); err == nil {
		c.pidfd = os.NewFile(uintptr(fd), "pidfd")
	}
	go c.wait()
	return c
}

// pidfdWait returns once the process of f (a PIDFD_NONBLOCK pidfd) has exited.
func pidfdWait(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil {
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
	}
}

// pidfdReap collects the exited process of f if it is this server's child:
// a process whose parent went is reparented to the nearest subreaper, which
// is this server when it runs as a container's pid 1, and would stay a
// zombie there. Otherwise it is not ours, and this does nothing.
func pidfdReap(f *os.File) {
	if rc, err := f.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			var info unix.Siginfo
			unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG, nil)
		})
	}
}

func (c *Child) wait() {
	if c.pidfd != nil {
		pidfdWait(c.pidfd)
		pidfdReap(c.pidfd)
	} else {
		for syscall.Kill(c.PID, 0) == nil {
			time.Sleep(50 * time.Millisecond)
		}
	}
	c.status = c.z.statusOf(c.PID)
	if c.status == "" {
		c.status = "exited (status unknown: its zygote had gone)"
	}
	close(c.done)
	if c.pidfd != nil {
		c.pidfd.Close()
	}
}

// Done is closed once the child has exited.
func (c *Child) Done() <-chan struct{} { return c.done }

// Status describes how the child exited, as os.ProcessState.String does;
// valid once Done is closed.
func (c *Child) Status() string { return c.status }

// Kill sends SIGKILL, to this process only even if its pid was reused.
func (c *Child) Kill() { c.Signal(unix.SIGKILL) }

// Signal sends sig to the child while it lives.
func (c *Child) Signal(sig unix.Signal) {
	select {
	case <-c.done:
		return
	default:
	}
	if c.pidfd != nil {
		if rc, err := c.pidfd.SyscallConn(); err == nil {
			rc.Control(func(fd uintptr) { unix.PidfdSendSignal(int(fd), sig, nil, 0) })
			return
		}
	}
	syscall.Kill(c.PID, sig)
}

// rights packs fds for a unix socket message.
func rights(fds []int) []byte {
	if len(fds) == 0 {
		return nil
	}
	return unix.UnixRights(fds...)
}
