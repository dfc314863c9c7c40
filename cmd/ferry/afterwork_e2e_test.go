package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A worker running terminate hooks after its answer is not free: the next
// request goes to a worker that can start it now, and the first one is back
// in rotation once its hooks end. In the PHP loop, in ext/ferry's and in
// Fiber mode.
func TestNextRequestAvoidsAWorkerRunningTerminateHooks(t *testing.T) {
	for _, c := range []struct{ name, extra string }{
		{"pure PHP", "  php:\n    extension: \"off\"\n"},
		{"ext/ferry", "  php:\n    extension: %SO%\n"},
		{"fibers", "  fibers: true\n  php:\n    extension: \"off\"\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if strings.Contains(c.extra, "%SO%") {
				c.extra = strings.Replace(c.extra, "%SO%", extensionSO(t), 1)
			}
			s := startFerry(t, strings.Replace(appConfig(c.extra), "testdata/app.php", "testdata/afterwork.php", 1))
			release := filepath.Join(t.TempDir(), "release")
			defer os.WriteFile(release, nil, 0o644) // a failed test does not leave the hook waiting
			resp, busy := get(t, s.url+"/slow?until="+release)
			expectStatus(t, resp, busy, 200)
			resp, other := get(t, s.url+"/")
			expectStatus(t, resp, other, 200)
			if other == busy {
				t.Fatalf("the request after /slow went to worker %s, still running /slow's terminate hook", busy)
			}
			if err := os.WriteFile(release, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			// Idle again, the first worker is the one picked first.
			deadline := time.Now().Add(10 * time.Second)
			for {
				resp, pid := get(t, s.url+"/")
				expectStatus(t, resp, pid, 200)
				if pid == busy {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("worker %s never took a request again after its hook ended:\n%s", busy, s.logText())
				}
			}
		})
	}
}

// A terminate hook that never ends is stopped by exec_ttl: routed around, its
// worker would otherwise be lost to the pool for good, where before the next
// request's exec_ttl ended it.
func TestTerminateHookPastExecTTLKillsTheWorker(t *testing.T) {
	s := startFerry(t, strings.Replace(appConfig("  exec_ttl: 1s\n"), "testdata/app.php", "testdata/afterwork.php", 1))
	never := filepath.Join(t.TempDir(), "never")
	resp, busy := get(t, s.url+"/slow?until="+never)
	expectStatus(t, resp, busy, 200)
	// exec_ttl is 1 s and waitLog waits 2 s: a few turns leave room for a busy machine.
	killed := false
	said := "terminate hooks exceeded exec_ttl"
	if directMode {
		said = "request exceeded exec_ttl" // the server sees no request, nor its hooks, there
	}
	for i := 0; i < 4 && !killed; i++ {
		killed = waitLog(s, said) && waitLog(s, "worker died")
	}
	if !killed {
		t.Fatalf("the worker stuck in its hook was not killed:\n%s", s.logText())
	}
	if !strings.Contains(s.logText(), "pid="+busy) {
		t.Fatalf("another worker than %s was killed:\n%s", busy, s.logText())
	}
}

// Flagging an answer that hooks follow costs no copy of it: a 45 MiB page
// echoed with no buffer left fits the 128M memory_limit in the output capture
// and its frame, and did not once the frame was copied to set one bit of its
// header (the worker died: 502).
func TestFlaggingABigAnswerDoesNotCopyIt(t *testing.T) {
	s := startFerry(t, strings.Replace(appConfig("  php:\n    extension: "+extensionSO(t)+"\n"),
		"testdata/app.php", "testdata/afterwork.php", 1))
	resp, body := get(t, s.url+"/echo?mb=45")
	expectStatus(t, resp, body, 200)
	if len(body) != 45<<20 {
		t.Fatalf("body of %d bytes, want %d", len(body), 45<<20)
	}
}
