package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// docs/symfony.md's "Without Composer" route only pointed at the test app's
// files; users offline or on Debian's packages had nothing to copy. This runs
// the three PHP blocks the section now gives, as written, on an app whose own
// autoloader knows nothing of Ferry, and serves it with the steps' ferry.yaml,
// serve and reload commands as written, from another directory.
func TestSymfonyDocsWithoutComposerRouteServes(t *testing.T) {
	doc, app := symfonyDocsApp(t)
	// Steps 4, 6 and 7: the ferry.yaml block at the app's root, serve and
	// reload as written, run from another directory.
	_, steps, _ := strings.Cut(doc, "## From an existing app to `ferry serve`\n")
	steps, _, _ = strings.Cut(steps, "\n## ")
	y := regexp.MustCompile("(?s)```yaml\n(.*?)```\n").FindStringSubmatch(steps)
	if y == nil || !strings.Contains(y[1], "    APP_DEBUG: \"0\"\n") {
		t.Fatal("no ferry.yaml block with APP_DEBUG in docs/symfony.md's steps")
	}
	yaml := strings.NewReplacer("0.0.0.0:8080", anyPort, "num_workers: 0", "num_workers: 1",
		"    APP_DEBUG: \"0\"\n", "    APP_DEBUG: \"0\"\n    APP_VAR_DIR: \""+filepath.Join(app, "var")+"\"\n").Replace(y[1])
	cfg := filepath.Join(app, "ferry.yaml")
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	s := &server{cfg: cfg}
	s.cmd = exec.Command(ferryBin, docArgs(docCommand(t, steps, "6. ", "serve"), app)...)
	s.cmd.Dir = elsewhere
	run(t, s)
	resp, body := get(t, s.url+"/hello/docs")
	expectStatus(t, resp, body, 200)
	if !strings.Contains(body, `"hello":"docs"`) || !strings.Contains(body, `"script_name":"\/index.php"`) {
		t.Fatalf("not the app's answer: %s", body)
	}
	reload := exec.Command(ferryBin, docArgs(docCommand(t, steps, "7. ", "reload"), app)...)
	reload.Dir = elsewhere
	if out, err := reload.CombinedOutput(); err != nil || !strings.Contains(string(out), "reloaded 1 workers") {
		t.Fatalf("step 7 from another directory: %v\n%s", err, out)
	}
	resp, body = get(t, s.url+"/hello/again")
	expectStatus(t, resp, body, 200)
}

// symfonyDocsApp writes the Without Composer section's three files, as written,
// into an app whose own autoloader knows nothing of Ferry; it returns the doc
// and the app's directory.
func symfonyDocsApp(t *testing.T) (doc, app string) {
	t.Helper()
	wd, _ := os.Getwd()
	root := filepath.Clean(filepath.Join(wd, "../.."))
	raw, err := os.ReadFile(filepath.Join(root, "docs/symfony.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(raw), "### Without Composer\n")
	if !ok {
		t.Fatal("docs/symfony.md has no \"### Without Composer\" section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)\n   ```php\n(.*?)\n   ```\n").FindAllStringSubmatch(section, -1) {
		blocks = append(blocks, strings.ReplaceAll("\n"+m[1], "\n   ", "\n")[1:])
	}
	if len(blocks) != 3 {
		t.Fatalf("want 3 php blocks (autoloader lines, autoload_runtime.php, public/index.php), found %d", len(blocks))
	}

	app = t.TempDir()
	// The app's own autoloader as it was before Ferry: Debian's Symfony and App\.
	own := `<?php
require_once '/usr/share/php/Symfony/Bundle/FrameworkBundle/autoload.php';
spl_autoload_register(static function (string $class): void {
    if (strncmp($class, 'App\\', 4) === 0) {
        $file = '` + root + `/php/symfony/tests/app/src/' . str_replace('\\', '/', substr($class, 4)) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});
`
	files := map[string]string{
		"autoload.php":         own + strings.ReplaceAll(blocks[0], "/path/to/ferry", root) + "\n",
		"autoload_runtime.php": blocks[1] + "\n",
		"public/index.php":     blocks[2] + "\n",
	}
	os.Mkdir(filepath.Join(app, "public"), 0o755)
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(app, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return string(raw), app
}

// "The same file still serves under PHP's built-in server": run with the
// command the doc gives, the app answers in prod and static files are served.
// The doc said only "php -S"; started as `php -S ... -t public public/index.php`
// every static file answered 500, and without variables_order=EGPCS the app
// ran in dev.
func TestSymfonyDocsBuiltinServerCommandServes(t *testing.T) {
	doc, app := symfonyDocsApp(t)
	m := regexp.MustCompile("`(php [^`]*-S 127\\.0\\.0\\.1:8000[^`]*)`").FindStringSubmatch(doc)
	if m == nil {
		t.Fatal("docs/symfony.md gives no `php ... -S 127.0.0.1:8000 ...` command")
	}
	if err := os.WriteFile(filepath.Join(app, "public/style.css"), []byte("body{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Port 0: php -S picks a free one and names it in its "started" line.
	args := strings.Fields(strings.Replace(m[1], "127.0.0.1:8000", "127.0.0.1:0", 1))
	php := exec.Command(args[0], args[1:]...)
	php.Dir = app
	php.Env = append(os.Environ(), "APP_ENV=prod", "APP_DEBUG=0", "APP_VAR_DIR="+filepath.Join(app, "var"))
	started := make(chan struct{})
	var once sync.Once
	var log strings.Builder
	var addr string
	startedRe := regexp.MustCompile(`Development Server \(http://(127\.0\.0\.1:\d+)\) started`)
	php.Stderr = &lineWriter{line: func(line string) {
		log.WriteString(line + "\n")
		if m := startedRe.FindStringSubmatch(line); m != nil {
			once.Do(func() { addr = m[1]; close(started) })
		}
	}}
	if err := php.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { php.Wait(); close(exited) }()
	t.Cleanup(func() { php.Process.Kill(); <-exited })
	select {
	case <-started:
	case <-exited:
		t.Fatalf("%s exited:\n%s", m[1], log.String())
	case <-time.After(10 * time.Second):
		t.Fatalf("%s did not start within 10s", m[1])
	}
	resp, body := get(t, "http://"+addr+"/hello/docs")
	expectStatus(t, resp, body, 200)
	if !strings.Contains(body, `"hello":"docs"`) {
		t.Fatalf("not the app's answer: %s", body)
	}
	if _, err := os.Stat(filepath.Join(app, "var/cache/prod")); err != nil {
		t.Fatalf("APP_ENV=prod from the environment was not seen (no var/cache/prod): %v", err)
	}
	resp, body = get(t, "http://"+addr+"/style.css")
	expectStatus(t, resp, body, 200)
	if body != "body{}\n" {
		t.Fatalf("static file: %q", body)
	}
}
