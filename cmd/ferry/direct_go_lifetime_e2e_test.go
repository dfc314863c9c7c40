package main

import (
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// server.mode: direct: what ends a worker other than a reload or SIGTERM
// (direct_go_e2e_test.go has those, and the helpers).

var logTime = regexp.MustCompile(`(?m)^time=(\S+) level=\w+ msg="(worker died|worker ready)" pid=(\d+)`)

// kill -9 of a worker under load fails at most the connection it was
// serving: the others wait in the queue for the other worker. A worker that
// had served for respawn_backoff.max is replaced at once. Before, the server,
// which sees none of a direct worker's requests, took its death for a failed
// start and made its replacement wait out the backoff (3s here), and every
// later one longer, since nothing reset it.
func TestDirectKill9FailsOnlyItsConnectionAndRespawnsAtOnce(t *testing.T) {
	s := startFerry(t, directConfig("exec", 2, "  respawn_backoff: {min: 3s, max: 3s}\n"))
	started := time.Now()
	stop := make(chan struct{})
	ok, failed, _, wait := directLoad(s.host(), 4, stop)
	until(t, "answers", 10*time.Second, func() bool { return ok.Load() > 20 })
	until(t, "the workers to have served for respawn_backoff.max", 10*time.Second, func() bool {
		return time.Since(started) > 3500*time.Millisecond
	})
	victim := s.workers(t)[0].PID
	syscall.Kill(victim, syscall.SIGKILL)
	var died, ready time.Time
	until(t, "the replacement", 20*time.Second, func() bool {
		for _, m := range logTime.FindAllStringSubmatch(s.logText(), -1) {
			ts, _ := time.Parse(time.RFC3339Nano, m[1])
			switch {
			case m[2] == "worker died" && m[3] == strconv.Itoa(victim):
				died = ts
			case m[2] == "worker ready" && !died.IsZero() && ts.After(died):
				ready = ts
			}
		}
		return !ready.IsZero()
	})
	before := ok.Load()
	until(t, "answers after", 10*time.Second, func() bool { return ok.Load() > before+20 })
	close(stop)
	wait()
	if n := failed.Load(); n > 1 {
		t.Errorf("%d connections failed when one worker was killed, want at most the one it served", n)
	}
	if gap := ready.Sub(died); gap >= 3*time.Second {
		t.Errorf("the replacement of a worker that had served for long came %s after its death: the backoff of a failed start", gap)
	}
}

// ttl and max_memory retire a direct worker as a reload does: stop frame,
// drain, exit, replaced; no connection fails.
func TestDirectTTLRecyclesWithoutLoss(t *testing.T) {
	s := startFerry(t, directConfig("fork", 2, "  ttl: 400ms\n"))
	stop := make(chan struct{})
	ok, failed, pids, wait := directLoad(s.host(), 4, stop)
	until(t, "three generations of workers", 20*time.Second, func() bool {
		n := 0
		pids.Range(func(any, any) bool { n++; return true })
		return n >= 6
	})
	close(stop)
	wait()
	if n := failed.Load(); n != 0 {
		t.Errorf("%d connections failed (of %d) while ttl recycled the workers", n, ok.Load()+n)
	}
	if strings.Contains(s.logText(), "worker ignored stop") {
		t.Errorf("a worker did not exit on its stop frame:\n%s", s.logText())
	}
}
