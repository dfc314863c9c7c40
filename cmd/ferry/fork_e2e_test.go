package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// Tests of pool.boot: fork with the real PHP CLI (and ext/ferry when the
// suite runs with it): workers forked from one zygote that booted the app.

func forkConfig(extra string) string {
	return fmt.Sprintf(`server:
  address: "%%ADDR%%"
admin:
  socket: "%%ADMIN%%"
log:
  level: info
pool:
  command: ["php", "%%DIR%%/testdata/fork.php"]
  num_workers: 2
  boot: fork
%s`, extra)
}

type who struct {
	PID, PPID, Boot, Late int
	FirstRand             int64 `json:"first_rand"`
	Warm                  bool
}

func fetchJSON(t testing.TB, url string, v any) {
	t.Helper()
	resp, body := get(t, url)
	expectStatus(t, resp, body, 200)
	if err := json.Unmarshal([]byte(body), v); err != nil {
		t.Fatalf("%s: %v: %s", url, err, body)
	}
}

// eachWorker calls path until both workers have answered, holding a slow
// request on the first one so that the second is picked.
func eachWorker(t *testing.T, s *server, path string) map[int]json.RawMessage {
	t.Helper()
	got := map[int]json.RawMessage{}
	until(t, "an answer from each worker", 20*time.Second, func() bool {
		var wg sync.WaitGroup
		var mu sync.Mutex
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := client.Get(s.url + path)
				if err != nil {
					return
				}
				b := readAll(t, resp)
				var w who
				if json.Unmarshal([]byte(b), &w) == nil && w.PID > 0 {
					mu.Lock()
					got[w.PID] = json.RawMessage(b)
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		return len(got) >= 2
	})
	return got
}

func zygotePIDs(s *server) []int {
	var pids []int
	for _, m := range regexp.MustCompile(`msg="zygote ready" pid=(\d+)`).FindAllStringSubmatch(s.logText(), -1) {
		n, _ := strconv.Atoi(m[1])
		pids = append(pids, n)
	}
	return pids
}

// The workers are children of one zygote that ran the script up to run():
// code before and after create() ran once, in the zygote; each worker draws
// its own random numbers although the zygote had used the generator; what a
// request leaves in one worker is not in another; and they share the
// zygote's OPcache, where exec'd workers each have their own.
func TestForkWorkersShareTheBoot(t *testing.T) {
	for _, mode := range forkModes {
		t.Run(mode.name, func(t *testing.T) { forkWorkersShareTheBoot(t, mode.php(t)) })
	}
}

// forkModes are the PHP sides a forked worker may run: the SDK's loop in PHP,
// and ext/ferry's loop in C, which must also pick up its relay after a fork.
var forkModes = []struct {
	name string
	php  func(t testing.TB) string
}{
	{"pure PHP", func(testing.TB) string { return "  php:\n    extension: \"off\"\n" }},
	{"ext/ferry", func(t testing.TB) string { return "  php:\n    extension: " + extensionSO(t) + "\n" }},
}

func forkWorkersShareTheBoot(t *testing.T, php string) {
	s := startFerry(t, forkConfig(php))
	zs := zygotePIDs(s)
	if len(zs) != 1 {
		t.Fatalf("zygotes started: %v, want one\n%s", zs, s.logText())
	}
	ws := eachWorker(t, s, "/who")
	var firsts []int64
	for pid, raw := range ws {
		var w who
		json.Unmarshal(raw, &w)
		if w.PPID != zs[0] || w.Boot != zs[0] || w.Late != zs[0] {
			t.Errorf("worker %d: parent %d, boot ran in %d and %d; want all %d (the zygote)", pid, w.PPID, w.Boot, w.Late, zs[0])
		}
		firsts = append(firsts, w.FirstRand)
	}
	if firsts[0] == firsts[1] {
		t.Errorf("two workers drew the same first mt_rand() %d: the zygote's generator state was not reseeded", firsts[0])
	}

	var kept who
	fetchJSON(t, s.url+"/keep?v=secret", &kept)
	for pid, raw := range eachWorker(t, s, "/kept") {
		var k struct{ Kept *string }
		json.Unmarshal(raw, &k)
		if pid != kept.PID && k.Kept != nil {
			t.Errorf("worker %d sees %q, kept by worker %d's request", pid, *k.Kept, kept.PID)
		}
	}

	file := filepath.Join(t.TempDir(), "late.php")
	os.WriteFile(file, []byte("<?php return 42;\n"), 0o644)
	// OPcache leaves alone a file changed in the last 2 s (opcache.file_update_protection).
	past := time.Now().Add(-time.Minute)
	os.Chtimes(file, past, past)
	var compiled who
	fetchJSON(t, s.url+"/compile?file="+file, &compiled)
	for pid, raw := range eachWorker(t, s, "/cached?file="+file) {
		var c struct{ Cached bool }
		json.Unmarshal(raw, &c)
		if !c.Cached {
			t.Errorf("worker %d does not find %s in OPcache after worker %d compiled it: the workers do not share one", pid, file, compiled.PID)
		}
	}
}

// What a forked worker prints is logged under its own pid, not the zygote's.
func TestForkWorkerLogsUnderItsPID(t *testing.T) {
	s := startFerry(t, forkConfig(""))
	var w who
	fetchJSON(t, s.url+"/log", &w)
	want := regexp.MustCompile(`pid=` + strconv.Itoa(w.PID) + ` line="fork-test line from ` + strconv.Itoa(w.PID))
	until(t, "the worker's line in the log", 10*time.Second, func() bool { return want.MatchString(s.logText()) })
}

// failToStart runs ferry with yaml and returns what it printed before exiting.
func failToStart(t *testing.T, yaml string, env ...string) string {
	t.Helper()
	dir := t.TempDir()
	wd, _ := os.Getwd()
	cfg := filepath.Join(dir, "ferry.yaml")
	yaml = strings.NewReplacer("%ADDR%", anyPort, "%ADMIN%", filepath.Join(dir, "admin.sock"), "%DIR%", wd).Replace(yaml)
	os.WriteFile(cfg, []byte(yaml), 0o644)
	cmd := exec.Command(ferryBin, "serve", "-c", cfg)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	done := make(chan []byte, 1)
	go func() {
		out, _ := cmd.CombinedOutput()
		done <- out
	}()
	select {
	case out := <-done:
		if cmd.ProcessState.Success() {
			t.Fatalf("ferry exited with success:\n%s", out)
		}
		return string(out)
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("ferry did not exit")
	}
	return ""
}

// A connection the app opened while booting would be shared by every
// forked worker: the zygote refuses to fork, naming it and what to do,
// unless its library declared that it reopens it after a fork.
func TestForkRefusesAConnectionOpenedAtBoot(t *testing.T) {
	ln := holdingListener(t)
	out := failToStart(t, forkConfig(""), "FORK_TEST_CONNECT="+ln.Addr().String())
	for _, want := range []string{"while booting", "-> " + ln.Addr().String(), "Open it in the first request", "pool.boot: exec"} {
		if !strings.Contains(out, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, out)
		}
	}

	t.Setenv("FORK_TEST_CONNECT", ln.Addr().String())
	t.Setenv("FORK_TEST_REOPENS", "1")
	s := startFerry(t, forkConfig(""))
	resp, body := get(t, s.url+"/")
	expectStatus(t, resp, body, 200)
}

// load sends requests from n clients until stop is closed and counts what failed.
func load(url string, n int, stop <-chan struct{}) (ok, failed *atomic.Int64, wait func()) {
	ok, failed = new(atomic.Int64), new(atomic.Int64)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				resp, err := client.Get(url)
				if err == nil {
					_, err = readAllErr(resp)
					if err == nil && resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				if err != nil {
					failed.Add(1)
				} else {
					ok.Add(1)
				}
			}
		}()
	}
	return ok, failed, wg.Wait
}

func readAllErr(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			if err.Error() == "EOF" {
				return []byte(b.String()), nil
			}
			return nil, err
		}
	}
}

// A zygote killed with -9 under load fails no request: its workers are
// processes of their own and go on serving. The next worker needed, here
// the replacement of one that reached max_jobs, comes from a new zygote.
func TestForkZygoteKilledUnderLoad(t *testing.T) {
	s := startFerry(t, forkConfig("  max_jobs: 300\n"))
	stop := make(chan struct{})
	ok, failed, wait := load(s.url+"/slow", 8, stop)
	until(t, "requests served", 10*time.Second, func() bool { return ok.Load() > 20 })
	z := zygotePIDs(s)[0]
	syscall.Kill(z, syscall.SIGKILL)
	until(t, "a second zygote, for the workers that replace those reaching max_jobs", 30*time.Second, func() bool {
		return len(zygotePIDs(s)) >= 2
	})
	before := ok.Load()
	until(t, "requests served after", 10*time.Second, func() bool { return ok.Load() > before+20 })
	close(stop)
	wait()
	if n := failed.Load(); n != 0 {
		t.Errorf("%d requests failed (of %d) when the zygote was killed", n, ok.Load()+n)
	}
	if !strings.Contains(s.logText(), "zygote exited") {
		t.Errorf("the zygote's death was not logged:\n%s", s.logText())
	}
}

// A reload boots a new zygote, so the new code is what the new workers run,
// and no request fails meanwhile.
func TestForkReloadUnderLoad(t *testing.T) {
	s := startFerry(t, forkConfig(""))
	stop := make(chan struct{})
	ok, failed, wait := load(s.url+"/", 8, stop)
	until(t, "requests served", 10*time.Second, func() bool { return ok.Load() > 20 })
	old := []int{}
	for _, w := range s.workers(t) {
		old = append(old, w.PID)
	}
	s.reloadTo(t, old)
	until(t, "a second zygote", 20*time.Second, func() bool { return len(zygotePIDs(s)) == 2 })
	first := zygotePIDs(s)[0]
	until(t, "the old zygote gone with its generation", 20*time.Second, func() bool { return !running(first) })
	before := ok.Load()
	until(t, "requests served after", 10*time.Second, func() bool { return ok.Load() > before+20 })
	close(stop)
	wait()
	if n := failed.Load(); n != 0 {
		t.Errorf("%d requests failed (of %d) across the reload", n, ok.Load()+n)
	}
	var w who
	fetchJSON(t, s.url+"/who", &w)
	if w.Boot != zygotePIDs(s)[1] {
		t.Errorf("after the reload a worker booted in %d, want the new zygote %d", w.Boot, zygotePIDs(s)[1])
	}
}

var moldLine = regexp.MustCompile(`refork: a warm worker's state is the generation's mold now" worker=(\d+) mold=(\d+)`)

// refork_after: a warm worker becomes the generation's mold, the workers
// forked before are replaced from it one at a time, under load, and the new
// ones start with what it had loaded lazily; the worker itself goes on.
func TestForkReforkSharesAWarmWorker(t *testing.T) {
	for _, mode := range forkModes {
		t.Run(mode.name, func(t *testing.T) { forkReforkSharesAWarmWorker(t, mode.php(t)) })
	}
}

func forkReforkSharesAWarmWorker(t *testing.T, php string) {
	s := startFerry(t, forkConfig("  refork_after: 40\n"+php))
	stop := make(chan struct{})
	ok, failed, wait := load(s.url+"/warm", 4, stop)
	var mold int
	until(t, "a refork", 20*time.Second, func() bool {
		m := moldLine.FindStringSubmatch(s.logText())
		if m != nil {
			mold, _ = strconv.Atoi(m[2])
		}
		return m != nil
	})
	until(t, "every worker forked from the mold", 20*time.Second, func() bool {
		ws := s.workers(t)
		for _, w := range ws {
			if w.State != "ready" && w.State != "working" {
				return false
			}
			b, err := os.ReadFile("/proc/" + strconv.Itoa(w.PID) + "/stat")
			if err != nil {
				return false
			}
			f := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+2:])
			if ppid, _ := strconv.Atoi(f[1]); ppid != mold {
				return false
			}
		}
		return len(ws) == 2
	})
	close(stop)
	wait()
	if n := failed.Load(); n != 0 {
		t.Errorf("%d requests failed (of %d) across the refork", n, ok.Load()+n)
	}
	for pid, raw := range eachWorker(t, s, "/who") {
		var w who
		json.Unmarshal(raw, &w)
		if w.PPID != mold || !w.Warm {
			t.Errorf("worker %d: parent %d (mold %d), warm %v: want forked from the mold with its lazily loaded class", pid, w.PPID, mold, w.Warm)
		}
	}
}

// A worker that keeps a connection between requests is not made a mold:
// its children would share it. The generation keeps its zygote and serves on.
func TestForkReforkRefusesAWorkerHoldingAConnection(t *testing.T) {
	ln := holdingListener(t)
	s := startFerry(t, strings.Replace(forkConfig("  refork_after: 10\n"), "num_workers: 2", "num_workers: 1", 1))
	for range 12 {
		resp, body := get(t, s.url+"/connect?to="+ln.Addr().String())
		expectStatus(t, resp, body, 200)
	}
	until(t, "the refusal", 20*time.Second, func() bool {
		return strings.Contains(s.logText(), "the worker chosen as the next mold holds a connection: TCP ")
	})
	if strings.Contains(s.logText(), "mold now") {
		t.Errorf("a worker holding a connection became the mold:\n%s", s.logText())
	}
	resp, body := get(t, s.url+"/who")
	expectStatus(t, resp, body, 200)
}

// holdingListener accepts connections and keeps them open until the test ends,
// as a database server would while a client stays connected.
func holdingListener(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	return ln
}

// SIGTERM leaves no PHP process behind: the zygote and any refork's mold exit
// before ferry does, as its workers do.
func TestForkShutdownLeavesNoZygote(t *testing.T) {
	s := startFerry(t, forkConfig("  refork_after: 5\n"))
	for range 10 {
		resp, body := get(t, s.url+"/who")
		expectStatus(t, resp, body, 200)
	}
	until(t, "a refork", 20*time.Second, func() bool { return moldLine.MatchString(s.logText()) })
	m := moldLine.FindStringSubmatch(s.logText())
	mold, _ := strconv.Atoi(m[2])
	pids := []int{mold}
	for _, w := range s.workers(t) {
		pids = append(pids, w.PID)
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(15 * time.Second):
		t.Fatal("ferry did not stop")
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("process %d (mold %d) outlived ferry", pid, mold)
		}
	}
}

// alive tells a process that has not exited: a zombie has, and waits only for
// its parent (init, for a mold's orphans) to collect it.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+2:])
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// Without FFI the workers write their log lines to the zygote's stdout, which
// they inherited: it is read until they are all gone, also once the zygote
// exited (it was closed a second after, and their later lines were lost:
// PHP's CLI ignores SIGPIPE).
func TestForkWorkersWithoutFFIOutliveTheirZygotesLog(t *testing.T) {
	s := startFerry(t, forkConfig("  php:\n    extension: \"off\"\n    ini:\n      ffi.enable: \"0\"\n"))
	z := zygotePIDs(s)[0]
	syscall.Kill(z, syscall.SIGKILL)
	// Logged once its exit is settled, output included.
	until(t, "the zygote's death logged", 20*time.Second, func() bool {
		return strings.Contains(s.logText(), `msg="zygote exited; its workers go on serving`)
	})
	for pid := range eachWorker(t, s, "/log") {
		line := "fork-test line from " + strconv.Itoa(pid)
		until(t, "the line of worker "+strconv.Itoa(pid), 10*time.Second, func() bool { return strings.Contains(s.logText(), line) })
	}
}
