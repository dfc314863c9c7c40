package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A Symfony app that kept its pre-runtime public/index.php (it builds the
// Request, handles it, sends the page and ends) was refused at start with "the
// worker exited or closed the relay before the handshake" and the page quoted:
// nothing said that the front controller must return the kernel closure.
func TestOldFrontControllerIsToldToReturnTheKernelClosure(t *testing.T) {
	wd, _ := os.Getwd()
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "public"), 0o755)
	index := `<?php
use App\Kernel;
use Symfony\Component\HttpFoundation\Request;

require '` + wd + `/../../php/symfony/tests/app/autoload.php';

$kernel = new Kernel($_SERVER['APP_ENV'], (bool) $_SERVER['APP_DEBUG']);
$request = Request::createFromGlobals();
$response = $kernel->handle($request);
$response->send();
$kernel->terminate($request, $response);
`
	if err := os.WriteFile(filepath.Join(dir, "public/index.php"), []byte(index), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "ferry.yaml")
	yaml := `server:
  address: "` + anyPort + `"
admin:
  socket: "` + filepath.Join(dir, "admin.sock") + `"
pool:
  command: php public/index.php
  env:
    APP_ENV: prod
    APP_DEBUG: "0"
    APP_RUNTIME: Ferry\Symfony\Runtime
    APP_VAR_DIR: "` + filepath.Join(dir, "var") + `"
  num_workers: 2
`
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, ferryBin, "serve", "-c", cfg).CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ctx.Err() != nil {
		t.Fatalf("ferry started with a front controller that is not a worker: %v\n%s", err, out)
	}
	for _, want := range []string{
		"public/index.php ran to its end without serving Ferry's requests",
		"return function (array $context) { return new Kernel(...); };",
		`Ferry\Symfony\Runtime`,
		"Symfony on Ferry", // the page the script printed, still quoted
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the error does not say %q:\n%s", want, out)
		}
	}
	// Both workers fail alike: said once (it was once per worker, one per CPU
	// with the docs' num_workers: 0), as docs/symfony.md quotes it.
	if n := strings.Count(string(out), "ran to its end"); n != 1 || !strings.Contains(string(out), "ferry: 2 workers failed alike: worker ") {
		t.Errorf("want the failure said once for the 2 workers, got %d times:\n%s", n, out)
	}
}
