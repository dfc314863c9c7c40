package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// drainQueuedThroughSIGTERM puts requests inside the pool's queue, proven
// from outside, sends SIGTERM, and checks that every one of them is
// answered. It waits only on events that every version of ferry shows:
// a worker opening a FIFO, the pool's queue-full 503, the listener
// refusing connections, the access log's 499 for a queued client that
// left, and the "stopped" log line. So it also runs, and fails, on ferry
// before queued jobs outlived SIGTERM (where a queued job's context was
// fasthttp's RequestCtx, which Shutdown cancels), and on today's code with
// that context put back.
func drainQueuedThroughSIGTERM(t *testing.T) *server {
	t.Helper()
	const queued = 3
	dir := t.TempDir()
	gate := filepath.Join(dir, "gate")
	if err := syscall.Mkfifo(gate, 0o600); err != nil {
		t.Fatal(err)
	}
	wd, _ := os.Getwd()
	// /block holds the only worker until the test writes to the FIFO:
	// opening it for reading returns when the test opens it for writing,
	// so that open is the proof that the worker runs the job.
	accessLog := filepath.Join(dir, "access.log")
	app := filepath.Join(dir, "block.php")
	php := fmt.Sprintf(`<?php
require %q;
use Ferry\Worker\Http\HttpWorker;
use Ferry\Worker\Http\Request;
use Ferry\Worker\Http\Response;
HttpWorker::create()->run(static function (Request $r): Response {
    if ($r->path === '/block') {
        $f = fopen(%q, 'r');
        fread($f, 1);
        fclose($f);
    }
    return Response::text('answered ' . $r->path);
});
`, filepath.Join(wd, "../../php/worker/autoload.php"), gate)
	if err := os.WriteFile(app, []byte(php), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startFerry(t, fmt.Sprintf(`server:
  address: "%%ADDR%%"
  access_log: {enabled: true, format: json, path: %q}
admin:
  socket: "%%ADMIN%%"
log:
  level: info
pool:
  command: ["php", %q]
  num_workers: 1
  pipeline: 1
  queue_size: %d
  allocate_timeout: 60s
`, accessLog, app, queued))

	// Each request has its own connection, so that one of them can leave.
	type answer struct {
		path, got string
		code      int
	}
	answers := make(chan answer, queued+2)
	host := strings.TrimPrefix(s.url, "http://")
	conns := map[string]net.Conn{}
	send := func(path string) {
		c, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns[path] = c
		fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", path)
		go func() {
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				answers <- answer{path, err.Error(), 0}
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			answers <- answer{path, string(b), resp.StatusCode}
		}()
	}
	send("/block")
	opened := make(chan *os.File, 1)
	go func() {
		f, err := os.OpenFile(gate, os.O_WRONLY, 0)
		if err != nil {
			t.Error(err)
		}
		opened <- f
	}()
	t.Cleanup(func() {
		// A test that failed early leaves the writer's open waiting for
		// a reader: this one lets it return.
		if r, err := os.OpenFile(gate, os.O_RDWR, 0); err == nil {
			r.Close()
		}
	})
	var w *os.File
	select {
	case w = <-opened:
	case <-time.After(20 * time.Second):
		t.Fatal("the worker never started /block")
	}
	defer w.Close()

	// The worker is held: one request more than the queue holds, and the
	// pool answers exactly one of them 503 at once. That answer is the
	// proof that the others are in the pool's queue, not only in the
	// HTTP server; nothing leaves the queue while the worker is held.
	for i := range queued + 1 {
		send(fmt.Sprintf("/q%d", i))
	}
	var full string
	select {
	case a := <-answers:
		if a.code != http.StatusServiceUnavailable {
			t.Fatalf("%s got %d %q while the only worker was held, want the queue-full 503", a.path, a.code, a.got)
		}
		full = a.path
	case <-time.After(20 * time.Second):
		t.Fatal("no queue-full 503: the requests never filled the pool's queue")
	}

	s.cmd.Process.Signal(syscall.SIGTERM)
	// The listener closing is the shutdown under way: from here on, the
	// queued jobs live through it or not, before the worker is let go.
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", host)
		if err != nil {
			break
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("the listener still accepts 20 s after SIGTERM")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// One queued client leaves. The pool sees that only on one of its
	// rounds over the waiting jobs, and the access log's 499 for it is
	// the proof that such a round ran after SIGTERM: a round that would
	// also have dropped the others, had the shutdown cancelled them.
	leaver := ""
	for i := range queued + 1 {
		if p := fmt.Sprintf("/q%d", i); p != full {
			leaver = p
			break
		}
	}
	conns[leaver].Close()
	if l := waitLine(t, accessLog, `"uri":"`+leaver+`"`); !strings.Contains(l, `"status":499`) {
		t.Fatalf("the queued client that left is logged as %s, want its 499", l)
	}
	if _, err := w.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	for range queued + 1 {
		select {
		case a := <-answers:
			if a.path == leaver {
				continue
			}
			if a.code != 200 || a.got != "answered "+a.path {
				t.Errorf("%s, accepted before SIGTERM, got %d %q", a.path, a.code, a.got)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a request accepted before SIGTERM got no answer")
		}
	}
	deadline = time.Now().Add(20 * time.Second)
	for !strings.Contains(s.logText(), "msg=stopped\n") {
		if time.Now().After(deadline) {
			t.Fatalf("ferry did not log a clean stop:\n%s", s.logText())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return s
}
