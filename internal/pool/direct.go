package pool

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/ferry-php/ferry/internal/relay"
)

// server.mode: direct, the pool's side: every worker inherits the listening
// socket of server.address and accepts on it itself (ext/ferry's event loop);
// the relay stays for control and for the jobs of the front's other
// listeners (TLS, HTTP/2). What a worker must do with it is in
// docs/protocol.md, "Direct mode".
const (
	// DirectFDEnv names the worker's descriptor of the listening socket.
	DirectFDEnv = "FERRY_DIRECT_FD"
	// DirectLimitsEnv carries the worker's limits, one JSON object (cmd/ferry
	// puts it in Settings.Env, since a reload may change max_jobs and the
	// number of workers its max_connections is split by).
	DirectLimitsEnv = "FERRY_DIRECT_LIMITS"
	// directFD is the socket's number in a worker: the first of ExtraFiles,
	// before the relay's pipes (which then are 4 and 5). A forked worker has
	// it at the same number as its zygote, which got it the same way.
	directFD = 3
)

// errNotDirect is a worker whose handshake did not say it serves direct: it
// would never accept a connection, and a pool of them would leave every
// client of server.address waiting in the accept queue.
var errNotDirect = errors.New(`server.mode: direct needs ext/ferry loaded in the workers: the worker answered the handshake without "direct":true, ` +
	"so it would not accept the connections of server.address (is ferry.so loaded, with pool.php.extension not off, " +
	"and does the script serve through HttpWorker?)")

// giveDirect hands the socket to a process the pool starts itself: a worker
// (exec) or a generation's zygote (fork), whose forked workers inherit it.
func (p *Pool) giveDirect(cmd *exec.Cmd) {
	if p.opt.Direct == nil {
		return
	}
	cmd.ExtraFiles = append([]*os.File{p.opt.Direct}, cmd.ExtraFiles...)
	cmd.Env = append(cmd.Env, DirectFDEnv+"="+strconv.Itoa(directFD))
}

// directForkEnv adds the direct-mode variables to what a forked worker sets
// before its handshake. It inherits them from its zygote already; they are
// given again so that a zygote whose boot took them out of its environment
// (as the SDK does with the relay's) cannot leave its workers without them.
func (p *Pool) directForkEnv(env map[string]string, set *Settings) {
	if p.opt.Direct == nil {
		return
	}
	env[DirectFDEnv] = strconv.Itoa(directFD)
	for _, kv := range set.Env {
		if v, ok := strings.CutPrefix(kv, DirectLimitsEnv+"="); ok {
			env[DirectLimitsEnv] = v
		}
	}
}

// checkDirect refuses, in direct mode, a worker that does not serve direct;
// the caller fails its boot as any failed boot is (it is killed, and a
// reload that meets it keeps the old generation).
func (w *Worker) checkDirect(conn *relay.Conn) error {
	if w.pool.opt.Direct == nil || conn.Direct {
		return nil
	}
	conn.Close()
	w.kill()
	select {
	case <-w.exited:
	case <-time.After(2 * time.Second):
	}
	return w.bootError(errNotDirect)
}

// servedDirect stands in, in direct mode, for the answered job that proves a
// worker can serve: the server sees none of the requests a worker serves
// itself, so one that died after a year of serving would count as a failed
// start, and its replacement, and every later one, would wait out a backoff
// that nothing ever reset (respawn_backoff.max each, soon). A worker that
// lived respawn_backoff.max is taken as proven instead: restarting it at
// once cannot spin faster than the backoff would have.
func (w *Worker) servedDirect() bool {
	return w.pool.opt.Direct != nil && time.Since(w.created) >= w.pool.opt.BackoffMax
}

// provenDirect ends a run of failed starts once a direct worker has lived
// respawn_backoff.max, as a first answer does in front mode.
func (p *Pool) provenDirect(w *Worker) {
	if p.opt.Direct == nil {
		return
	}
	time.AfterFunc(p.opt.BackoffMax, func() {
		select {
		case <-w.exited:
		default:
			p.healthy()
		}
	})
}
