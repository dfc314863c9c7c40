package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// workerInfo is what the admin socket's /workers says of one worker.
type workerInfo struct {
	PID      int
	State    string
	InFlight int
}

func (s *server) workers(t testing.TB) []workerInfo {
	t.Helper()
	var ws []workerInfo
	if err := json.Unmarshal([]byte(s.adminGet(t, "/workers")), &ws); err != nil {
		t.Fatal(err)
	}
	return ws
}

// retired maps the pids of the workers that have exited to why they did.
func (s *server) retired(t testing.TB) map[int]string {
	t.Helper()
	var rs []struct {
		PID    int
		Reason string
	}
	if err := json.Unmarshal([]byte(s.adminGet(t, "/workers/retired")), &rs); err != nil {
		t.Fatal(err)
	}
	m := map[int]string{}
	for _, r := range rs {
		m[r.PID] = r.Reason
	}
	return m
}

// adminPost posts to the admin socket and returns the status and body.
func (s *server) adminPost(t testing.TB, path string) (int, string) {
	t.Helper()
	c := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", s.admin)
		}}}
	resp, err := c.Post("http://ferry"+path, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, readAll(t, resp)
}

// running reports whether a process exists; ferry reaps its workers, so a
// worker that exited leaves no zombie behind.
func running(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}

// reloadTo sends SIGHUP and waits until a ready worker that is not one of
// seen serves; it returns that worker's pid.
func (s *server) reloadTo(t testing.TB, seen []int) int {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGHUP)
	var pid int
	until(t, "a new generation", 20*time.Second, func() bool {
		for _, w := range s.workers(t) {
			if !slices.Contains(seen, w.PID) && w.PID != 0 && (w.State == "ready" || w.State == "working") {
				pid = w.PID
				return true
			}
		}
		return false
	})
	return pid
}

// A reload ends the streams of the generation it replaces as a leaving
// client would (the generator gets StreamStoppedException, the client a
// complete chunked body), and the old workers exit. Before, an endless stream
// held its worker forever: four reloads with a stream open each time left
// five PHP processes.
func TestReloadEndsStreams(t *testing.T) {
	t.Run("fibers", func(t *testing.T) { reloadEndsStreams(t, "  fibers: true\n") })
	t.Run("sequential", func(t *testing.T) { reloadEndsStreams(t, "") })
}

func reloadEndsStreams(t *testing.T, mode string) {
	dir := t.TempDir()
	// write_timeout and destroy_timeout well past the test's deadlines: the
	// streams must end because they were told to, not by a timeout or a kill.
	cfg := strings.Replace(streamConfig(dir, mode, "  destroy_timeout: 60s\n"), "write_timeout: 1s", "write_timeout: 60s", 1)
	s := startFerry(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	ws := s.workers(t)
	if len(ws) != 1 {
		t.Fatalf("workers at start: %+v", ws)
	}
	seen := []int{ws[0].PID}
	type stream struct {
		r   *bufio.Reader
		end chan error
	}
	var streams []stream
	for i := 0; i < 4; i++ {
		tag := "-" + strconv.Itoa(i)
		path := "/endless?tag=" + tag
		if i%2 == 1 {
			path += "&block" // a generator that never suspends between parts
		}
		resp := open(t, ctx, s.url+path)
		defer resp.Body.Close()
		if resp.StatusCode != 200 || len(resp.TransferEncoding) == 0 || resp.TransferEncoding[0] != "chunked" {
			t.Fatalf("stream %d: status %d, transfer encoding %v", i, resp.StatusCode, resp.TransferEncoding)
		}
		st := stream{r: bufio.NewReader(resp.Body), end: make(chan error, 1)}
		if line, err := st.r.ReadString('\n'); err != nil || line != "data: 1\n" {
			t.Fatalf("stream %d: %q %v", i, line, err)
		}
		// Read to the end meanwhile: a reader that stopped reading would
		// hold the worker's next part, and with it the worker.
		go func() { _, err := io.Copy(io.Discard, st.r); st.end <- err }()
		streams = append(streams, st)
		seen = append(seen, s.reloadTo(t, seen))
	}
	newest := seen[len(seen)-1]
	until(t, "only the newest generation to run", 20*time.Second, func() bool {
		ws := s.workers(t)
		if len(ws) != 1 || ws[0].PID != newest {
			return false
		}
		retired := s.retired(t) // recorded once the pool has reaped the process
		for _, pid := range seen[:len(seen)-1] {
			if running(pid) || retired[pid] == "" {
				return false
			}
		}
		return true
	})
	for i, st := range streams {
		select {
		case err := <-st.end:
			if err != nil {
				t.Errorf("stream %d did not end cleanly: %v", i, err)
			}
		case <-ctx.Done():
			t.Fatalf("stream %d still open after its worker exited", i)
		}
		if _, err := os.Stat(filepath.Join(dir, "stopped-"+strconv.Itoa(i))); err != nil {
			t.Errorf("the generator of stream %d was not stopped: %v", i, err)
		}
	}
	retired := s.retired(t)
	for _, pid := range seen[:len(seen)-1] {
		if retired[pid] != "reload" {
			t.Errorf("worker %d exited for %q, want reload (all: %v)", pid, retired[pid], retired)
		}
	}
	if _, body := get(t, s.url+"/pid"); body != strconv.Itoa(newest) {
		t.Fatalf("served by %s, want the newest worker %d", body, newest)
	}
}

// A job that runs past destroy_timeout after a reload is not waited for: its
// worker is killed, its client gets a 502, and the new generation serves
// meanwhile. The same holds for a stream whose worker cannot read the stop
// (it is busy in a blocking call).
func TestReloadKillsAfterDestroyTimeout(t *testing.T) {
	for _, mode := range []struct{ name, cfg string }{{"sequential", ""}, {"fibers", "  fibers: true\n"}} {
		t.Run(mode.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := strings.Replace(streamConfig(dir, mode.cfg, "  destroy_timeout: 1s\n"), "exec_ttl: 2s", "exec_ttl: 120s", 1)
			s := startFerry(t, cfg)
			old := s.workers(t)[0].PID
			type answer struct {
				status int
				body   string
				err    error
			}
			done := make(chan answer, 1)
			start := time.Now()
			go func() {
				c := &http.Client{Timeout: 90 * time.Second}
				resp, err := c.Get(s.url + "/busy?s=60")
				if err != nil {
					done <- answer{err: err}
					return
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				done <- answer{resp.StatusCode, string(b), err}
			}()
			until(t, "the worker to be busy", 10*time.Second, func() bool {
				ws := s.workers(t)
				return len(ws) == 1 && ws[0].InFlight == 1
			})
			if code, body := s.adminPost(t, "/reload"); code != 200 {
				t.Fatalf("POST /reload: %d %s", code, body)
			}
			// In Fiber mode the old worker is blocked in usleep and reads
			// nothing: the new one must be serving all the same.
			if _, body := get(t, s.url+"/pid"); body == strconv.Itoa(old) {
				t.Fatalf("served by the retiring worker %s", body)
			}
			var a answer
			select {
			case a = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the busy request still runs 30s after a reload with destroy_timeout 1s")
			}
			if a.err != nil || a.status != http.StatusBadGateway {
				t.Fatalf("the killed job's client got %d %q %v, want a 502", a.status, a.body, a.err)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Fatalf("answered after %v", d)
			}
			// Listed as retired once the pool is done with it, after its process.
			until(t, "the old worker to be gone", 10*time.Second, func() bool { return !running(old) && s.retired(t)[old] != "" })
			if r := s.retired(t)[old]; r != "reload" {
				t.Fatalf("the old worker exited for %q, want reload", r)
			}
			if ws := s.workers(t); len(ws) != 1 {
				t.Fatalf("workers after the reload: %+v", ws)
			}
		})
	}
}

// A worker retired for its own limits (here ttl) ends its streams as a
// reload does, or an endless stream would keep it beside its replacement
// for as long as the client listens.
func TestTTLEndsStreams(t *testing.T) {
	for _, mode := range []struct{ name, cfg string }{{"sequential", ""}, {"fibers", "  fibers: true\n"}} {
		t.Run(mode.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := strings.Replace(streamConfig(dir, mode.cfg, "  ttl: 1s\n  destroy_timeout: 60s\n"), "write_timeout: 1s", "write_timeout: 60s", 1)
			s := startFerry(t, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			old := s.workers(t)[0].PID
			resp := open(t, ctx, s.url+"/endless?tag=-0")
			defer resp.Body.Close()
			r := bufio.NewReader(resp.Body)
			if line, err := r.ReadString('\n'); err != nil || line != "data: 1\n" {
				t.Fatalf("stream: %q %v", line, err)
			}
			if _, err := io.Copy(io.Discard, r); err != nil {
				t.Fatalf("the stream did not end cleanly once its worker's ttl passed: %v", err)
			}
			if _, err := os.Stat(filepath.Join(dir, "stopped-0")); err != nil {
				t.Errorf("the generator was not stopped: %v", err)
			}
			// Its exit is recorded once the pool has reaped it, after the process is gone.
			until(t, "the retired worker to exit", 20*time.Second, func() bool { return !running(old) && s.retired(t)[old] != "" })
			if why := s.retired(t)[old]; why != "ttl" {
				t.Errorf("worker %d exited for %q, want ttl", old, why)
			}
		})
	}
}
