package main

import (
	"strings"
	"testing"
)

// outputConfig serves testdata/<script> from one worker, so that each request
// meets what the previous one left behind.
func outputConfig(script, extra string) string {
	return strings.Replace(strings.Replace(appConfig(extra), "testdata/app.php", "testdata/"+script, 1),
		"num_workers: 2", "num_workers: 1", 1)
}

// `while (ob_get_level()) ob_end_clean();` answered 500 with ext/ferry: the
// SDK's capture buffer could not be removed, so the loop never ended. As under
// FPM with php.ini-production, a request now starts with one removable default
// buffer: the loop discards what came before, ends, and what follows is the
// answer. In ext/ferry's C loop and in the PHP loop, and on the same worker
// every request starts again at level 1 with nothing of the last one.
func TestOutputBufferLoopEndsAsUnderFPM(t *testing.T) {
	for _, c := range []struct{ name, env string }{
		{"C loop", ""},
		{"PHP loop", "  env:\n    FERRY_EXT_LOOP: \"0\"\n"},
		// FPM's setting in the worker's php.ini: its buffer is the bootstrap's, not the first request's.
		{"output_buffering in php.ini", "  php:\n    ini:\n      output_buffering: \"4096\"\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			php := "  php:\n"
			if strings.HasPrefix(c.env, php) {
				php, c.env = c.env, ""
			}
			s := startFerry(t, outputConfig("outputbuffers.php", c.env+php+"    extension: "+extensionSO(t)+"\n"))
			for range 2 {
				expectBody(t, s, "/download", "b")
				expectBody(t, s, "/state", "1 0 default output handler")
				expectBody(t, s, "/get-clean", "after;[before] level 0")
				expectBody(t, s, "/left-open", "one;two;returned")
				expectBody(t, s, "/state", "1 0 default output handler")
				expectBody(t, s, "/stream", "part1;echoed;part2")
			}
			if strings.Contains(s.logText(), "output buffer") {
				t.Fatalf("the worker complained about output buffers:\n%s", s.logText())
			}
		})
	}
	t.Run("PSR-7", func(t *testing.T) {
		s := startFerry(t, outputConfig("outputbuffers_psr7.php", "  php:\n    extension: "+extensionSO(t)+"\n"))
		for range 2 {
			expectBody(t, s, "/download", "b;returned")
			expectBody(t, s, "/state", "1")
		}
	})
}

// Without ext/ferry the SDK's buffer cannot be removed: the loop still fails
// that request with a 500 and a log line that says why and what to do.
func TestOutputBufferLoopWithoutTheExtensionFailsClearly(t *testing.T) {
	s := startFerry(t, outputConfig("outputbuffers.php", "  php:\n    extension: \"off\"\n"))
	resp, body := get(t, s.url+"/download")
	expectStatus(t, resp, body, 500)
	if !waitLog(s, "load ext/ferry") {
		t.Fatalf("the failure does not name ext/ferry:\n%s", s.logText())
	}
	resp, body = get(t, s.url+"/state")
	expectStatus(t, resp, body, 200)
}
