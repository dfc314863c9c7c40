package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

type logRecord map[string]any

func (r logRecord) s(k string) string { v, _ := r[k].(string); return v }

// workerOutput waits until the server has logged a "worker output" record
// whose line starts with prefix and returns every such record so far.
func workerOutput(t *testing.T, s *server, prefix string) []logRecord {
	t.Helper()
	var found []logRecord
	until(t, "a worker output record starting "+prefix, 20*time.Second, func() bool {
		found = found[:0]
		for _, line := range strings.Split(s.logText(), "\n") {
			var r logRecord
			if json.Unmarshal([]byte(line), &r) != nil || r.s("msg") != "worker output" {
				continue
			}
			if strings.HasPrefix(r.s("line"), prefix) {
				found = append(found, r)
			}
		}
		return len(found) > 0
	})
	return found
}

// Debian's Symfony 5.4 (the php/symfony test app): an uncaught exception is
// logged by its Logger as "[critical] ...", a fatal error adds its HTML error
// page on the worker's stdout. Each is one record at ERROR, the page included.
func TestSymfonyWorkerLogsKeepTheirLevel(t *testing.T) {
	s := startFerry(t, `server:
  address: "%ADDR%"
admin:
  socket: "%ADMIN%"
log:
  format: json
pool:
  dir: "%DIR%/../../php/symfony/tests/app"
  command: php -d memory_limit=64M public/index.php
  env:
    APP_ENV: prod
    APP_DEBUG: "0"
    APP_RUNTIME: Ferry\Symfony\Runtime
    APP_VAR_DIR: "`+t.TempDir()+`"
  num_workers: 1
`)
	resp, body := get(t, s.url+"/fail")
	expectStatus(t, resp, body, 500)
	crit := workerOutput(t, s, `[critical] Uncaught PHP Exception RuntimeException: "controller failed on purpose"`)
	if len(crit) != 1 || crit[0].s("level") != "ERROR" || crit[0].s("level_name") != "CRITICAL" {
		t.Fatalf("Symfony's critical record: %v\n%s", crit, s.logText())
	}

	resp, _ = get(t, s.url+"/fatal")
	if resp.StatusCode < 500 {
		t.Fatalf("/fatal answered %d", resp.StatusCode)
	}
	pages := workerOutput(t, s, "<!DOCTYPE html>")
	// The SDK retires a worker after a fatal error: it stops rather than dies.
	until(t, "the worker's exit", 20*time.Second, func() bool {
		return strings.Contains(s.logText(), `"msg":"worker stopped"`) || strings.Contains(s.logText(), `"msg":"worker died"`)
	})
	pages = workerOutput(t, s, "<!DOCTYPE html>")
	if len(pages) != 1 || pages[0].s("level") != "ERROR" || !strings.HasSuffix(pages[0].s("line"), "</html>") ||
		!strings.Contains(pages[0].s("line"), "Oops! An Error Occurred") {
		t.Fatalf("the error page is not one ERROR record:\n%s", s.logText())
	}
	if strings.Contains(s.logText(), `"line":"</html>"`) || strings.Contains(s.logText(), `"line":"<body>"`) {
		t.Fatalf("the error page's lines were logged one by one:\n%s", s.logText())
	}
	oom := workerOutput(t, s, `[critical] Uncaught PHP Exception Symfony\Component\ErrorHandler\Error\OutOfMemoryError`)
	// PHP's message once: the SDK turns log_errors off where display_errors
	// already prints to stderr.
	fatal := workerOutput(t, s, "Fatal error: Allowed memory size")
	if len(oom) != 1 || oom[0].s("level") != "ERROR" || len(fatal) != 1 || fatal[0].s("level") != "ERROR" {
		t.Fatalf("the fatal error's records:\n%s", s.logText())
	}
}

// Debian's Laravel 8.83 (the php/laravel test app) logs to its stderr channel
// with Monolog's LineFormatter, the exception's trace on lines of its own:
// one record at ERROR, trace and closing brace included, Laravel's date dropped.
func TestLaravelWorkerLogsKeepTheirLevel(t *testing.T) {
	s := startFerry(t, `server:
  address: "%ADDR%"
admin:
  socket: "%ADMIN%"
log:
  format: json
pool:
  dir: "%DIR%/../../php/laravel/tests/app"
  command: php %DIR%/../../php/laravel/bin/ferry-laravel %DIR%/../../php/laravel/tests/app
  env:
    APP_ENV: production
    APP_DEBUG: "false"
  num_workers: 1
`)
	resp, body := get(t, s.url+"/boom")
	expectStatus(t, resp, body, 500)
	recs := workerOutput(t, s, "production.ERROR: boom from the test app")
	r := recs[0]
	if len(recs) != 1 || r.s("level") != "ERROR" || r.s("channel") != "production" ||
		!strings.Contains(r.s("line"), "\n[stacktrace]\n#0 ") || !strings.Contains(r.s("line"), "{main}\n\"}") {
		t.Fatalf("Laravel's error record: %v\n%s", recs, s.logText())
	}
	for _, part := range []string{`"line":"[stacktrace]`, `"line":"\"} "`, `"line":"#0 `} {
		if strings.Contains(s.logText(), part) {
			t.Fatalf("part of the record logged apart (%s):\n%s", part, s.logText())
		}
	}
}
