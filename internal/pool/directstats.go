package pool

import (
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// DirectStatsEnv names the file a direct-mode worker maps and writes what it
// serves to (docs/protocol.md, "Direct mode"): the server sees none of those
// requests, and reads there what exec_ttl, the metrics and `ferry workers` need.
const DirectStatsEnv = "FERRY_DIRECT_STATS"

// The page's 64-bit words, each written by one side alone: the worker
// (ext/ferry/ferry_direct.c) but statExpire, the server's.
const (
	statRequests    = iota // requests served
	statBusySince          // wall-clock ms at which the running request started, 0 between requests
	statConnections        // connections open
	statAccepted           // connections accepted
	statExpire             // the busySince of the request the server ends for exec_ttl (ferry_direct_ttl.c)
	statLogDropped         // access log lines dropped: the server did not read them in time
	statWords
)

// expireSignal asks a direct-mode worker to answer its running request 504 and
// exit: the server cannot answer a client it never saw. Not one of the signals
// PHP's own handling takes over (zend_signal) or an app is likely to use.
const expireSignal = syscall.SIGXCPU

// expireGrace is how long a worker told to end has before SIGKILL: its
// handler writes one small answer and exits, unless the request's own code
// holds the signal off (a handler of the app's, a blocked signal).
const expireGrace = time.Second

// directStats is the server's mapping of one worker's page, a file
// in the system's temp directory (server.uploads.dir holds only what the
// workers spool), removed once the worker has exited.
type directStats struct {
	mu   sync.RWMutex // close() against the readers on other goroutines (watchdog, metrics)
	mem  []byte
	path string
}

func newDirectStats(dir string) (*directStats, string, error) {
	f, err := os.CreateTemp(dir, "ferry-direct-stats-")
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	if err := f.Truncate(statWords * 8); err != nil {
		os.Remove(f.Name())
		return nil, "", err
	}
	mem, err := syscall.Mmap(int(f.Fd()), 0, statWords*8, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		os.Remove(f.Name())
		return nil, "", err
	}
	return &directStats{mem: mem, path: f.Name()}, f.Name(), nil
}

// word reads one word of the page; 0 once it is closed (or for no page).
func (s *directStats) word(i int) uint64 {
	if s == nil {
		return 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.mem == nil {
		return 0
	}
	// Aligned by mmap; the worker stores whole words, so a load never sees half of one.
	return atomic.LoadUint64((*uint64)(unsafe.Pointer(&s.mem[i*8])))
}

// expire writes the busySince value of the request the server is ending.
func (s *directStats) expire(ms uint64) {
	s.mu.RLock() // the page's lifetime; the word itself is the server's alone
	defer s.mu.RUnlock()
	if s.mem != nil {
		atomic.StoreUint64((*uint64)(unsafe.Pointer(&s.mem[statExpire*8])), ms)
	}
}

// busySince is when the request the worker runs started; zero between requests.
func (s *directStats) busySince() time.Time {
	ms := s.word(statBusySince)
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(int64(ms))
}

func (s *directStats) close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mem != nil {
		syscall.Munmap(s.mem)
		s.mem = nil
		os.Remove(s.path)
	}
}

// directGone keeps what an exited direct-mode worker served in the pool's
// totals, and lets go of its page.
func (p *Pool) directGone(w *Worker) {
	st := w.stats.Load()
	if st == nil {
		return
	}
	// Both under the pool's lock, which Stats holds: a scrape never counts them twice, nor not at all.
	p.mu.Lock()
	defer p.mu.Unlock()
	p.history.directRequests += st.word(statRequests)
	p.history.directLogDropped += st.word(statLogDropped)
	st.close()
}

// enforceDirect kills w when the request it serves itself has run for ttl,
// as enforce does for a job the pool sent it.
func (w *Worker) enforceDirect(now time.Time, ttl time.Duration) {
	st := w.stats.Load()
	if st == nil {
		return
	}
	since := st.busySince()
	if since.IsZero() || now.Sub(since) < ttl {
		return
	}
	w.mu.Lock()
	if w.expired {
		w.mu.Unlock()
		return
	}
	w.expired = true
	// Its handler answers the client 504, as the front does, if that request
	// is still the one running and nothing of its answer has been written.
	st.expire(uint64(since.UnixMilli()))
	w.signal(expireSignal)
	w.mu.Unlock()
	w.pool.log.Warn("request exceeded exec_ttl, killing worker", "pid", w.pid, "exec_ttl", ttl)
	go func() {
		select {
		case <-w.exited:
		case <-time.After(expireGrace):
			w.mu.Lock()
			w.kill()
			w.mu.Unlock()
		}
	}()
}
