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
	g := &gateServer{ln: ln, gate: gate, delay: delay}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go g.serve(c)
		}
	}()
	return g, certFile
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
