package config

import (
	"os"
	"path/filepath"
	"testing"
)

// The test's working directory is internal/config, never the temp dir the
// file is in: every relative path must be found beside the file.
func TestLoadResolvesPathsAgainstTheFile(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"public", "up", "app", "src", "logs"} {
		os.Mkdir(filepath.Join(dir, d), 0o755)
	}
	for _, f := range []string{"cert.pem", "key.pem"} {
		os.WriteFile(filepath.Join(dir, f), nil, 0o644)
	}
	path := filepath.Join(dir, "ferry.yaml")
	os.WriteFile(path, []byte(`server:
  static: {dir: public}
  uploads: {dir: up}
  tls: {address: ":8443", cert: cert.pem, key: ./key.pem}
  access_log: {enabled: true, path: logs/access.log}
  watch: ["src/**/*.php", "/tmp/*.php"]
pool:
  dir: app
  command: php worker.php
  php: {preload: preload.php, extension: ext/ferry.so}
admin: {socket: run/ferry.sock}
log: {output: logs/ferry.log}
`), 0o644)
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	at := func(p string) string { return filepath.Join(dir, p) }
	for got, want := range map[*string]string{
		&c.Server.Static.Dir:       at("public"),
		&c.Server.Uploads.Dir:      at("up"),
		&c.Server.TLS.Cert:         at("cert.pem"),
		&c.Server.TLS.Key:          at("key.pem"),
		&c.Server.AccessLog.Path:   at("logs/access.log"),
		&c.Server.Watch[0]:         at("src/**/*.php"),
		&c.Server.Watch[1]:         "/tmp/*.php",
		&c.Pool.Dir:                at("app"),
		&c.Pool.PHP.Preload:        at("app/preload.php"), // PHP runs in pool.dir
		&c.Pool.PHP.Extension:      at("ext/ferry.so"),
		&c.Admin.Socket:            at("run/ferry.sock"),
		&c.Log.Output:              at("logs/ferry.log"),
		&c.Pool.Command[1]:         "worker.php", // PHP's to resolve, in pool.dir
		&c.Server.AccessLog.Format: "json",
	} {
		if *got != want {
			t.Errorf("got %q, want %q", *got, want)
		}
	}
}

// What names no file stays as it is, and pool.dir defaults to the file's
// directory, where the workers then run.
func TestLoadKeepsSpecialValues(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ferry.yaml")
	os.WriteFile(path, []byte("admin: {socket: \"\"}\nlog: {output: stdout}\n"), 0o644)
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Admin.Socket != "" || c.Log.Output != "stdout" || c.Server.AccessLog.Path != "stderr" ||
		c.Server.Static.Dir != "" || c.Pool.Dir != dir || c.Pool.PHP.Extension != ExtensionAuto {
		t.Fatalf("%+v %+v %+v", c.Admin, c.Log, c.Pool)
	}
	// Parse has no file: the working directory's meaning, as before.
	if c := mustParse(t, "pool: {dir: .}\nadmin: {socket: x.sock}\n"); c.Pool.Dir != "." || c.Admin.Socket != "x.sock" {
		t.Fatalf("Parse resolved paths: %q %q", c.Pool.Dir, c.Admin.Socket)
	}
}

func TestLoadAnyResolvesRoadRunnerPaths(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "public"), 0o755)
	path := filepath.Join(dir, ".rr.yaml")
	os.WriteFile(path, []byte("version: \"3\"\nserver: {command: php worker.php}\nhttp:\n  address: 127.0.0.1:0\n  static: {dir: public}\n"), 0o644)
	c, _, rr, err := LoadAny(path)
	if err != nil || !rr {
		t.Fatal(rr, err)
	}
	if c.Server.Static.Dir != filepath.Join(dir, "public") || c.Pool.Dir != dir || c.Admin.Socket != filepath.Join(dir, "ferry.sock") {
		t.Fatalf("%q %q %q", c.Server.Static.Dir, c.Pool.Dir, c.Admin.Socket)
	}
}
