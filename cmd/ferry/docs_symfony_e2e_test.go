package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/symfony.md's "Without Composer" route only pointed at the test app's
// files; users offline or on Debian's packages had nothing to copy. This runs
// the three PHP blocks the section now gives, as written, on an app whose own
// autoloader knows nothing of Ferry, and serves it with the steps' ferry.yaml,
// serve and reload commands as written, from another directory.
func TestSymfonyDocsWithoutComposerRouteServes(t *testing.T) {
	wd, _ := os.Getwd()
	root := filepath.Clean(filepath.Join(wd, "../.."))
	doc, err := os.ReadFile(filepath.Join(root, "docs/symfony.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "### Without Composer\n")
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

	app := t.TempDir()
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
	// Steps 4, 6 and 7: the ferry.yaml block at the app's root, serve and
	// reload as written, run from another directory.
	_, steps, _ := strings.Cut(string(doc), "## From an existing app to `ferry serve`\n")
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
