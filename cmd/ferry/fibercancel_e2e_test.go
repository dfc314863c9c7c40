package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// silentServer accepts connections, never answers, and reports each one's start on
// accepted (when not nil) and end (the client closed or shut it down) on closed.
func silentServer(t *testing.T, accepted chan struct{}) (string, chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	closed := make(chan struct{}, 16)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if accepted != nil {
				accepted <- struct{}{}
			}
			go func() {
				io.Copy(io.Discard, c)
				c.Close()
				closed <- struct{}{}
			}()
		}
	}()
	return ln.Addr().String(), closed
}

func fiberCancelConfig(env string) string {
	extra := "  fibers: true\n  max_concurrency: 8\n  fiber_io: true\n  exec_ttl: 1s\n" + env
	yaml := strings.Replace(appConfig(extra), "testdata/app.php", "testdata/fibercancel.php", 1)
	return strings.Replace(yaml, "num_workers: 2", "num_workers: 1", 1)
}

func workerPid(t *testing.T, s *server) string {
	t.Helper()
	resp, body := get(t, s.url+"/pid")
	expectStatus(t, resp, body, http.StatusOK)
	return body
}

// A Fiber worker's job past exec_ttl that waits on a hooked socket is cancelled where it
// waits: its client gets 504, its connection is shut down (never left half-read for the
// next request), and the worker, with whatever else it runs, lives on.
func TestFiberExecTTLCancelsOnlyTheWaitingJob(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	for via, env := range fiberIORunners {
		t.Run(via, func(t *testing.T) {
			addr, closed := silentServer(t, nil)
			s := startFerry(t, fiberCancelConfig(env))
			before := workerPid(t, s)
			resp, body := get(t, s.url+"/hang?addr="+addr)
			expectStatus(t, resp, body, http.StatusGatewayTimeout)
			select {
			case <-closed:
			case <-time.After(10 * time.Second):
				t.Fatal("the cancelled job's connection to the silent server was not closed")
			}
			if after := workerPid(t, s); after != before {
				t.Fatalf("the worker was replaced (pid %s, then %s): cancelling one job killed it", before, after)
			}
			if !waitLog(s, "cancelling it") {
				t.Fatalf("no cancellation in the log:\n%s", s.logText())
			}
		})
	}
}

// A job that catches the cancellation and then blocks outside the loop is killed with its
// worker once the grace is over, as every job past exec_ttl was before.
func TestFiberExecTTLKillsAJobThatIgnoresItsCancellation(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	addr, _ := silentServer(t, nil)
	s := startFerry(t, fiberCancelConfig(""))
	before := workerPid(t, s)
	resp, body := get(t, s.url+"/stubborn?addr="+addr)
	expectStatus(t, resp, body, http.StatusGatewayTimeout)
	if after := workerPid(t, s); after == before {
		t.Fatalf("the worker (pid %s) still serves: the job that ignored its cancellation was not killed", before)
	}
	if !waitLog(s, "did not end, killing worker") {
		t.Fatalf("no kill after the grace in the log:\n%s", s.logText())
	}
}

// A Fiber worker's job whose client leaves while it waits on a hooked socket is cancelled
// there: the worker shuts that socket down instead of waiting on for an answer nobody reads.
// In front mode the server notices the client leaving; in direct mode the worker's own loop.
func TestFiberClientGoneCancelsTheWaitingJob(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	accepted := make(chan struct{}, 1)
	addr, closed := silentServer(t, accepted)
	yaml := strings.Replace(fiberCancelConfig(""), "exec_ttl: 1s", "exec_ttl: 60s", 1)
	s := startFerry(t, yaml)
	c, err := net.Dial("tcp", strings.TrimPrefix(s.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "GET /hang?addr=%s HTTP/1.1\r\nHost: x\r\n\r\n", addr)
	select {
	case <-accepted:
	case <-time.After(10 * time.Second):
		t.Fatal("the job never reached the silent server")
	}
	c.Close()
	select {
	case <-closed:
	case <-time.After(5 * time.Second): // it takes milliseconds; a cancel left to a later timer is late
		t.Fatalf("the job whose client left still holds its connection to the silent server\n%s", s.logText())
	}
	if !waitLog(s, "its client left") {
		t.Fatalf("the worker did not say why it cancelled:\n%s", s.logText())
	}
	resp, body := get(t, s.url+"/pid")
	expectStatus(t, resp, body, http.StatusOK)
}

// exec_ttl against a real server: a request waiting in MariaDB (PDO, SELECT SLEEP) is
// cancelled where it waits, gets 504, and the same worker serves the next query at once.
func TestFiberExecTTLCancelsAWaitInMariaDB(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	php := mysqlPHP(t)
	_, port := startMariaDB(t)
	yaml := fiberIOConfig(true, "  exec_ttl: 1s\n")
	if len(php) > 0 {
		yaml = strings.Replace(yaml, `["php", `, `["php", "`+strings.Join(php, `", "`)+`", `, 1)
	}
	s := startFerry(t, yaml)
	resp, before := get(t, fmt.Sprintf("%s/pdo?port=%d&tag=warm&s=0", s.url, port))
	expectStatus(t, resp, before, http.StatusOK)
	resp, body := get(t, fmt.Sprintf("%s/pdo?port=%d&tag=ttl&s=30", s.url, port))
	expectStatus(t, resp, body, http.StatusGatewayTimeout)
	resp, body = get(t, fmt.Sprintf("%s/pdo?port=%d&tag=after&s=0", s.url, port))
	expectStatus(t, resp, body, http.StatusOK)
	if body != "slept 0" {
		t.Fatalf("the next query answered %q", body)
	}
	if !waitLog(s, "cancelling it") || strings.Contains(s.logText(), "killing worker") {
		t.Fatalf("the job was not cancelled alone:\n%s", s.logText())
	}
}
