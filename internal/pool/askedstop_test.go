package pool

import (
	"log/slog"
	"testing"
)

// countMsg counts the records of h with message msg.
func countMsg(h *outRecs, msg string) int {
	n := 0
	for _, r := range h.All() {
		if r.Msg == msg {
			n++
		}
	}
	return n
}

// A worker that asks to stop, answers and exits at once (what one does after
// a PHP fatal error it answered 500) has stopped, not crashed: its exit may
// reach the pool before the answer's job has let go of it, and that race used
// to log "worker died" with the fatal message a second time.
func TestWorkerThatAskedToStopAndExitedIsNotACrash(t *testing.T) {
	log := &outRecs{}
	p := newPool(t, Options{NumWorkers: 1, Logger: slog.New(log)})
	for i := 0; i < 5; i++ {
		if out, err := run(t, p, "retireexit:x"); err != nil || out != "answered" {
			t.Fatalf("round %d: %q, %v", i, out, err)
		}
		waitFor(t, func() bool { return countMsg(log, "worker ready") >= i+2 }, "the replacement worker")
	}
	if n := countMsg(log, "worker died"); n != 0 {
		t.Fatalf("a worker that asked to stop was logged as a crash %d times: %+v", n, log.All())
	}
	if got := p.Stats().Restarts[ReasonCrash]; got != 0 {
		t.Fatalf("%d crash restarts counted", got)
	}
}
