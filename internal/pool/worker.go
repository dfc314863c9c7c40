package pool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ferry-php/ferry/internal/forkserver"
	"github.com/ferry-php/ferry/internal/frame"
	"github.com/ferry-php/ferry/internal/phplog"
	"github.com/ferry-php/ferry/internal/relay"
)

// Result is a worker's answer: the context part (options[0] bytes) and the body.
type Result struct {
	Context []byte
	Body    []byte
	// Stream is set when the worker streams its answer: this Result is the
	// first part, and the caller must read the rest or Stop it (stream.go).
	Stream *Stream
	Timing Timing
	spool  *spool // set when the head names a file in the worker's spool directory
}

type result struct {
	res  Result
	err  error
	more bool // a part of a streamed answer; others follow
}

// job is one unit of work, from Exec until its answer comes back.
type job struct {
	ch   chan result
	ctx  []byte // frame content, the caller's, read when the job is written
	body []byte
	w    *Worker // the worker holding it; moves only under the pool's lock

	start time.Time // when it began to wait, if it did not go straight to a worker
	wrote time.Time // written to the worker, under w.mu

	client context.Context // Exec's ctx: the held-job watch drops the job when it ends

	// On w, under w.mu.
	id        uint32
	sent      bool  // written: from then on the worker owns it
	seen      int64 // when the exec_ttl watchdog first saw it (Fiber mode), unix ns
	timedOut  bool
	cancelled int64 // when it was told to end for exec_ttl (Fiber mode), unix ns
	abandoned bool  // its client left and the worker was told (Fiber mode)

	streaming bool // it has sent answer parts, under w.mu
}

func (j *job) reset() {
	ch := j.ch
	*j = job{ch: ch}
}

var jobs = sync.Pool{New: func() any { return &job{ch: make(chan result, 1)} }}

// Worker is one PHP process. Scheduling fields (state, load, dispatched, idle*)
// belong to the pool's lock; the job table and write buffer to w.mu.
type Worker struct {
	pool    *Pool
	gen     int
	set     *Settings          // its generation's, never changed
	cmd     *exec.Cmd          // started by boot, unless Settings.Fork
	child   *forkserver.Child  // forked by its generation's zygote (Settings.Fork)
	zygote  *forkserver.Zygote // the one that forked it (refork.go), under the pool's lock
	conn    *relay.Conn
	pid     int
	created time.Time
	out     *phplog.Writer
	exited  chan struct{}
	spool   *spool // nil without Options.SpoolDir
	// What it serves itself in direct mode (directstats.go); nil otherwise. Set
	// by its boot while scrapes and the watchdog may already read it.
	stats atomic.Pointer[directStats]

	state      State
	load       int
	after      int // answers whose terminate hooks still run (finishing.go)
	dispatched int
	done       atomic.Uint64
	writes     atomic.Uint64 // relay writes; done/writes is the batching achieved
	idleMark   int           // dispatched when idleSince was last reset
	idleSince  time.Time
	reason     string // why it was retired (a Reason constant)

	mu       sync.Mutex
	inflight jobTable // jobs held, sent or not, by id
	pending  []*job   // not written yet, oldest first
	held     int      // bytes their frames will take
	extra    []byte   // control frames not written yet
	order    []uint32 // ids sent and not answered, in order, for sequential exec_ttl
	sent     int      // jobs written and not yet answered
	// busy: a Fiber worker that reports its waits ran CPU for the jobs last
	// written to it, as far as the pool knows: the next jobs are held until it
	// answers all but one or says it is waiting, then leave in one write.
	busy    bool
	spare   []byte
	writing bool
	dead    bool
	expired bool      // killed by the exec_ttl watchdog
	runFrom time.Time // when a sequential worker's oldest unanswered job started running
	inPipe  int       // bytes of the jobs sent and not answered: at most this much is unread
	quit    bool      // the worker answered a job with its refusal (Protocol.Stopped)
	// destroyed: killed because it still ran destroy_timeout after its
	// generation was replaced (dismissLocked).
	destroyed bool
	// streaming counts the jobs sending answer parts: a sequential worker
	// streaming may hold its job for as long as a client listens, so nothing
	// is sent ahead to wait behind it.
	streaming int
	// hooks mirrors after under w.mu: a sequential worker running terminate
	// hooks reads nothing until they end, so jobs for it stay held unless
	// hooks are measured short (prefetchDuringHooksLocked).
	hooks      int
	hooksSince time.Time // when they started, for exec_ttl

	unsent atomic.Int32 // len(pending), readable without w.mu when looking for jobs to take over
	// endStreams: it is retiring (its limits, or its generation replaced),
	// and a stream it starts is told to end at once (the pool-wide flag is
	// the drain's).
	endStreams atomic.Bool
	dismissed  atomic.Bool // a reload retired it: destroy_timeout applies

	// Owned by readLoop.
	answered   int       // answers received, errors included
	lastAnswer time.Time // when the latest batch of answers arrived

	// exec_ttl watchdog state: the job it last saw running on a sequential
	// worker and when it first saw it.
	watchID    uint32
	watchSince time.Time
}

func (p *Pool) newWorker(gen int, set *Settings) *Worker {
	w := &Worker{pool: p, gen: gen, set: set, created: time.Now(), exited: make(chan struct{})}
	w.out = phplog.New(p.log)
	cmd := exec.Command(set.Command[0], set.Command[1:]...)
	cmd.Dir = set.Dir
	cmd.Env = append(os.Environ(), set.Env...)
	// Both are log streams: the relay travels on descriptors of its own (the
	// "stdio" relay replaces Stdout with its pipe).
	cmd.Stdout, cmd.Stderr = w.out, w.out
	cmd.WaitDelay = time.Second
	// Own process group: a Ctrl-C in the terminal reaches the server, which then
	// stops workers gracefully, instead of killing them under in-flight jobs.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if !set.Fork {
		p.giveDirect(cmd) // a forked worker has it from its zygote
	}
	w.cmd = cmd
	return w
}

// boot starts the process and waits for the handshake.
func (w *Worker) boot() error {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	ctx, stop := context.WithTimeout(ctx, w.pool.opt.AllocateTimeout)
	defer stop()
	env := map[string]string{}
	if base := w.pool.opt.SpoolDir; base != "" {
		s, err := newSpool(base)
		if err != nil {
			return fmt.Errorf("worker spool directory: %w", err)
		}
		w.spool = s
		env[spoolEnv] = s.dir
		w.cmd.Env = append(w.cmd.Env, spoolEnv+"="+s.dir)
		if w.pool.opt.Direct != nil {
			st, path, err := newDirectStats(os.TempDir())
			if err != nil {
				return fmt.Errorf("worker stats page: %w", err)
			}
			w.stats.Store(st)
			env[DirectStatsEnv] = path
			w.cmd.Env = append(w.cmd.Env, DirectStatsEnv+"="+path)
		}
	}
	if w.set.Fork {
		conn, err := w.bootForked(ctx, cancel, env)
		if err != nil {
			if w.child != nil {
				w.child.Kill()
				select {
				case <-w.exited:
				case <-time.After(2 * time.Second):
				}
			}
			var zerr zygoteError
			if errors.As(err, &zerr) {
				return err // told in full, with what the zygote printed
			}
			return w.bootError(err)
		}
		if err := w.checkDirect(conn); err != nil {
			return err
		}
		w.conn = conn
		return nil
	}
	conn, err := w.pool.relay.Start(ctx, w.cmd, func() {
		pid := w.cmd.Process.Pid
		w.pool.mu.Lock() // Workers() lists starting workers too
		w.pid = pid
		w.pool.mu.Unlock()
		w.out.SetPID(pid)
		go func() {
			w.cmd.Wait()
			w.out.Close() // a last line without a newline is logged too
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
	if err := w.checkDirect(conn); err != nil {
		return err
	}
	w.conn = conn
	return nil
}

// bootError quotes what PHP printed, since that, not the transport symptom, is
// what the user needs to see: what it wrote on the relay instead of a frame,
// as printed rather than Go-quoted inside the reason, then its log output.
func (w *Worker) bootError(err error) error {
	w.out.Close()
	reason, said := err.Error(), w.out.Tail()
	var be *relay.BootError
	if errors.As(err, &be) && len(be.Output) > 0 {
		reason = be.Reason
		said = phplog.Printed(be.Output) + "\n" + said
	}
	if st := w.cmd.ProcessState; st != nil && st.Exited() &&
		(strings.HasPrefix(reason, "the worker exited or closed the relay") || strings.HasPrefix(reason, "the worker exited (")) {
		// Whether the relay's EOF or the exit is noticed first is a race, and
		// workers failing alike must read alike: the exit is the fact, and
		// its status follows in brackets.
		reason = "the worker exited before the handshake"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "worker %q failed to start: %s", strings.Join(w.set.Command, " "), reason)
	if st := w.exitStatus(); st != "" {
		b.WriteString(" [" + st + "]")
	}
	if w.ranToItsEnd() {
		b.WriteString(ranToItsEndHint(w.set.Command))
	}
	b.WriteString(missingScriptHint(said, w.cmd.Dir))
	if said = strings.TrimRight(said, "\n"); said != "" {
		b.WriteString("\nPHP said:\n" + said)
	}
	return errors.New(b.String())
}

// ranToItsEnd tells a script that finished normally before the handshake: it
// never started a worker loop, which is what a front controller that answers
// the one request of its environment and returns (Symfony's pre-runtime
// index.php) does. Its output is a page, and the transport symptom alone
// sent users looking in the wrong place.
func (w *Worker) ranToItsEnd() bool {
	st := w.cmd.ProcessState
	return st != nil && st.Exited() && st.ExitCode() == 0
}

func ranToItsEndHint(command []string) string {
	script := "the worker script"
	for _, a := range command {
		if strings.HasSuffix(a, ".php") {
			script = a
		}
	}
	return "; " + script + " ran to its end without serving Ferry's requests. A worker loops on them: " +
		"a front controller that handles the request itself and prints the page is not one. " +
		"Under Symfony it must return the kernel closure, `return function (array $context) { return new Kernel(...); };`, " +
		"run by Ferry\\Symfony\\Runtime (docs/symfony.md); a plain script must call HttpWorker::create()->run(...) (php/worker/README.md)"
}

// missingScriptHint says where PHP looked for a script given by a relative
// path: the workers run in pool.dir, not where ferry was started, so a path
// written from the shell's directory (`php path/to/ferry/...`) is not found,
// and PHP's message alone does not say from where it looked.
func missingScriptHint(said, dir string) string {
	_, script, ok := strings.Cut(said, "Could not open input file: ")
	script, _, _ = strings.Cut(script, "\n")
	if !ok || script == "" || filepath.IsAbs(script) {
		return ""
	}
	if dir == "" {
		dir, _ = os.Getwd()
	}
	return "; PHP looked for " + script + " in " + dir + ", where workers run (pool.dir, by default the config file's directory): " +
		"give the script's path from there, or an absolute one"
}

func (w *Worker) exitStatus() string {
	if w.child != nil {
		select {
		case <-w.child.Done():
			return w.child.Status()
		default:
			return ""
		}
	}
	if w.cmd.ProcessState == nil {
		return ""
	}
	return w.cmd.ProcessState.String()
}

func (w *Worker) kill() {
	if w.child != nil {
		w.child.Kill()
		return
	}
	if w.cmd.Process != nil {
		w.cmd.Process.Kill()
	}
}

// signal sends sig to the worker's process.
func (w *Worker) signal(sig syscall.Signal) {
	if w.child != nil {
		w.child.Signal(sig)
		return
	}
	if w.cmd.Process != nil {
		w.cmd.Process.Signal(sig)
	}
}

// stop asks the worker to exit after it has no jobs; SIGKILL after destroy_timeout.
func (w *Worker) stop() {
	w.mu.Lock()
	if !w.dead {
		w.extra = frame.Append(w.extra, frame.Control|frame.JSON, 0, nil, []byte(`{"stop":true}`))
		w.flushLocked()
	} else {
		w.mu.Unlock()
	}
	select {
	case <-w.exited:
	case <-time.After(w.set.DestroyTimeout):
		w.pool.log.Warn("worker ignored stop, killing", "pid", w.pid, "destroy_timeout", w.set.DestroyTimeout)
		w.kill()
	}
}

// rss reads the resident set size of a worker from /proc; 0 when unknown.
func rss(pid int) uint64 {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm")
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
