package main

import (
	"crypto/tls"
	"fmt"
	"net/url"
	"path/filepath"
	"testing"
	"time"
)

// startTLSGateServer is startGateServer behind TLS (crypto/tls, a self-signed certificate
// for 127.0.0.1): it returns the server and the certificate file PHP checks it against.
func startTLSGateServer(t *testing.T, gate int, delay time.Duration) (*gateServer, string) {
	t.Helper()
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "gate.crt"), filepath.Join(dir, "gate.key")
	writeCert(t, certFile, keyFile, "gate")
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	return serveGate(t, ln, gate, delay), certFile
}

// With pool.fiber_io, eight requests that each open a TLS connection (tls://, or tcp://
// turned TLS with stream_socket_enable_crypto()), handshake, write a line and wait in
// fgets() are all waiting at once in ONE worker: the server answers none until it holds
// all eight. Before the TLS hooks, the handshake and the read blocked the worker, so the
// server never saw two at once and every request failed on the gate's deadline.
func TestFiberIOTLSSuspendsOnlyItsFiber(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	const n = 8
	for via, env := range fiberIORunners {
		for _, path := range []string{"tls", "starttls"} {
			t.Run(via+"/"+path, func(t *testing.T) {
				g, ca := startTLSGateServer(t, n, 0)
				s := startFerry(t, fiberIOConfig(true, env))
				bodies := getAll(t, n, func(i int) string {
					return fmt.Sprintf("%s/%s?addr=%s&ca=%s&id=%d", s.url, path, g.ln.Addr(), url.QueryEscape(ca), i)
				})
				for i, b := range bodies {
					if b != fmt.Sprintf("ok %d", i) {
						t.Fatalf("request %d answered %q, want %q\n%s", i, b, fmt.Sprintf("ok %d", i), s.logText())
					}
				}
				if got := g.most(); got != n {
					t.Fatalf("the server held at most %d requests at once, want %d", got, n)
				}
			})
		}
	}
	t.Run("off", func(t *testing.T) {
		g, ca := startTLSGateServer(t, 1, 50*time.Millisecond)
		s := startFerry(t, fiberIOConfig(false, ""))
		bodies := getAll(t, n, func(i int) string {
			return fmt.Sprintf("%s/tls?addr=%s&ca=%s&id=%d", s.url, g.ln.Addr(), url.QueryEscape(ca), i)
		})
		for i, b := range bodies {
			if b != fmt.Sprintf("ok %d", i) {
				t.Fatalf("request %d answered %q\n%s", i, b, s.logText())
			}
		}
		if got := g.most(); got != 1 {
			t.Fatalf("without fiber_io the server held %d requests at once, want 1 (the worker blocks)", got)
		}
	})
}

// PDO MySQL over TLS: mysqlnd connects with tcp:// and turns TLS on over that stream, so the
// handshake and every query's wait go through the TLS hooks. With pool.fiber_io eight
// requests each waiting in SELECT SLEEP() over TLS are all in MariaDB at once in ONE worker
// (its process list, counted by a request on the same worker, shows the eight); each
// checked that its session is TLS (Ssl_cipher). Before the TLS hooks the stream went back to
// PHP's blocking ops once TLS was on, and MariaDB saw one query at a time.
func TestFiberIOPDOMySQLOverTLS(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	php := mysqlPHP(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "db.crt"), filepath.Join(dir, "db.key")
	writeCert(t, certFile, keyFile, "mariadb")
	_, port := startMariaDB(t, "--ssl-cert="+certFile, "--ssl-key="+keyFile)
	const n = 8
	s := startFerry(t, fiberIOMySQLConfig(true, php))
	done := make(chan error, 1)
	var bodies []string
	go func() {
		var err error
		bodies, err = fetchAll(n, func(i int) string {
			return fmt.Sprintf("%s/pdo?port=%d&tag=tls&s=30&ca=%s", s.url, port, url.QueryEscape(certFile))
		})
		done <- err
	}()
	waiting := ""
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		resp, body := get(t, fmt.Sprintf("%s/pdo-waiting?port=%d&tag=tls", s.url, port))
		expectStatus(t, resp, body, 200)
		if waiting = body; waiting == fmt.Sprint(n) {
			break
		}
		time.Sleep(20 * time.Millisecond) // polling MariaDB's process list: no event to wait on
	}
	if waiting != fmt.Sprint(n) {
		t.Fatalf("MariaDB ran %s of the %d TLS queries at once, want all\n%s", waiting, n, s.logText())
	}
	resp, body := get(t, fmt.Sprintf("%s/pdo-release?port=%d&tag=tls", s.url, port))
	expectStatus(t, resp, body, 200)
	if err := <-done; err != nil {
		t.Fatalf("%v\n%s", err, s.logText())
	}
	for i, b := range bodies {
		if b != "interrupted" {
			t.Fatalf("request %d answered %q, want its killed query's error", i, b)
		}
	}
}
