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
