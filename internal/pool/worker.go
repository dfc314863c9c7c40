package pool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ferry-php/ferry/internal/frame"
	"github.com/ferry-php/ferry/internal/relay"
)

// Result is a worker's answer: the context part (options[0] bytes) and the body.
type Result struct {
	Context []byte
	Body    []byte
}

type result struct {
	res Result
	err error
}

// job is one unit of work held by a worker until its answer comes back.
type job struct {
	ch       chan result
	seen     int64 // when the exec_ttl watchdog first saw it (Fiber mode), unix ns
	timedOut atomic.Bool
}

var jobs = sync.Pool{New: func() any { return &job{ch: make(chan result, 1)} }}

// Worker is one PHP process. Scheduling fields (state, load, dispatched, idle*)
// belong to the pool's lock; the job table and write buffer to w.mu.
type Worker struct {
	pool    *Pool
	gen     int
	cmd     *exec.Cmd
	conn    *relay.Conn
	pid     int
	created time.Time
	out     *lineLog
	exited  chan struct{}

	state      State
	load       int
	dispatched int
	done       atomic.Uint64
	writes     atomic.Uint64 // relay writes; done/writes is the batching achieved
	idleMark   int           // dispatched when idleSince was last reset
	idleSince  time.Time

	mu       sync.Mutex
	inflight map[uint32]*job
	order    []uint32 // job ids in submission order, for sequential exec_ttl
	nextID   uint32
	pending  []byte // frames not yet written
	queued   int    // jobs in pending
	firstQ   uint32 // id of the first job in pending: ids firstQ..nextID are unsent
	sent     int    // jobs written and not yet answered
	spare    []byte
	writing  bool
	dead     bool

	// exec_ttl watchdog state: the job it last saw running on a sequential
	// worker and when it first saw it.
	watchID    uint32
	watchSince time.Time
}

func (p *Pool) newWorker(gen int) *Worker {
	w := &Worker{pool: p, gen: gen, created: time.Now(), exited: make(chan struct{}), inflight: map[uint32]*job{}}
	w.out = &lineLog{log: p.log}
	cmd := exec.Command(p.opt.Command[0], p.opt.Command[1:]...)
	cmd.Dir = p.opt.Dir
	cmd.Env = append(os.Environ(), p.opt.Env...)
	cmd.Stderr = w.out
	cmd.WaitDelay = time.Second
	// Own process group: a Ctrl-C in the terminal reaches the server, which then
	// stops workers gracefully, instead of killing them under in-flight jobs.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	w.cmd = cmd
	return w
}

// boot starts the process and waits for the handshake.
func (w *Worker) boot() error {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	ctx, stop := context.WithTimeout(ctx, w.pool.opt.AllocateTimeout)
	defer stop()
	conn, err := w.pool.relay.Start(ctx, w.cmd, func() {
		pid := w.cmd.Process.Pid
		w.pool.mu.Lock() // Workers() lists starting workers too
		w.pid = pid
		w.pool.mu.Unlock()
		w.out.setPID(pid)
		go func() {
			w.cmd.Wait()
			close(w.exited)
			cancel(errors.New("the worker exited (" + w.exitStatus() + ")"))
		}()
	})
	if err != nil {
		if w.cmd.Process != nil {
			w.cmd.Process.Kill()
			select {
			case <-w.exited:
			case <-time.After(2 * time.Second):
			}
		}
		return w.bootError(err)
	}
	w.conn = conn
	return nil
}

// bootError quotes what PHP printed, since that, not the transport symptom, is
// what the user needs to see.
func (w *Worker) bootError(err error) error {
	var b strings.Builder
	fmt.Fprintf(&b, "worker %q failed to start: %v", strings.Join(w.pool.opt.Command, " "), err)
	if st := w.exitStatus(); st != "" {
		b.WriteString(" [" + st + "]")
	}
	if tail := w.out.tail(); tail != "" {
		b.WriteString("\nPHP said:\n" + tail)
	}
	return errors.New(b.String())
}

func (w *Worker) exitStatus() string {
	if w.cmd.ProcessState == nil {
		return ""
	}
	return w.cmd.ProcessState.String()
}

// submit queues a job frame. A sequential worker that is busy does not read
// until it has answered what it holds, so its frames wait here and leave in one
// write when its answers arrive (see readLoop): one pipe write and one wakeup
// per batch instead of one per job. An idle worker, or a Fiber worker that reads
// while it runs jobs, gets the frame now. Only one goroutine writes at a time;
// frames queued meanwhile go out with its next write.
func (w *Worker) submit(j *job, ctx, body []byte) error {
	w.mu.Lock()
	if w.dead {
		w.mu.Unlock()
		return errUnsent
	}
	w.nextID++
	if w.nextID == 0 { // 0 means "none" to the watchdog
		w.nextID++
	}
	id := w.nextID
	w.inflight[id] = j
	w.pending = frame.Append(w.pending, frame.CodecRaw, 0, []uint32{uint32(len(ctx)), id}, ctx, body)
	if w.queued == 0 {
		w.firstQ = id
	}
	w.queued++
	if w.pool.opt.ExecTTL > 0 && !w.pool.opt.Concurrent {
		w.order = append(w.order, id)
	}
	if w.sent > 0 && !w.pool.opt.Concurrent {
		w.mu.Unlock()
		return nil
	}
	w.flushLocked()
	return nil
}

// unsentLocked tells whether job id is still in pending: the worker never saw
// it, so it can run elsewhere. Ids grow by one per job (mod 2^32).
func (w *Worker) unsentLocked(id uint32) bool {
	return w.queued > 0 && id-w.firstQ <= w.nextID-w.firstQ
}

// answeredLocked drops id from the submission order, which tells the exec_ttl
// watchdog which job a sequential worker runs now.
func (w *Worker) answeredLocked(id uint32) {
	w.sent--
	for i, x := range w.order {
		if x == id {
			w.order = append(w.order[:i], w.order[i+1:]...)
			return
		}
	}
}

// flushLocked is entered with w.mu held and returns with it released.
func (w *Worker) flushLocked() {
	if w.writing {
		w.mu.Unlock()
		return
	}
	w.writing = true
	w.writeLocked()
}

// smallWrite never blocks on an empty pipe: a pipe holds at least a page.
const smallWrite = 4096

// drain writes what is pending on behalf of readLoop, which set w.writing.
func (w *Worker) drain() {
	w.mu.Lock()
	w.writeLocked()
}

// writeLocked writes until nothing is pending; the caller holds w.mu and the
// writing flag, and both are released on return.
func (w *Worker) writeLocked() {
	for len(w.pending) > 0 {
		if !w.writeOnceLocked() {
			return
		}
	}
	w.writing = false
	w.mu.Unlock()
}

// writeOnceLocked writes what is pending now and reports whether w.mu is held
// again; on a failed write it is not and the worker is being killed.
func (w *Worker) writeOnceLocked() bool {
	buf := w.pending
	w.pending = w.spare[:0]
	w.sent += w.queued
	w.queued = 0
	w.mu.Unlock()
	w.writes.Add(1)
	err := w.conn.Write(buf)
	w.mu.Lock()
	if cap(buf) <= 1<<20 {
		w.spare = buf[:0]
	}
	if err != nil {
		w.pending = w.pending[:0]
		w.writing = false
		w.mu.Unlock()
		w.kill() // the reader sees EOF and fails the jobs
		return false
	}
	return true
}

// expire kills a worker whose job outlived exec_ttl: PHP cannot be interrupted
// mid-statement from outside, so the process is the unit of cancellation.
func (w *Worker) expire(id uint32) {
	w.mu.Lock()
	j := w.inflight[id]
	w.mu.Unlock()
	if j == nil || j.timedOut.Swap(true) {
		return
	}
	w.pool.log.Warn("job exceeded exec_ttl, killing worker", "pid", w.pid, "exec_ttl", w.pool.opt.ExecTTL)
	w.kill()
}

func (w *Worker) kill() {
	if w.cmd.Process != nil {
		w.cmd.Process.Kill()
	}
}

// stop asks the worker to exit after it has no jobs; SIGKILL after destroy_timeout.
func (w *Worker) stop() {
	w.mu.Lock()
	if !w.dead {
		w.pending = frame.Append(w.pending, frame.Control|frame.JSON, 0, nil, []byte(`{"stop":true}`))
		w.flushLocked()
	} else {
		w.mu.Unlock()
	}
	select {
	case <-w.exited:
	case <-time.After(w.pool.opt.DestroyTimeout):
		w.pool.log.Warn("worker ignored stop, killing", "pid", w.pid, "destroy_timeout", w.pool.opt.DestroyTimeout)
		w.kill()
	}
}

// rss reads the resident set size from /proc; 0 when unknown.
func (w *Worker) rss() uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(w.pid) + "/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseUint(f[1], 10, 64)
	return pages * uint64(os.Getpagesize())
}
