package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// freePort is a port the kernel picked and gave back: for servers (redis-server,
// tarantool, mariadbd) that take a port on their command line and cannot report one they
// chose themselves.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

// serverProc is a real server process a pool.fiber_io test started; kill ends it by its pid.
type serverProc struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	log    strings.Builder
	exited chan struct{}
}

// startServerProc runs cmd, waits for ready in what it prints (stdout and stderr), and kills it
// when the test ends.
func startServerProc(t *testing.T, cmd *exec.Cmd, ready string) *serverProc {
	t.Helper()
	d := &serverProc{cmd: cmd, exited: make(chan struct{})}
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		cmd.Wait()
		pw.Close()
		close(d.exited)
	}()
	t.Cleanup(d.kill)
	up := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		seen := false
		for sc.Scan() {
			d.mu.Lock()
			d.log.WriteString(sc.Text() + "\n")
			d.mu.Unlock()
			if !seen && strings.Contains(sc.Text(), ready) {
				seen = true
				up <- true
			}
		}
		if !seen {
			up <- false
		}
	}()
	select {
	case ok := <-up:
		if !ok {
			t.Fatalf("%s exited before it was ready:\n%s", cmd.Path, d.text())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s not ready after 30 s:\n%s", cmd.Path, d.text())
	}
	return d
}

func (d *serverProc) text() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.log.String()
}

// kill is kill -9 by pid, and waits until the process is gone.
func (d *serverProc) kill() {
	d.cmd.Process.Kill()
	<-d.exited
}

// fiberIOApp is fiberIOConfig serving another app of testdata with extra php flags.
func fiberIOApp(on bool, app string, php ...string) string {
	yaml := strings.Replace(fiberIOConfig(on, ""), "testdata/fiberio.php", "testdata/"+app, 1)
	if len(php) == 0 {
		return yaml
	}
	return strings.Replace(yaml, `["php", `, `["php", "`+strings.Join(php, `", "`)+`", `, 1)
}

// pollUntil asks url until it answers want: the servers' own counters (Redis's blocked
// clients, MariaDB's process list) have no event to wait on.
func pollUntil(t *testing.T, s *server, url, want string) {
	t.Helper()
	got := ""
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); {
		resp, body := get(t, url)
		expectStatus(t, resp, body, 200)
		if got = body; got == want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s answered %q, want %q\n%s", url, got, want, s.logText())
}

// inBackground runs n GETs at once on a goroutine; the channel gets their bodies.
type fetched struct {
	bodies []string
	err    error
}

func inBackground(n int, url func(i int) string) chan fetched {
	ch := make(chan fetched, 1)
	go func() {
		b, err := fetchAll(n, url)
		ch <- fetched{b, err}
	}()
	return ch
}

// servedBeside gets url while the requests of waiting still wait (they wait out a timeout):
// the worker must answer want before they end.
func servedBeside(t *testing.T, url, want string, waiting chan fetched) {
	t.Helper()
	if resp, body := get(t, url); body != want {
		t.Fatalf("a request beside a waiting one answered %d %q, want %q", resp.StatusCode, body, want)
	}
	select {
	case <-waiting:
		t.Fatal("a request beside a waiting one was answered after the other's timeout")
	default:
	}
}

func expectBodies(t *testing.T, s *server, f fetched, want string) {
	t.Helper()
	if f.err != nil {
		t.Fatalf("%v\n%s", f.err, s.logText())
	}
	for i, b := range f.bodies {
		if b != want {
			t.Fatalf("request %d answered %q, want %q\n%s", i, b, want, s.logText())
		}
	}
}

func fmtURL(s *server, format string, a ...any) string {
	return s.url + fmt.Sprintf(format, a...)
}
