package pool

import (
	"sync/atomic"
	"time"
)

// batchBudget is how much work, at the pool's measured time per job, one write
// may hand a sequential worker. The jobs in one write run one after another,
// so the last waits for all before it: with short jobs a batch of 32 costs
// microseconds and saves a write and a wakeup per job, but one slow job in a
// batch makes every job after it wait for it, a wait nginx + php-fpm (one
// shared queue, one request per process) never imposes. Past the budget, jobs
// wait in the pool's queue for the first worker to free up. The time per job
// is measured from the write to the answer, so under load it includes waiting
// for a CPU: a budget of a few milliseconds keeps light jobs batched whole
// (a 1 ms budget already split hello's batches, measurably slower) while jobs
// of several milliseconds, or a mix with slow ones, go one at a time.
const batchBudget = 5 * time.Millisecond

// depth is how many jobs one worker may hold, sent or held for it. A Fiber
// worker runs them all at once; a sequential one runs them in turn, so it is
// given no more than one write's worth: the rest wait in the pool's one queue,
// in arrival order, for whichever worker frees up first, as with php-fpm.
func (p *Pool) depth() int {
	if p.opt.Concurrent {
		return p.opt.Pipeline
	}
	return p.batchLimit()
}

// batchLimit is how many held jobs the next write to a sequential worker may
// carry: all of them up to the pipeline depth while jobs are short, one at a
// time once a job takes batchBudget or more on average.
func (p *Pool) batchLimit() int {
	per := p.jobNanos.Load()
	if per <= 0 {
		return p.opt.Pipeline
	}
	return int(min(max(int64(batchBudget)/per, 1), int64(p.opt.Pipeline)))
}

// observeBatch records the time a sequential worker took to answer a write of
// n jobs, from the write to its last answer, in a moving average per job that
// rises fast (half the way to a slower batch) and falls slowly (a sixteenth of
// the way to a faster one): one slow job among fast ones is enough to stop
// batching for a while, since it is the job every later one in a batch would
// wait for.
func (p *Pool) observeBatch(took time.Duration, n int) {
	if n <= 0 || took <= 0 {
		return
	}
	observeSlowFirst(&p.jobNanos, int64(took)/int64(n))
}

// observeSlowFirst moves the average in avg toward x: half the way up, a
// sixteenth of the way down.
func observeSlowFirst(avg *atomic.Int64, x int64) {
	for {
		old := avg.Load()
		next := x
		switch {
		case old <= 0:
		case x > old:
			next = old + (x-old)/2
		default:
			next = old - (old-x)/16
		}
		if avg.CompareAndSwap(old, next) {
			return
		}
	}
}

// BatchLimit is the number of jobs the next write to a sequential worker may
// carry, and JobTime the measured time per job it comes from (metrics).
func (p *Pool) BatchLimit() (int, time.Duration) {
	return p.depth(), time.Duration(p.jobNanos.Load())
}
