package main

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ferry-php/ferry/internal/pool"
)

// watchPool polls `GET /workers` on the admin socket until stopped, and keeps
// the most live workers (starting, ready or working) it saw, and the latest.
type watchPool struct {
	most, now atomic.Int64
	stop      chan struct{}
	done      sync.WaitGroup
}

func watchWorkers(t *testing.T, s *server) *watchPool {
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", s.admin)
		}}}
	w := &watchPool{stop: make(chan struct{})}
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		for {
			select {
			case <-w.stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
			resp, err := c.Get("http://ferry/workers")
			if err != nil {
				continue // the server is stopping
			}
			var ws []pool.Info
			err = json.NewDecoder(resp.Body).Decode(&ws)
			resp.Body.Close()
			if err != nil {
				continue
			}
			n := int64(0)
			for _, x := range ws {
				if x.State == "starting" || x.State == "ready" || x.State == "working" {
					n++
				}
			}
			w.now.Store(n)
			if n > w.most.Load() {
				w.most.Store(n)
			}
		}
	}()
	t.Cleanup(w.end)
	return w
}

func (w *watchPool) end() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	w.done.Wait()
}

// holdAll sends n requests that each hold a worker until gate exists, and
// returns the pids that answered them once they have.
func holdAll(t *testing.T, s *server, gate string, n int) (wait func() map[string]int) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	pids := map[string]int{}
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := client.Get(s.url + "/hold?file=" + url.QueryEscape(gate))
			if err != nil {
				t.Error(err)
				return
			}
			body := readAll(t, resp)
			if resp.StatusCode != 200 {
				t.Errorf("held request: %d %s", resp.StatusCode, body)
			}
			mu.Lock()
			pids[body]++
			mu.Unlock()
		}()
	}
	return func() map[string]int { wg.Wait(); return pids }
}

func metric(t *testing.T, s *server, name string, labels ...string) float64 {
	t.Helper()
	v, _ := sample(scrape(t, s.adminGet(t, "/metrics")), name, labels...)
	return v
}

// A burst of slow requests grows the pool from num_workers to max_workers,
// and no further, each of them serving; once they idle scale_down_after the
// pool is back at its floor.
func TestElasticPoolFollowsABurst(t *testing.T) {
	s := startFerry(t, appConfig("  max_workers: 4\n  scale_up_after: 10ms\n  scale_down_after: 500ms\n"))
	w := watchWorkers(t, s)
	gate := filepath.Join(t.TempDir(), "gate")
	wait := holdAll(t, s, gate, 10)
	until(t, "the pool grown to max_workers, every worker holding a request", 10*time.Second, func() bool {
		return metric(t, s, "ferry_workers", "state", "working") == 4
	})
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if pids := wait(); len(pids) != 4 {
		t.Errorf("the burst was served by %d workers, want max_workers 4: %v", len(pids), pids)
	}
	until(t, "the pool back at num_workers", 10*time.Second, func() bool {
		return metric(t, s, "ferry_worker_restarts_total", "reason", "scale_down") == 2 && w.now.Load() == 2
	})
	w.end()
	if m := w.most.Load(); m != 4 {
		t.Errorf("the pool peaked at %d workers, want max_workers 4", m)
	}
	if n := metric(t, s, "ferry_worker_spawns_total", "reason", "scale_up"); n != 2 {
		t.Errorf("%v scale_up spawns, want 2", n)
	}
}

// Without max_workers the pool keeps num_workers however long requests
// wait. The window is the requests' wait: 20 times the default
// scale_up_after, which an elastic pool grows within.
func TestFixedPoolIgnoresABurst(t *testing.T) {
	s := startFerry(t, appConfig(""))
	w := watchWorkers(t, s)
	gate := filepath.Join(t.TempDir(), "gate")
	wait := holdAll(t, s, gate, 6)
	until(t, "requests waiting for the 2 workers", 10*time.Second, func() bool {
		return metric(t, s, "ferry_jobs_queued") == 4
	})
	queued := time.Now()
	until(t, "the requests waiting 200ms", 10*time.Second, func() bool { return time.Since(queued) > 200*time.Millisecond })
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if pids := wait(); len(pids) != 2 {
		t.Errorf("served by %d workers, want the fixed 2: %v", len(pids), pids)
	}
	w.end()
	if m := w.most.Load(); m != 2 {
		t.Errorf("a fixed pool of 2 reached %d workers", m)
	}
	if n := metric(t, s, "ferry_worker_spawns_total", "reason", "scale_up"); n != 0 {
		t.Errorf("%v scale_up spawns in a fixed pool", n)
	}
}

// max_memory compares what a worker owns: one that keeps 64 MiB of its own
// is retired and replaced (PHP's memory_limit, which max_memory sets too, is
// raised so that the request itself may grow).
func TestMaxMemoryRetiresAWorkerThatKeepsMemory(t *testing.T) {
	s := startFerry(t, appConfig("  max_memory: 48MiB\n  php:\n    ini:\n      memory_limit: 512M\n"))
	resp, pid := get(t, s.url+"/grow?mib=64")
	expectStatus(t, resp, pid, 200)
	until(t, "the grown worker retired for max_memory", 10*time.Second, func() bool {
		return metric(t, s, "ferry_worker_restarts_total", "reason", "max_memory") == 1
	})
	until(t, "it gone and replaced", 10*time.Second, func() bool {
		var ws []pool.Info
		if err := json.Unmarshal([]byte(s.adminGet(t, "/workers")), &ws); err != nil {
			t.Fatal(err)
		}
		live := 0
		for _, w := range ws {
			if strconv.Itoa(w.PID) == pid {
				return false
			}
			if w.State == "ready" || w.State == "working" {
				live++
			}
		}
		return live == 2
	})
	if !strings.Contains(s.logText(), "worker over max_memory") || !strings.Contains(s.logText(), "uss=") {
		t.Errorf("the log does not say the worker's USS was over max_memory:\n%s", s.logText())
	}
}
