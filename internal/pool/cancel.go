package pool

import (
	"context"
	"time"
)

// cancelGrace is how long a Fiber worker has to end a job it was told to
// cancel for exec_ttl before it is killed, with the other jobs it runs.
const cancelGrace = time.Second

// Why a job is cancelled, as the STOP frame's payload tells the worker.
const (
	cancelExecTTL = "exec_ttl"
	cancelClient  = "client"
)

// cancelFibersLocked is the watchdog's look at a Fiber worker, which runs all
// its jobs at once, each timed from when it is written (ttl 0: no limit).
//
// It runs its other jobs while one overstays, so that one alone is
// cancelled: a STOP frame names it, the worker throws JobCancelled into its
// Fiber where it waits (a hooked socket, sleep(), the loop) and answers, and
// the answer is replaced by ErrExecTimeout. A job still held cancelGrace later
// (busy on the CPU, or blocked outside the loop) is killed with its worker, as
// in a sequential one.
//
// With CancelGone (pool.fiber_io), a job whose client has left is cancelled
// the same way (the worker skips it when the app set ignore_user_abort), but
// never killed for it: its answer goes nowhere either way. Without it, such a
// job runs to its end, as under FPM or RoadRunner: cancelling an app's waits
// where it never expected an exception is what the opt-in is for.
//
// Called with w.mu held; releases it.
func (w *Worker) cancelFibersLocked(now time.Time, ttl time.Duration) {
	var (
		expired []uint32
		asks    []clientAsk
		kill    bool
	)
	at := now.UnixNano()
	for _, j := range w.inflight.all(nil) {
		switch {
		case !j.sent:
		case j.seen == 0:
			j.seen = at
		case j.timedOut:
			kill = kill || at-j.cancelled >= int64(cancelGrace)
		case ttl > 0 && at-j.seen >= int64(ttl):
			j.timedOut, j.cancelled = true, at
			expired = append(expired, j.id)
		case w.pool.opt.CancelGone && !j.abandoned && j.client != nil && at-j.seen >= int64(goneEvery):
			asks = append(asks, clientAsk{j: j, id: j.id, client: j.client})
		}
	}
	if kill && !w.expired {
		w.expired = true
		w.kill()
		w.mu.Unlock()
		w.pool.log.Warn("a cancelled job did not end, killing worker", "pid", w.pid, "exec_ttl", ttl, "grace", cancelGrace)
		return
	}
	drain := false
	for _, id := range expired {
		drain = w.queueStopLocked(id, cancelExecTTL) || drain
	}
	w.mu.Unlock()
	for _, id := range expired {
		w.pool.log.Warn("job exceeded exec_ttl, cancelling it", "pid", w.pid, "job", id, "exec_ttl", ttl)
	}
	drain = w.cancelGone(asks) || drain
	if drain {
		go w.drain()
	}
}

// clientAsk is a running job whose client is to be asked whether it is still
// there, with what identified it under w.mu: once answered, the job (and the
// client's context, for a connection's next request) may be reused.
type clientAsk struct {
	j      *job
	id     uint32
	client context.Context
}

// cancelGone asks the clients without any lock (the gateway's Err peeks at
// the socket) and queues a cancel for each job whose client left and that is
// still the one asked about; true when the caller must start the write.
func (w *Worker) cancelGone(asks []clientAsk) bool {
	drain := false
	for _, a := range asks {
		if a.client.Err() == nil {
			continue
		}
		w.mu.Lock()
		if w.inflight.get(a.id) == a.j && a.j.client == a.client && !a.j.abandoned && !a.j.timedOut {
			a.j.abandoned = true
			drain = w.queueStopLocked(a.id, cancelClient) || drain
		}
		w.mu.Unlock()
	}
	return drain
}
