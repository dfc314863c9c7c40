package pool

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// Timing says where a job's time went, for metrics and the access log.
type Timing struct {
	// Wait is from Exec until PHP started on the job: waiting for a worker,
	// held for a busy one, or sitting in a sequential worker's pipe behind
	// the job it runs.
	Wait time.Duration
	// Run is PHP's time on the job, as seen from the server: from when PHP
	// could start on it (written to an idle worker, or the answer before it
	// arrived) to its answer.
	Run time.Duration
	PID int // the worker that answered
}

// Observer is told the timing of every answered job, on the worker's read
// loop: it must not block (a histogram's atomic Observe is the intended use).
type Observer interface {
	ObserveJob(Timing)
}

// timeJob splits a job's time at the moment PHP could start on it: its write,
// or for a sequential worker the previous answer if that came later.
func (w *Worker) timeJob(j *job, now time.Time) Timing {
	from := j.wrote
	if !w.pool.opt.Concurrent && w.lastAnswer.After(from) {
		from = w.lastAnswer
	}
	start := j.start
	if start.IsZero() { // written as soon as it arrived: its clock was not read
		start = j.wrote
	}
	t := Timing{Wait: from.Sub(start), Run: now.Sub(from), PID: w.pid}
	if o := w.pool.opt.Observer; o != nil {
		o.ObserveJob(t)
	}
	return t
}

// Retirement reasons, as counted in Stats.Restarts and shown by `ferry workers`.
const (
	ReasonCrash      = "crash"       // died while serving, not asked to
	ReasonBootFailed = "boot_failed" // never completed the handshake
	ReasonExecTTL    = "exec_ttl"    // killed by the exec_ttl watchdog
	ReasonMaxJobs    = "max_jobs"
	ReasonTTL        = "ttl"
	ReasonIdleTTL    = "idle_ttl"
	ReasonMaxMemory  = "max_memory"
	ReasonReload     = "reload"
	ReasonReloadFail = "reload_failed" // a new generation that did not fully boot
	ReasonAsked      = "worker_stop"   // the worker sent {"stop":true}
	ReasonShutdown   = "shutdown"
	ReasonRefork     = "refork" // forked before its generation's mold changed (refork.go)
	// ReasonScaleDown (scale.go) is one more.
)

// Retired is a worker that has exited, for `ferry workers`.
type Retired struct {
	PID     int
	Reason  string
	Jobs    uint64
	Started time.Time
	Ended   time.Time
}

// recentRetired bounds the list of retired workers kept for `ferry workers`.
const recentRetired = 16

// history is what outlives workers, under the pool's lock.
type history struct {
	jobs, writes uint64 // of the workers gone, so totals never go down
	restarts     map[string]uint64
	spawns       map[string]uint64 // workers started, by Spawn reason (scale.go)
	recent       []Retired         // oldest first
	// requests served in direct mode by the workers gone
	directRequests   uint64
	directLogDropped uint64
}

// endLocked records a worker that has exited.
func (p *Pool) endLocked(w *Worker, reason string) {
	h := &p.history
	if h.restarts == nil {
		h.restarts = map[string]uint64{}
	}
	h.restarts[reason]++
	h.jobs += w.done.Load()
	h.writes += w.writes.Load()
	if len(h.recent) == recentRetired {
		h.recent = append(h.recent[:0], h.recent[1:]...)
	}
	h.recent = append(h.recent, Retired{PID: w.pid, Reason: reason, Jobs: w.done.Load(), Started: w.created, Ended: time.Now()})
}

// Stats are the pool's counters since it started.
type Stats struct {
	Jobs     uint64            // answered, by every worker that ever ran
	Writes   uint64            // relay writes that carried them; Jobs/Writes is the batching achieved
	Restarts map[string]uint64 // workers that exited, by reason
	Spawns   map[string]uint64 // workers started, by Spawn reason
	Queued   int
	InFlight int
	Retired  []Retired // the latest, oldest first
	// Direct mode: requests the workers served themselves, and their connections open now.
	DirectRequests    uint64
	DirectConnections uint64
	DirectLogDropped  uint64 // access log lines the workers dropped, the server too slow to read them
}

// Stats reads the counters; the live workers' share is added to what the
// workers gone left.
func (p *Pool) Stats() Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	s := Stats{Jobs: p.history.jobs, Writes: p.history.writes, Restarts: make(map[string]uint64, len(p.history.restarts)),
		Queued: len(p.waitq) + int(p.unsent.Load()), Retired: append([]Retired(nil), p.history.recent...)}
	for k, v := range p.history.restarts {
		s.Restarts[k] = v
	}
	s.Spawns = make(map[string]uint64, len(p.history.spawns))
	for k, v := range p.history.spawns {
		s.Spawns[k] = v
	}
	s.DirectRequests = p.history.directRequests
	s.DirectLogDropped = p.history.directLogDropped
	for _, w := range p.workers {
		s.Jobs += w.done.Load()
		s.Writes += w.writes.Load()
		s.InFlight += w.load
		st := w.stats.Load()
		s.DirectRequests += st.word(statRequests)
		s.DirectConnections += st.word(statConnections)
		s.DirectLogDropped += st.word(statLogDropped)
	}
	return s
}

// cpuSeconds reads the user and system time a process has used from
// /proc/<pid>/stat; 0 when unknown.
func cpuSeconds(pid int) float64 {
	if pid == 0 {
		return 0
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces: fields count from
	// after its closing one. utime and stime are fields 14 and 15.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseUint(f[11], 10, 64)
	st, _ := strconv.ParseUint(f[12], 10, 64)
	const ticks = 100 // USER_HZ, fixed at 100 on Linux for userspace
	return float64(ut+st) / ticks
}

// reasonLabel turns the reason a retirement is logged with into its label.
func reasonLabel(why string) string {
	switch why {
	case "worker asked to stop":
		return ReasonAsked
	case "reload failed":
		return ReasonReloadFail
	}
	return why
}

// Accepting counts the workers that take jobs now, for health checks: unlike
// Workers it reads nothing from /proc.
func (p *Pool) Accepting() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, w := range p.workers {
		if w.state.accepts() {
			n++
		}
	}
	return n
}
