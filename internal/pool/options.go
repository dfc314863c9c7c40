package pool

import (
	"log/slog"
	"os"
	"runtime"
	"time"

	"github.com/ferry-php/ferry/internal/protocol"
	"github.com/ferry-php/ferry/internal/protocol/ferryproto"
)

// Options configure a pool. Zero durations disable the limit they name, except
// AllocateTimeout and DestroyTimeout which get defaults.
type Options struct {
	Command         []string // argv of a worker
	Dir             string
	Env             []string // added to the server's environment
	Relay           string   // pipes, unix or tcp
	SocketDir       string   // where the unix relay socket lives
	NumWorkers      int      // 0: one per CPU
	MaxJobs         int      // retire a worker after this many jobs
	TTL             time.Duration
	IdleTTL         time.Duration
	MaxMemory       uint64 // bytes the worker owns (USS), RSS where unknown
	ExecTTL         time.Duration
	AllocateTimeout time.Duration
	DestroyTimeout  time.Duration
	QueueSize       int // jobs waiting for a free worker; beyond: ErrQueueFull
	// MaxWorkers > NumWorkers makes the pool elastic (scale.go): NumWorkers
	// is then its floor. 0: the pool stays at NumWorkers.
	MaxWorkers     int
	ScaleUpAfter   time.Duration // how long a job waits before one more worker starts
	ScaleDownAfter time.Duration // how long a worker above the floor idles before it retires
	Pipeline       int           // jobs in flight per worker
	Concurrent     bool          // workers run their jobs at once (Fiber mode), not in order
	CancelGone     bool          // Concurrent: a job whose client left is cancelled where it waits (pool.fiber_io)
	Fork           bool          // Settings.Fork
	ReforkAfter    int           // Settings.ReforkAfter
	MaxFrame       uint32
	BackoffMin     time.Duration
	BackoffMax     time.Duration
	Logger         *slog.Logger
	Observer       Observer // told every answered job's timing; nil: none
	// SpoolDir is where each worker gets a directory of its own, named to it
	// in FERRY_SPOOL_DIR and removed once it has exited (spool.go); "": none.
	SpoolDir string

	// Direct is server.mode: direct's listening socket (direct.go): every
	// worker gets it as fd 3, named in FERRY_DIRECT_FD, and must say
	// "direct":true in its handshake. nil: front mode. The pool never closes it.
	Direct *os.File

	// Protocol is the workers' (cmd/ferry picks it by pool.protocol): how
	// jobs, answers and stops are framed. nil: Ferry's own.
	Protocol protocol.Protocol
}

func (o *Options) defaults() {
	if o.Protocol == nil {
		o.Protocol = ferryproto.Protocol{}
	}
	if o.NumWorkers <= 0 {
		o.NumWorkers = runtime.NumCPU()
	}
	if o.AllocateTimeout <= 0 {
		o.AllocateTimeout = time.Minute
	}
	if o.DestroyTimeout <= 0 {
		o.DestroyTimeout = 5 * time.Second
	}
	if o.Pipeline <= 0 {
		o.Pipeline = 1
	}
	// A worker's job table numbers its slots in 16 bits (jobtable.go).
	o.Pipeline = min(o.Pipeline, 1<<slotBits-1)
	if o.QueueSize <= 0 {
		o.QueueSize = 1024
	}
	if o.MaxFrame == 0 {
		o.MaxFrame = 64 << 20
	}
	if o.BackoffMin <= 0 {
		o.BackoffMin = 100 * time.Millisecond
	}
	if o.BackoffMax < o.BackoffMin {
		o.BackoffMax = 5 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o.scaleDefaults()
}

// Settings are the Options a reload may change (ReloadWith). They belong to a
// generation: a worker keeps its generation's for life, so the old workers
// finish under the limits they were started with while the new ones boot
// with the new command, environment and limits.
type Settings struct {
	Command        []string
	Dir            string
	Env            []string
	NumWorkers     int
	MaxWorkers     int // elastic above NumWorkers; at or below it: fixed
	ScaleUpAfter   time.Duration
	ScaleDownAfter time.Duration
	MaxJobs        int
	TTL            time.Duration
	IdleTTL        time.Duration
	MaxMemory      uint64
	ExecTTL        time.Duration
	DestroyTimeout time.Duration
	// Fork: a zygote boots the command once per generation and forks the
	// workers (fork.go); needs the pipes relay and Ferry's protocol.
	Fork bool
	// ReforkAfter: once the generation served this many jobs, a warm
	// worker becomes its mold (refork.go); 0: never.
	ReforkAfter int
}

// Settings is the reloadable part of o.
func (o Options) Settings() Settings {
	return Settings{
		Command: o.Command, Dir: o.Dir, Env: o.Env, NumWorkers: o.NumWorkers, MaxJobs: o.MaxJobs,
		MaxWorkers: o.MaxWorkers, ScaleUpAfter: o.ScaleUpAfter, ScaleDownAfter: o.ScaleDownAfter,
		TTL: o.TTL, IdleTTL: o.IdleTTL, MaxMemory: o.MaxMemory, ExecTTL: o.ExecTTL, DestroyTimeout: o.DestroyTimeout,
		Fork: o.Fork, ReforkAfter: o.ReforkAfter,
	}
}

func (s *Settings) defaults() {
	if s.NumWorkers <= 0 {
		s.NumWorkers = runtime.NumCPU()
	}
	if s.DestroyTimeout <= 0 {
		s.DestroyTimeout = 5 * time.Second
	}
	s.ScaleUpAfter, s.ScaleDownAfter = scaleDurations(s.ScaleUpAfter, s.ScaleDownAfter)
}
