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
)

// Direct mode's workers serve HTTP themselves (docs/direct.md), so the
// server never sees their requests: each worker formats its own lines, as
// appendJSON and appendCombined do (ext/ferry/ferry_direct_log_fmt.c), and
// writes them to a FIFO the server reads into this log. A FIFO rather than a
// pipe handed down as a descriptor: every worker, a forked one too, opens it
// by its path, and the pool's descriptor numbering stays as it is. Workers
// write whole lines, at most PIPE_BUF bytes at a time, which the kernel
// never interleaves with another writer's.

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
}

// OpenDirectFIFO makes a FIFO in a directory of its own under dir (mode
// 0700: no other user may write lines into the log) and copies what arrives
// on it into l.
func (l *AccessLog) OpenDirectFIFO(dir string) (*DirectFIFO, error) {
	d, err := os.MkdirTemp(dir, "ferry-access-")
	if err != nil {
		return nil, fmt.Errorf("access log pipe: %w", err)
	}
	f := &DirectFIFO{Path: filepath.Join(d, "access.fifo"), dir: d, done: make(chan struct{})}
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
	go f.copy(l)
	return f, nil
}

func (f *DirectFIFO) copy(l *AccessLog) {
	defer close(f.done)
	buf := make([]byte, 64<<10)
	var part []byte // a line whose end has not been read yet
	for {
		n, err := f.r.Read(buf)
		if n > 0 {
			b := buf[:n]
			if len(part) > 0 {
				part = append(part, b...)
				b = part
			}
			if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
				l.writeLines(b[:i+1])
				b = b[i+1:]
			}
			part = append(part[:0], b...)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) || len(part) == 0 {
				return
			}
			// A writer died mid-line, which whole writes rule out: kept
			// as its own line, never glued to the next worker's.
			l.writeLines(append(part, '\n'))
			return
		}
	}
}

// Close reads the lines the workers (all gone by now) left in the FIFO and
// removes it. Call it before the log's own Close.
func (f *DirectFIFO) Close() error {
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
