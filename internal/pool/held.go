package pool

import (
	"context"
	"slices"
	"time"
)

// goneEvery is how often the clients of jobs not yet written are looked at.
const goneEvery = 50 * time.Millisecond

// A job that waits for a worker, or is held for a busy one, is dropped when
// its client leaves (its ctx ends) before it is written. Its caller does not
// watch ctx itself: almost every job is written within microseconds, and a
// select on ctx.Done() per request costs more than that (for the gateway's
// contexts, a registration with its connection watcher too). Instead one
// goroutine, which runs only while jobs wait, asks the contexts of the jobs
// that have waited longer than goneEvery, every goneEvery.

// watchHeld makes sure the watch runs; called whenever a job is left waiting.
func (p *Pool) watchHeld() {
	p.scaleHint()
	if !p.heldWatch.Load() && p.heldWatch.CompareAndSwap(false, true) {
		go p.heldLoop()
	}
}

// waiting is a job seen waiting, with the context it had then: once it
// stops waiting its job (and its waiter) may be recycled for another one.
type waiting struct {
	wt     *waiter // in p.waitq, or nil
	w      *Worker // holding it unsent, or nil
	j      *job
	client context.Context
}

func (p *Pool) heldLoop() {
	t := time.NewTicker(goneEvery)
	defer t.Stop()
	var (
		ws  []*Worker
		old []waiting
	)
	for {
		var now time.Time
		select {
		case <-p.stopped:
			p.heldWatch.Store(false)
			return
		case now = <-t.C:
		}
		if !p.anyWaiting() {
			// A job left waiting after the flag is cleared starts another
			// loop; one left in between is seen by the second look.
			p.heldWatch.Store(false)
			if !p.anyWaiting() || !p.heldWatch.CompareAndSwap(false, true) {
				return
			}
		}
		cutoff := now.Add(-goneEvery)
		p.mu.Lock()
		ws = append(ws[:0], p.workers...)
		for _, wt := range p.waitq {
			if !wt.since.After(cutoff) {
				old = append(old, waiting{wt: wt, j: wt.j, client: wt.j.client})
			}
		}
		p.mu.Unlock()
		old = heldSince(old, ws, cutoff)
		// Asked without any lock: the gateway's Err peeks at the socket.
		for _, h := range old {
			if err := h.client.Err(); err != nil {
				p.dropGone(h, err)
			}
		}
		clear(old)
		old = old[:0]
	}
}

func (p *Pool) anyWaiting() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.waitq) > 0 || p.unsent.Load() > 0
}

// heldSince adds the jobs held unsent since before cutoff.
func heldSince(old []waiting, ws []*Worker, cutoff time.Time) []waiting {
	for _, w := range ws {
		w.mu.Lock()
		for _, j := range w.pending {
			if !j.start.After(cutoff) {
				old = append(old, waiting{w: w, j: j, client: j.client})
			}
		}
		w.mu.Unlock()
	}
	return old
}

// dropGone takes h's job out of the queue or off its worker and ends its wait
// with err, unless it moved on meanwhile (granted a worker, written, taken
// over by another worker) or is another request's job by now.
func (p *Pool) dropGone(h waiting, err error) {
	if h.wt != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		i := slices.Index(p.waitq, h.wt)
		if i < 0 || h.wt.j != h.j || h.j.client != h.client {
			return
		}
		p.waitq = slices.Delete(p.waitq, i, i+1)
		p.failWaiterLocked(h.wt, err)
		return
	}
	w := h.w
	w.mu.Lock()
	ok := slices.Contains(w.pending, h.j) && h.j.client == h.client && w.dropLocked(h.j)
	w.mu.Unlock()
	if ok {
		h.j.ch <- result{err: err}
	}
}
