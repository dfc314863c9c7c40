package main

import (
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
