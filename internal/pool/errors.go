package pool

import "errors"

// Errors a job can end with. The gateway maps them to HTTP statuses.
var (
	ErrCrashed     = errors.New("pool: the worker died while holding the job")
	ErrExecTimeout = errors.New("pool: the job exceeded exec_ttl")
	ErrNoWorker    = errors.New("pool: no worker became free within allocate_timeout")
	ErrQueueFull   = errors.New("pool: the queue of jobs waiting for a worker is full")
	ErrClosed      = errors.New("pool: shut down")

	// errUnsent: the worker died before the job was written to it; Exec
	// retries such a job on another worker.
	errUnsent = errors.New("pool: the worker died before receiving the job")
)

// JobError is a job the worker reported as failed with an ERROR frame; the worker
// itself is fine and keeps serving.
type JobError struct{ Message string }

func (e *JobError) Error() string { return "worker error: " + e.Message }
