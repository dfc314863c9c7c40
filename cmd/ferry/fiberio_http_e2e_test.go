package main

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// httpGate is the slow HTTP server of the pool.fiber_io HTTP tests. /gate answers once gate
// requests are in it at once (or 504 after 5 s: a worker that blocks never fills it); /sleep
// answers after ?ms; /fail answers 500; /hang answers only once the client has gone;
// /drop sends half a header and closes. It counts the most requests it held at once.
type httpGate struct {
	srv     *http.Server
	addr    string
	gate    int
	mu      sync.Mutex
	held    int
	most    int
	release chan struct{}
}

func startHTTPGate(t *testing.T, gate int) *httpGate {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &httpGate{addr: ln.Addr().String(), gate: gate, release: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("/gate", func(w http.ResponseWriter, r *http.Request) {
		g.hold(1)
		defer g.hold(-1)
		select {
		case <-g.release:
			fmt.Fprint(w, "ok")
		case <-time.After(5 * time.Second):
			http.Error(w, "the gate never filled", http.StatusGatewayTimeout)
		}
	})
	mux.HandleFunc("/sleep", func(w http.ResponseWriter, r *http.Request) {
		g.hold(1)
		defer g.hold(-1)
		var ms int
		fmt.Sscan(r.URL.Query().Get("ms"), &ms)
		time.Sleep(time.Duration(ms) * time.Millisecond) // the slow endpoint's own work
		fmt.Fprint(w, "slept")
	})
	mux.HandleFunc("/fail", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "broken", http.StatusInternalServerError)
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		g.hold(1)
		defer g.hold(-1)
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	mux.HandleFunc("/drop", func(w http.ResponseWriter, r *http.Request) {
		c, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Le")
		buf.Flush()
		c.Close()
	})
	g.srv = &http.Server{Handler: mux}
	go g.srv.Serve(ln)
	t.Cleanup(func() { g.srv.Close() })
	return g
}

func (g *httpGate) hold(d int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held += d
	g.most = max(g.most, g.held)
	if d > 0 && g.held == g.gate {
		close(g.release)
	}
}

func (g *httpGate) atOnce() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.most
}

// file_get_contents('http://...') and a raw HTTP client on stream_socket_client(), each
// unmodified: with pool.fiber_io eight requests of ONE worker are in the HTTP server at
// once (it answers none before it holds all eight); without it, the server never holds two,
// and eight 50 ms answers take eight times 50 ms.
func TestFiberIOHTTPConcurrent(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	const n = 8
	for _, via := range []string{"fgc", "raw"} {
		want := map[string]string{"fgc": "ok", "raw": "HTTP/1.0 200 OK | ok"}[via]
		t.Run(via+"/on", func(t *testing.T) {
			g := startHTTPGate(t, n)
			s := startFerry(t, fiberIOApp(true, "fiberio_http.php"))
			expectBodies(t, s, <-inBackground(n, func(int) string { return fmtURL(s, "/%s?addr=%s&path=/gate", via, g.addr) }), want)
			if got := g.atOnce(); got != n {
				t.Fatalf("the HTTP server held at most %d requests at once, want %d", got, n)
			}
		})
		t.Run(via+"/off", func(t *testing.T) {
			g := startHTTPGate(t, 0)
			s := startFerry(t, fiberIOApp(false, "fiberio_http.php"))
			start := time.Now()
			expectBodies(t, s, <-inBackground(n, func(int) string { return fmtURL(s, "/%s?addr=%s&path=/sleep?ms=50", via, g.addr) }),
				strings.Replace(want, "ok", "slept", 1))
			if got := g.atOnce(); got != 1 {
				t.Fatalf("without fiber_io the HTTP server held %d requests at once, want 1", got)
			}
			if took := time.Since(start); took < n*50*time.Millisecond {
				t.Fatalf("%d serialized 50 ms answers took %v", n, took)
			}
		})
	}
}

// The HTTP clients' failures are the same with the hooks on as off, to the byte: a refused
// connect, a 500 answer, a connection the server drops mid-header, a read timeout (the http
// context's timeout, stream_set_timeout(), and default_socket_timeout alone). With the hooks
// on, the worker serves another request while one waits for its timeout.
func TestFiberIOHTTPErrors(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	g := startHTTPGate(t, 0)
	refused := fmt.Sprintf("127.0.0.1:%d", freePort(t))
	cases := []struct{ name, path, want string }{
		{"refused-fgc", "/fgc?addr=" + refused, "Connection refused"},
		{"refused-raw", "/raw?addr=" + refused, "error: connect: 111 Connection refused"},
		{"500-fgc", "/fgc?addr=" + g.addr + "&path=/fail", "HTTP/1.1 500 Internal Server Error"},
		{"500-raw", "/raw?addr=" + g.addr + "&path=/fail", "HTTP/1.0 500 Internal Server Error | broken\n"},
		{"drop-fgc", "/fgc?addr=" + g.addr + "&path=/drop", ""}, // PHP gives "" for half a header
		{"drop-raw", "/raw?addr=" + g.addr + "&path=/drop", "HTTP/1.1 200 OK | "},
		{"context-timeout", "/fgc?to=0.3&addr=" + g.addr + "&path=/hang", "HTTP request failed"},
		{"stream_set_timeout", "/raw?to=0.3&addr=" + g.addr + "&path=/hang", "error: timed out"},
		{"default_socket_timeout", "/raw?dst=1&addr=" + g.addr + "&path=/hang", "error: timed out"},
	}
	off := map[string]string{}
	for _, on := range []bool{false, true} {
		s := startFerry(t, fiberIOApp(on, "fiberio_http.php"))
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/%v", c.name, on), func(t *testing.T) {
				start := time.Now()
				waiting := inBackground(1, func(int) string { return s.url + c.path })
				if on && strings.Contains(c.path, "/hang") {
					// Another request, served while the first waits out its timeout.
					servedBeside(t, s.url+"/fgc?addr="+g.addr+"&path=/sleep?ms=0", "slept", waiting)
				}
				f := <-waiting
				if f.err != nil || !strings.Contains(f.bodies[0], c.want) {
					t.Fatalf("%s answered %q (%v), want %q in it", c.path, f.bodies, f.err, c.want)
				}
				if !on {
					off[c.name] = f.bodies[0]
				} else if f.bodies[0] != off[c.name] {
					t.Fatalf("%s answered %q with the hooks on, %q with them off", c.path, f.bodies[0], off[c.name])
				}
				if took := time.Since(start); strings.Contains(c.path, "/hang") && took < 300*time.Millisecond {
					t.Fatalf("%s timed out after %v, sooner than asked", c.path, took)
				}
			})
		}
	}
}
