package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// appDir writes a project as a user lays one out: ferry.yaml beside the
// worker, the public files, the preload script and the log directory, every
// path in the file relative. It returns the absolute path of ferry.yaml.
func appDir(t *testing.T, extra string) string {
	t.Helper()
	dir := t.TempDir()
	wd, _ := os.Getwd()
	files := map[string]string{
		"public/hello.txt": "static hello\n",
		"worker.php":       fmt.Sprintf("<?php require %q;\n", filepath.Join(wd, "testdata", "app.php")),
		"preload.php":      mustRead(t, filepath.Join(wd, "testdata", "preload.php")),
		"logs/.keep":       "",
		"uploads/.keep":    "",
	}
	for name, body := range files {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "ferry.yaml")
	yaml := `server:
  address: "` + anyPort + `"
  static: {dir: public}
  uploads: {dir: uploads}
  access_log: {enabled: true, path: logs/access.log}
pool:
  command: [php, worker.php]
  num_workers: 1
  php: {preload: preload.php}
admin:
  socket: admin.sock
` + extra
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// serveFrom starts `ferry serve -c cfg` with its working directory elsewhere.
func serveFrom(t *testing.T, cfg, wd string) *server {
	t.Helper()
	s := &server{cfg: cfg, admin: filepath.Join(filepath.Dir(cfg), "admin.sock")}
	s.cmd = exec.Command(ferryBin, "serve", "-c", cfg)
	s.cmd.Dir = wd
	run(t, s)
	return s
}

// ferryCmd runs a ferry verb from wd and returns its combined output.
func ferryCmd(t *testing.T, wd string, args ...string) (string, error) {
	t.Helper()
	out, err := newCmd(wd, args...).CombinedOutput()
	return string(out), err
}

func newCmd(wd string, args ...string) *exec.Cmd {
	c := exec.Command(ferryBin, args...)
	c.Dir = wd
	return c
}

// Every relative path of a config file is relative to the file's directory,
// whatever directory ferry runs from. Before, `ferry serve -c
// /abs/ferry.yaml` and `ferry reload -c /abs/ferry.yaml` from elsewhere
// failed on `server.static.dir: directory "public": no such file or
// directory`, and the workers would have looked for worker.php in the shell's
// directory.
func TestConfigPathsAreRelativeToTheFile(t *testing.T) {
	cfg := appDir(t, "")
	elsewhere := t.TempDir()
	s := serveFrom(t, cfg, elsewhere)
	dir := filepath.Dir(cfg)

	if _, body := get(t, s.url+"/hello.txt"); body != "static hello\n" {
		t.Fatalf("static file: %q", body)
	}
	if _, body := get(t, s.url+"/opcache"); body != "opcache on, preloaded" {
		t.Fatalf("worker with a relative preload: %q", body)
	}
	if _, err := os.Stat(filepath.Join(dir, "admin.sock")); err != nil {
		t.Fatalf("admin socket not beside ferry.yaml: %v", err)
	}
	for _, verb := range []string{"reload", "workers"} {
		out, err := ferryCmd(t, t.TempDir(), verb, "-c", cfg)
		if err != nil {
			t.Fatalf("ferry %s -c %s from another directory: %v\n%s", verb, cfg, err, out)
		}
		if verb == "reload" && !strings.Contains(out, "reloaded 1 workers") {
			t.Fatalf("ferry reload: %q", out)
		}
	}
	if _, body := get(t, s.url+"/pid"); body == "" {
		t.Fatal("no answer after the reload")
	}
	until(t, "the access log line", 10*time.Second, func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "logs", "access.log"))
		return strings.Contains(string(b), "/hello.txt")
	})
}

// A config in the working directory, paths relative to it, the way the
// README starts: the same as before.
func TestConfigPathsInTheWorkingDirectory(t *testing.T) {
	cfg := appDir(t, "")
	dir := filepath.Dir(cfg)
	s := &server{cfg: "ferry.yaml", admin: filepath.Join(dir, "admin.sock")}
	s.cmd = exec.Command(ferryBin, "serve")
	s.cmd.Dir = dir
	run(t, s)
	if _, body := get(t, s.url+"/hello.txt"); body != "static hello\n" {
		t.Fatalf("static file: %q", body)
	}
	if out, err := ferryCmd(t, dir, "reload"); err != nil || !strings.Contains(out, "reloaded 1 workers") {
		t.Fatalf("ferry reload: %v %s", err, out)
	}
}
