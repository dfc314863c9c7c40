package main

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"
)

// One PDO handle kept across requests (a container's) must never serve two at once: while
// one request has a transaction open on it and waits elsewhere, another request's query on
// the same handle would run inside that transaction and see its uncommitted rows. With
// pool.fiber_io the connection belongs to the first request until it ends, so the second
// gets an error instead.
func TestFiberIOSharedPDOServesOneRequestAtATime(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	php := mysqlPHP(t)
	_, port := startMariaDB(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	gate := make(chan net.Conn, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			gate <- c
		}
	}()
	yaml := strings.Replace(fiberIOMySQLConfig(true, php), "testdata/fiberio.php", "testdata/fiberio_owner.php", 1)
	s := startFerry(t, yaml)
	begun := make(chan string, 1)
	go func() {
		bodies, err := fetchAll(1, func(int) string { return fmt.Sprintf("%s/begin?port=%d&gate=%s", s.url, port, ln.Addr()) })
		if err != nil {
			begun <- err.Error()
			return
		}
		begun <- bodies[0]
	}()
	var c net.Conn
	select {
	case c = <-gate:
	case b := <-begun:
		t.Fatalf("the transaction ended before it waited: %s\n%s", b, s.logText())
	case <-time.After(20 * time.Second):
		t.Fatalf("the transaction never waited on the gate\n%s", s.logText())
	}
	resp, body := get(t, fmt.Sprintf("%s/peek?port=%d", s.url, port))
	expectStatus(t, resp, body, 200)
	if !strings.HasPrefix(body, "refused: ") {
		t.Fatalf("a second request on the shared handle answered %q: it ran inside the first one's transaction", body)
	}
	fmt.Fprintf(c, "go\n")
	c.Close()
	// mysqlnd drops a connection a write failed on, so the first request loses it too
	// ("gone away"): both fail, neither sees the other's data.
	select {
	case b := <-begun:
		t.Logf("the first request answered %q", b)
	case <-time.After(20 * time.Second):
		t.Fatalf("the first request did not end\n%s", s.logText())
	}
}
