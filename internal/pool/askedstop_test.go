package pool

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// lockedBuffer is a log destination the pool's goroutines may write at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// A worker that asks to stop, answers and exits at once (what one does after
// a PHP fatal error it answered 500) has stopped, not crashed: its exit may
// reach the pool before the answer's job has let go of it, and that race used
// to log "worker died" with the fatal message a second time.
func TestWorkerThatAskedToStopAndExitedIsNotACrash(t *testing.T) {
	var log lockedBuffer
	p := newPool(t, Options{NumWorkers: 1, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	for i := 0; i < 5; i++ {
		if out, err := run(t, p, "retireexit:x"); err != nil || out != "answered" {
			t.Fatalf("round %d: %q, %v", i, out, err)
		}
		waitFor(t, func() bool { return strings.Count(log.String(), "worker ready") >= i+2 }, "the replacement worker")
	}
	if strings.Contains(log.String(), "worker died") {
		t.Fatalf("a worker that asked to stop was logged as a crash:\n%s", log.String())
	}
	if got := p.Stats().Restarts[ReasonCrash]; got != 0 {
		t.Fatalf("%d crash restarts counted", got)
	}
}
