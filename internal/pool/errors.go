package pool

import "errors"

// Errors a job can end with. The gateway maps them to HTTP statuses.
var (
	ErrCrashed     = errors.New("pool: the worker died while holding the job")
	ErrExecTimeout = errors.New("pool: the job exceeded exec_ttl; the worker was killed")
	ErrNoWorker    = errors.New("pool: no worker became free within allocate_timeout")
	ErrQueueFull   = errors.New("pool: the queue of jobs waiting for a worker is full")
	ErrClosed      = errors.New("pool: shut down")
)

// JobError is a job the worker reported as failed with an ERROR frame; the worker
// itself is fine and keeps serving.
type JobError struct{ Message string }

func (e *JobError) Error() string { return "worker error: " + e.Message }
