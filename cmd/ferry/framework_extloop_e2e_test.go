package main

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Debian's Symfony 5.4 and Laravel 8.83 (the php/symfony and php/laravel test
// apps) with ext/ferry: both integrations run kernel.terminate / terminating()
// callbacks from a worker terminate hook, and such workers were left to the
// SDK's PHP loop. Their requests must now be served by the extension's loop
// (GET /via names the loop that called the controller), with the answer sent
// while the terminate work still runs: it waits on a FIFO the test writes to
// only once it has the answer.
func TestSymfonyAndLaravelRunOnTheExtensionLoopWithTheirTerminateHooks(t *testing.T) {
	so := extensionSO(t)
	t.Setenv("FERRY_PHP_EXTENSION", so)
	apps := map[string]struct{ pool, released string }{
		"Symfony": {`  dir: "%DIR%/../../php/symfony/tests/app"
  command: php public/index.php
  env:
    APP_ENV: prod
    APP_DEBUG: "0"
    APP_RUNTIME: Ferry\Symfony\Runtime
    APP_VAR_DIR: "` + t.TempDir() + `"
`, "[app] terminate listener released, called from the ext loop"},
		"Laravel": {`  dir: "%DIR%/../../php/laravel/tests/app"
  command: php %DIR%/../../php/laravel/bin/ferry-laravel %DIR%/../../php/laravel/tests/app
  env:
    APP_ENV: production
    APP_DEBUG: "false"
`, "[app] terminating callback released, called from the ext loop"},
	}
	for name, app := range apps {
		t.Run(name, func(t *testing.T) {
			s := startFerry(t, "server:\n  address: \"%ADDR%\"\nadmin:\n  socket: \"%ADMIN%\"\npool:\n"+app.pool+"  num_workers: 1\n")
			fifo := filepath.Join(t.TempDir(), "go")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				// A failed test may leave the hook waiting: release it, so the worker can stop.
				if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.WriteString("go\n")
					f.Close()
				}
			})
			// The answer comes while the terminate work waits on the FIFO: nothing has
			// been written to it yet.
			resp, body := get(t, s.url+"/via?wait="+url.QueryEscape(fifo))
			expectStatus(t, resp, body, 200)
			if body != "ext" {
				t.Fatalf("/via was served by the %q loop, want ext/ferry's", body)
			}
			if strings.Contains(s.logText(), app.released) {
				t.Fatalf("the terminate work finished before the test released it:\n%s", s.logText())
			}
			go func() {
				// Blocks until the hook has opened its end.
				if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
					f.WriteString("go\n")
					f.Close()
				}
			}()
			until(t, "the terminate work's end", 20*time.Second, func() bool {
				return strings.Contains(s.logText(), app.released)
			})
			resp, body = get(t, s.url+"/via")
			expectStatus(t, resp, body, 200)
			if body != "ext" {
				t.Fatalf("after the hook, /via was served by the %q loop, want ext/ferry's", body)
			}
		})
	}
}
