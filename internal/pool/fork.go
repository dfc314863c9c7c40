package pool

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ferry-php/ferry/internal/forkserver"
	"github.com/ferry-php/ferry/internal/phplog"
	"github.com/ferry-php/ferry/internal/relay"
)

// zygotes holds each generation's zygote (Settings.Fork): the process that
// booted that generation's code and forks its workers.
type zygotes struct {
	mu    sync.Mutex
	byGen map[int]*zslot
}

// zygoteError is a zygote's failed boot, told in full.
type zygoteError struct{ error }

type zslot struct {
	z      *forkserver.Zygote
	status func() string   // how its process exited, once Dead is closed
	exited <-chan struct{} // closed once its process has exited
	ready  chan struct{}   // closed once z or err is set
	err    error
}

// zygoteFor returns gen's zygote, starting one when none runs (the first
// worker of a generation, or the one after its zygote died). Workers booting
// together wait for the same start, so a zygote that cannot boot fails them
// alike.
func (p *Pool) zygoteFor(ctx context.Context, gen int, set *Settings) (*forkserver.Zygote, error) {
	p.zyg.mu.Lock()
	if p.zyg.byGen == nil {
		p.zyg.byGen = map[int]*zslot{}
	}
	s := p.zyg.byGen[gen]
	if s != nil {
		p.zyg.mu.Unlock()
		<-s.ready
		if s.err != nil {
			return nil, s.err
		}
		select {
		case <-s.z.Dead():
			p.zyg.mu.Lock()
			if p.zyg.byGen[gen] == s {
				delete(p.zyg.byGen, gen)
			}
			p.zyg.mu.Unlock()
			return p.zygoteFor(ctx, gen, set)
		default:
			return s.z, nil
		}
	}
	s = &zslot{ready: make(chan struct{})}
	p.zyg.byGen[gen] = s
	p.zyg.mu.Unlock()

	s.z, s.status, s.exited, s.err = p.startZygote(ctx, set)
	if s.err != nil {
		p.zyg.mu.Lock()
		delete(p.zyg.byGen, gen)
		p.zyg.mu.Unlock()
	} else {
		go p.watchZygote(gen, s, s.z)
	}
	close(s.ready)
	return s.z, s.err
}

// watchZygote logs a zygote that went while its generation was serving. Its
// workers live on; the next one needed starts a new zygote.
func (p *Pool) watchZygote(gen int, s *zslot, z *forkserver.Zygote) {
	<-z.Dead()
	p.mu.Lock()
	current := gen == p.gen && !p.stopping
	p.mu.Unlock()
	p.zyg.mu.Lock()
	replaced := s.z != z // a refork's mold took its place, and closed it
	status := s.status
	p.zyg.mu.Unlock()
	if current && !replaced {
		p.log.Error("zygote exited; its workers go on serving, and the next worker needed starts a new one", "pid", z.PID(), "status", status())
	}
}

// waitZygotes closes every zygote and waits until their processes have
// exited, so that a shutdown leaves no PHP process behind; one that does not
// go within d is killed.
func (p *Pool) waitZygotes(d time.Duration) {
	p.zyg.mu.Lock()
	var slots []*zslot
	for gen, s := range p.zyg.byGen {
		slots = append(slots, s)
		delete(p.zyg.byGen, gen)
	}
	p.zyg.mu.Unlock()
	for _, s := range slots {
		select {
		case <-s.ready: // one still booting is let finish, bounded by allocate_timeout
		case <-time.After(p.opt.AllocateTimeout):
			continue
		}
		if s.z == nil {
			continue
		}
		s.z.Close()
		select {
		case <-s.exited:
		case <-time.After(d):
			s.z.Kill()
			<-s.exited
		}
	}
}

// closeZygotesLocked lets the zygotes of generations that have no worker
// left exit; a stopping pool's are waitZygotes' to close.
func (p *Pool) closeZygotesLocked() {
	p.zyg.mu.Lock()
	defer p.zyg.mu.Unlock()
	for gen, s := range p.zyg.byGen {
		if p.stopping || gen >= p.gen || p.hasGenLocked(gen) {
			continue
		}
		select {
		case <-s.ready:
			if s.z != nil {
				s.z.Close()
			}
			delete(p.zyg.byGen, gen)
		default: // still booting: bootZygote's caller sees the pool stopping
		}
	}
}

func (p *Pool) hasGenLocked(gen int) bool {
	for _, w := range p.workers {
		if w.gen == gen {
			return true
		}
	}
	return false
}

// startZygote runs the worker command as a zygote (forkserver) and waits
// until it has booted the application.
func (p *Pool) startZygote(ctx context.Context, set *Settings) (*forkserver.Zygote, func() string, <-chan struct{}, error) {
	out := phplog.New(p.log)
	logW, copied, err := logPipe(out)
	if err != nil {
		return nil, nil, nil, err
	}
	defer logW.Close() // the zygote has its own copy once started
	cmd := exec.Command(set.Command[0], set.Command[1:]...)
	cmd.Dir = set.Dir
	cmd.Env = append(os.Environ(), set.Env...)
	cmd.Stdout, cmd.Stderr = logW, logW
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	p.giveDirect(cmd) // its forked workers inherit the socket at the same number
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	exited := make(chan struct{})
	started := time.Now()
	z, err := forkserver.Start(ctx, cmd, p.opt.SocketDir, func(pid int) {
		out.SetPID(pid)
		go func() {
			cmd.Wait()
			select { // what it printed last (a failed boot's error), unless its workers hold the pipe
			case <-copied:
			case <-time.After(time.Second):
			}
			out.Close()
			close(exited)
			cancel(errors.New("the zygote exited (" + cmd.ProcessState.String() + ")"))
		}()
	})
	if err != nil {
		if cmd.Process != nil {
			cmd.Process.Kill()
			select {
			case <-exited:
			case <-time.After(2 * time.Second):
			}
		}
		return nil, nil, nil, zygoteError{zygoteBootError(set, cmd, err, out)}
	}
	p.log.Info("zygote ready", "pid", z.PID(), "boot", time.Since(started).Round(time.Millisecond))
	status := func() string {
		select {
		case <-exited:
			return cmd.ProcessState.String()
		case <-time.After(time.Second):
			return "closed its socket"
		}
	}
	return z, status, exited, nil
}

// logPipe returns the write end of a pipe whose lines go to out, and a
// channel closed once every process holding it has closed it. Forked
// processes inherit their parent's output: a zygote's workers without FFI
// write to its stdout, a refork's mold to its worker's. So the pipe is read
// until the last of them is gone, never closed under them when the process
// it was made for exits (their lines would be lost).
func logPipe(out io.Writer) (*os.File, <-chan struct{}, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	copied := make(chan struct{})
	go func() {
		io.Copy(out, r)
		r.Close()
		close(copied)
	}()
	return w, copied, nil
}

// zygoteBootError reads as a worker's failed start does (worker.go), since
// the zygote runs the same script up to the same point.
func zygoteBootError(set *Settings, cmd *exec.Cmd, err error, out *phplog.Writer) error {
	out.Close()
	var b strings.Builder
	fmt.Fprintf(&b, "worker %q failed to start: %s", strings.Join(set.Command, " "), err)
	st := cmd.ProcessState
	if st != nil {
		b.WriteString(" [" + st.String() + "]")
		if st.Exited() && st.ExitCode() == 0 {
			b.WriteString(ranToItsEndHint(set.Command))
		}
	}
	said := out.Tail()
	b.WriteString(missingScriptHint(said, cmd.Dir))
	if said = strings.TrimRight(said, "\n"); said != "" {
		b.WriteString("\nPHP said:\n" + said)
	}
	return errors.New(b.String())
}

// bootForked has w forked by its generation's zygote and waits for its
// handshake, as boot does for a worker it starts itself.
func (w *Worker) bootForked(ctx context.Context, cancel context.CancelCauseFunc, env map[string]string) (*relay.Conn, error) {
	z, err := w.pool.zygoteFor(ctx, w.gen, w.set)
	if err != nil {
		return nil, err
	}
	w.pool.directForkEnv(env, w.set)
	return relay.StartForked(ctx, w.pool.opt.MaxFrame, z.Token(), func(jobs, answers *os.File) error {
		logW, copied, err := logPipe(w.out)
		if err != nil {
			return err
		}
		c, err := z.Fork(ctx, []*os.File{jobs, answers, logW}, env)
		logW.Close()
		if err != nil {
			return err
		}
		w.pool.mu.Lock() // Workers() lists starting workers too
		w.child, w.pid, w.zygote = c, c.PID, z
		w.pool.mu.Unlock()
		w.out.SetPID(c.PID)
		go func() {
			<-c.Done()
			select { // its last lines, unless something it left holds the pipe
			case <-copied:
			case <-time.After(time.Second):
			}
			w.out.Close()
			close(w.exited)
			cancel(errors.New("the worker exited (" + c.Status() + ")"))
		}()
		return nil
	})
}
