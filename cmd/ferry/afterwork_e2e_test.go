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
