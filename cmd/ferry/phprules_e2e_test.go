package main

import (
	"io"
	"strings"
	"testing"
)

// phpRulesConfig serves testdata/phprules.php from one worker, so that every
// request of a test meets what the previous one left behind.
func phpRulesConfig(extra string) string {
	return strings.Replace(strings.Replace(appConfig(extra), "testdata/app.php", "testdata/phprules.php", 1),
		"num_workers: 2", "num_workers: 1", 1)
}

func expectBody(t *testing.T, s *server, path, want string) {
	t.Helper()
	resp, body := get(t, s.url+path)
	expectStatus(t, resp, body, 200)
	if body != want {
		t.Fatalf("GET %s: %q, want %q", path, body, want)
	}
}

// The CLI's php.ini (Debian's: memory_limit = -1) is no limit for a web
// worker: without max_memory or an ini entry it gets php.ini-production's.
func TestWorkersGetAWebMemoryLimit(t *testing.T) {
	for _, c := range []struct{ extra, want string }{
		{"", "128M"},
		{"  php:\n    ini:\n      memory_limit: 256M\n", "256M"},
		{"  max_memory: 64MiB\n", "67108864"},
	} {
		s := startFerry(t, phpRulesConfig(c.extra))
		expectBody(t, s, "/ini?name=memory_limit", c.want)
	}
}

// A request's writes into the superglobals are not the next one's, as under
// FPM: in the PHP loop, in ext/ferry's C loop and in Fiber mode.
func TestSuperglobalsDoNotCarryOver(t *testing.T) {
	for _, c := range []struct{ name, extra, via string }{
		{"pure PHP", "  php:\n    extension: \"off\"\n", "php"},
		{"ext/ferry", "  php:\n    extension: %SO%\n", "ext"},
		{"fibers", "  fibers: true\n  php:\n    extension: \"off\"\n", "php"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.via == "php" {
				frontOnly(t, "direct mode needs ext/ferry and sequential workers")
			}
			if strings.Contains(c.extra, "%SO%") {
				c.extra = strings.Replace(c.extra, "%SO%", extensionSO(t), 1)
			}
			s := startFerry(t, phpRulesConfig(c.extra))
			for range 2 {
				expectBody(t, s, "/leak?q=1", "written")
				expectBody(t, s, "/leaked", "[null,[],[],null,[],[]] "+c.via)
			}
		})
	}
}

// A PHP fatal error is the application's failure, answered 500 as under FPM,
// and the worker is replaced; only a worker that vanished (exit(), a crash)
// is the gateway's 502.
func TestFatalErrorAnswers500(t *testing.T) {
	for _, c := range []struct{ name, extra string }{
		{"pure PHP", "  php:\n    extension: \"off\"\n"},
		{"ext/ferry", "  php:\n    extension: %SO%\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if strings.Contains(c.extra, "%SO%") {
				c.extra = strings.Replace(c.extra, "%SO%", extensionSO(t), 1)
			}
			s := startFerry(t, phpRulesConfig(c.extra))
			_, pid := get(t, s.url+"/pid")
			resp, body := get(t, s.url+"/alloc?mb=200")
			expectStatus(t, resp, body, 500)
			if !waitLog(s, "worker stopped") {
				t.Fatalf("the worker was not retired:\n%s", s.logText())
			}
			resp, next := get(t, s.url+"/pid")
			expectStatus(t, resp, next, 200)
			if next == pid {
				t.Fatalf("pid %s served the request after its fatal error", pid)
			}
			if n := strings.Count(s.logText(), "Allowed memory size of 134217728 bytes exhausted"); n != 1 {
				t.Fatalf("PHP's fatal message logged %d times, want once:\n%s", n, s.logText())
			}
			if strings.Contains(s.logText(), "worker died") {
				t.Fatalf("a fatal error logged as a crash:\n%s", s.logText())
			}
			resp, body = get(t, s.url+"/exit")
			expectStatus(t, resp, body, 502)
			resp, body = get(t, s.url+"/pid")
			expectStatus(t, resp, body, 200)
		})
	}
}

// In Fiber mode a fatal error ends every request the worker holds: each gets 500.
func TestFatalErrorAnswersEveryFiber500(t *testing.T) {
	s := startFerry(t, phpRulesConfig("  fibers: true\n"))
	waiting := make(chan int, 1)
	go func() {
		resp, err := client.Get(s.url + "/wait?s=20")
		if err != nil {
			waiting <- 0
			return
		}
		resp.Body.Close()
		waiting <- resp.StatusCode
	}()
	if !waitLog(s, "suspended in /wait") {
		t.Fatalf("/wait did not start:\n%s", s.logText())
	}
	resp, body := get(t, s.url+"/alloc?mb=200")
	expectStatus(t, resp, body, 500)
	if code := <-waiting; code != 500 {
		t.Fatalf("the request suspended beside the fatal one: %d, want 500", code)
	}
}

// A fatal error after a streamed answer's head went out cannot change its
// status: the response is cut short, as for an exception while streaming, so
// the client sees it incomplete; the worker is replaced.
func TestFatalErrorCutsAStreamedAnswer(t *testing.T) {
	s := startFerry(t, phpRulesConfig(""))
	resp, err := client.Get(s.url + "/stream-alloc?mb=200")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "first part\n" || err == nil {
		t.Fatalf("status %d, body %q, read error %v: want 200, the first part, then a cut", resp.StatusCode, body, err)
	}
	if !waitLog(s, "worker stopped") {
		t.Fatalf("the worker was not retired:\n%s", s.logText())
	}
	expectBody(t, s, "/ini?name=memory_limit", "128M")
}
