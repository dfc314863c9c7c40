package observe

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Direct mode's workers serve HTTP themselves (docs/direct.md), so the
// server never sees their requests: each worker formats its own lines, as
// appendJSON and appendCombined do (ext/ferry/ferry_direct_log_fmt.c), and
// writes them to a FIFO the server reads into this log. A FIFO rather than a
// pipe handed down as a descriptor: every worker, a forked one too, opens it
// by its path, and the pool's descriptor numbering stays as it is. Workers
// write whole lines, at most PIPE_BUF bytes at a time, which the kernel
// never interleaves with another writer's.

// The reader takes what has gathered in the FIFO every fifoReadEvery, not at
// each worker's write: woken for every write (a dozen lines), the server spent
// 4.5 µs of CPU per request on its goroutine wake-ups alone. The FIFO is
// grown to fifoSize so that this long holds even 15 MB/s of lines (45,000
// requests a second) with room to spare; a worker whose write does not fit
// drops those lines and says so.
const (
	fifoReadEvery = 10 * time.Millisecond
	fifoSize      = 1 << 20 // the default /proc/sys/fs/pipe-max-size
)

// fifoDrainWait bounds how long closing waits for the workers' last lines:
// a process that inherited a worker's end of the FIFO (a child the handler
// forked) would otherwise hold it open forever.
const fifoDrainWait = 2 * time.Second

// DirectFIFO is the FIFO direct-mode workers write their lines to.
type DirectFIFO struct {
	Path string
	dir  string
	r    *os.File
	keep *os.File // the server's own writer: the reader sees no end while no worker has it open
	done chan struct{}
	// closing ends the reader's pauses: from Close on it reads until no writer is left
	closing chan struct{}
}

// OpenDirectFIFO makes a FIFO in a directory of its own under dir (mode
// 0700: no other user may write lines into the log) and copies what arrives
// on it into l.
func (l *AccessLog) OpenDirectFIFO(dir string) (*DirectFIFO, error) {
	d, err := os.MkdirTemp(dir, "ferry-access-")
	if err != nil {
		return nil, fmt.Errorf("access log pipe: %w", err)
	}
	f := &DirectFIFO{Path: filepath.Join(d, "access.fifo"), dir: d, done: make(chan struct{}), closing: make(chan struct{})}
	if err := syscall.Mkfifo(f.Path, 0o600); err != nil {
		os.RemoveAll(d)
		return nil, fmt.Errorf("access log pipe: %w", err)
	}
	// Non-blocking: opening the read end must not wait for a writer, and
	// the runtime's poller then serves its reads (and deadlines).
	if f.r, err = os.OpenFile(f.Path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
		f.keep, err = os.OpenFile(f.Path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	}
	if err != nil {
		if f.r != nil {
			f.r.Close()
		}
		os.RemoveAll(d)
		return nil, fmt.Errorf("access log pipe: %w", err)
	}
	if rc, err := f.r.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			unix.FcntlInt(fd, unix.F_SETPIPE_SZ, fifoSize) // a lower pipe-max-size leaves 64 KiB: fewer lines fit, no more
		})
	}
	go f.copy(l)
	return f, nil
}

func (f *DirectFIFO) copy(l *AccessLog) {
	defer close(f.done)
	buf := make([]byte, 64<<10)
	var j lineJoiner
	for {
		n, err := f.r.Read(buf)
		j.feed(buf[:n], l.writeLines)
		if err != nil {
			if errors.Is(err, io.EOF) {
				j.end(l.writeLines)
			}
			return
		}
		if n < len(buf) {
			select {
			case <-time.After(fifoReadEvery): // what is there now has been read: let more gather
			case <-f.closing:
			}
		}
	}
}

// lineJoiner hands on whole lines only, however the reads cut them.
type lineJoiner struct {
	part []byte // a line whose end has not been read yet
}

// feed passes the whole lines that b completes to emit.
func (j *lineJoiner) feed(b []byte, emit func([]byte)) {
	if len(j.part) > 0 {
		j.part = append(j.part, b...)
		b = j.part
	}
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		emit(b[:i+1])
		b = b[i+1:]
	}
	j.part = append(j.part[:0], b...)
}

// end passes on what is left once every writer has gone: a line cut short
// (whole writes rule it out) ends there, never glued to another's.
func (j *lineJoiner) end(emit func([]byte)) {
	if len(j.part) > 0 {
		emit(append(j.part, '\n'))
		j.part = j.part[:0]
	}
}

// Close reads the lines the workers (all gone by now) left in the FIFO and
// removes it. Call it before the log's own Close.
func (f *DirectFIFO) Close() error {
	close(f.closing)
	f.keep.Close()
	select {
	case <-f.done: // every writer closed its end: all read
	case <-time.After(fifoDrainWait):
		f.r.SetReadDeadline(time.Now())
		<-f.done
	}
	f.r.Close()
	return os.RemoveAll(f.dir)
}

// writeLines appends whole lines formatted elsewhere (a direct-mode worker).
func (l *AccessLog) writeLines(b []byte) {
	l.mu.Lock()
	l.buf = append(l.buf, b...)
	if len(l.buf) >= flushAt {
		l.flushLocked()
	}
	l.mu.Unlock()
}
