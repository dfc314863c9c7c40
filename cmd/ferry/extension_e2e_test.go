package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// extensionSO builds ext/ferry (incrementally: under a second when built) and
// returns the path of ferry.so. Without phpize the extension cannot exist, and
// Ferry runs pure PHP: the tests that need it are skipped.
func extensionSO(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("phpize"); err != nil {
		t.Skip("phpize not found (Debian: php8.2-dev): ext/ferry cannot be built")
	}
	out, err := exec.Command("../../ext/ferry/build.sh").Output()
	if err != nil {
		t.Fatalf("ext/ferry/build.sh: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	so := lines[len(lines)-1]
	if _, err := os.Stat(so); err != nil {
		t.Fatalf("build.sh printed %q: %v", so, err)
	}
	return so
}

// extConfig serves testdata/ext.php, which reports whether ext/ferry is
// loaded and sets a header with PHP's header(), which only the extension
// carries into the answer.
func extConfig(extension string) string {
	return strings.Replace(appConfig(""), "testdata/app.php", "testdata/ext.php", 1) +
		"  php:\n    extension: " + extension + "\n"
}

func expectExtension(t *testing.T, s *server, loaded bool) {
	t.Helper()
	resp, body := get(t, s.url+"/")
	expectStatus(t, resp, body, 200)
	want, header := "ferry=0", ""
	if loaded {
		want, header = "ferry=1", "yes"
	}
	if body != want || resp.Header.Get("X-Php-Header") != header {
		t.Fatalf("body %q, X-Php-Header %q; want %q and %q\n%s", body, resp.Header.Get("X-Php-Header"), want, header, s.logText())
	}
}

func TestExtensionLoadedFromAPath(t *testing.T) {
	so := extensionSO(t)
	s := startFerry(t, extConfig(so))
	expectExtension(t, s, true)
	if !strings.Contains(s.logText(), "ext/ferry: loaded from "+so) {
		t.Errorf("the log does not say where the extension came from:\n%s", s.logText())
	}
}

func TestExtensionOffAndAutoWithoutABuild(t *testing.T) {
	for _, mode := range []string{"off", "auto"} {
		t.Run(mode, func(t *testing.T) {
			// The test binary lives in a temp dir: auto finds no build next to it.
			s := startFerry(t, extConfig(mode))
			expectExtension(t, s, false)
		})
	}
}

// auto finds ../ext/ferry/.build/modules/ferry.so next to the binary, as in a
// checkout after `make build`; FERRY_PHP_EXTENSION=off overrides it.
func TestExtensionAutoFindsTheCheckoutBuild(t *testing.T) {
	so := extensionSO(t)
	root := t.TempDir()
	modules := filepath.Join(root, "ext", "ferry", ".build", "modules")
	if err := os.MkdirAll(modules, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(so, filepath.Join(modules, "ferry.so")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	copyFile(t, ferryBin, filepath.Join(root, "bin", "ferry"), 0o755)
	orig := ferryBin
	ferryBin = filepath.Join(root, "bin", "ferry")
	t.Cleanup(func() { ferryBin = orig })

	s := startFerry(t, extConfig("auto"))
	expectExtension(t, s, true)

	t.Setenv("FERRY_PHP_EXTENSION", "off")
	expectExtension(t, startFerry(t, extConfig("auto")), false)
}

func TestExtensionOnFailsAtStartWhenMissing(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ extension, want string }{
		"on, nothing built": {"\"on\"", "pool.php.extension is on, but ferry.so was not found (looked for "},
		"a missing path":    {dir + "/ferry.so", "ferry.so was not found (looked for " + dir + "/ferry.so;"},
		"not an extension":  {writeFile(t, dir, "bogus.so", "not ELF"), "does not load in php"},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := filepath.Join(t.TempDir(), "ferry.yaml")
			wd, _ := os.Getwd()
			yaml := strings.NewReplacer("%ADDR%", anyPort, "%ADMIN%", filepath.Join(dir, "a.sock"), "%DIR%", wd).Replace(extConfig(c.extension))
			if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(ferryBin, "serve", "-c", cfg)
			done := make(chan struct{})
			var out []byte
			var err error
			go func() { out, err = cmd.CombinedOutput(); close(done) }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				cmd.Process.Kill()
				<-done
				t.Fatalf("ferry serve did not stop on its own:\n%s", out)
			}
			if err == nil || !strings.Contains(string(out), c.want) || strings.Contains(string(out), "Ferry is serving") {
				t.Fatalf("want a failed start mentioning %q, got %v:\n%s", c.want, err, out)
			}
		})
	}
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestNoIni(t *testing.T) {
	for args, want := range map[string]bool{
		"-n w.php": true, "-d memory_limit=1G -n w.php": true, "w.php -n": false,
		"-d -n w.php": false, "-c /etc/php.ini w.php": false, "": false,
	} {
		if got := noIni(strings.Fields(args)); got != want {
			t.Errorf("noIni(%q) = %v, want %v", args, got, want)
		}
	}
}
