package main

import (
	"strings"
	"testing"
)

// fiberExtConfig serves testdata/fiberext.php in Fiber mode with one worker, so that
// every request of a test meets the same process.
func fiberExtConfig(env string) string {
	yaml := strings.Replace(appConfig("  fibers: true\n"+env), "testdata/app.php", "testdata/fiberext.php", 1)
	return strings.Replace(yaml, "num_workers: 2", "num_workers: 1", 1)
}

// With ext/ferry, Fiber mode serves the usual request in C (ext/ferry's Fibers call the
// handler), a request that waits there lets the next one through on the same worker, and
// FERRY_EXT_LOOP=0 keeps the PHP runner, which answers the same.
func TestFiberModeRunsOnTheExtension(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", extensionSO(t))
	for via, env := range map[string]string{"ext": "", "php": "  env:\n    FERRY_EXT_LOOP: \"0\"\n"} {
		t.Run(via, func(t *testing.T) {
			if via == "ext" {
				frontOnly(t, "in direct mode PHP runs every request of a Fiber-mode worker; ext/ferry runs its connections")
			}
			s := startFerry(t, fiberExtConfig(env))
			resp, body := get(t, s.url+"/")
			expectStatus(t, resp, body, 200)
			if body != via {
				t.Fatalf("GET / answered %q, want %q (who called the handler)\n%s", body, via, s.logText())
			}
			resp, body = get(t, s.url+"/echo")
			expectStatus(t, resp, body, 200)
			if body != "echoed "+via {
				t.Fatalf("GET /echo answered %q, want %q", body, "echoed "+via)
			}

			slept := make(chan string, 1)
			go func() {
				resp, err := client.Get(s.url + "/sleep?ms=1000")
				if err != nil {
					slept <- err.Error()
					return
				}
				defer resp.Body.Close()
				var b strings.Builder
				buf := make([]byte, 256)
				for {
					n, err := resp.Body.Read(buf)
					b.Write(buf[:n])
					if err != nil {
						break
					}
				}
				slept <- b.String()
			}()
			if !waitLog(s, "sleeping in /sleep") {
				t.Fatalf("/sleep did not start:\n%s", s.logText())
			}
			resp, body = get(t, s.url+"/")
			expectStatus(t, resp, body, 200)
			select {
			case got := <-slept:
				t.Fatalf("/sleep was answered (%q) before the request sent while it waited", got)
			default:
			}
			if body != via {
				t.Fatalf("GET / beside a waiting request answered %q, want %q", body, via)
			}
			// Once nothing waits, the extension takes over again.
			if got := <-slept; got != "slept via "+via {
				t.Fatalf("/sleep answered %q", got)
			}
			resp, body = get(t, s.url+"/")
			expectStatus(t, resp, body, 200)
			if body != via {
				t.Fatalf("GET / after the wait answered %q, want %q", body, via)
			}
		})
	}
}
