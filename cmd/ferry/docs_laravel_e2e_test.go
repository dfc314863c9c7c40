package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/laravel.md walked as written on an app without vendor/ (Debian's
// framework, the "without Composer" command): its ferry.yaml at the app's root,
// step 5's serve and step 7's reload run from another directory. Step 7 was
// `bin/ferry reload` with no -c, which from the Ferry checkout reached no server.
func TestLaravelDocsWithoutComposerServesAndReloads(t *testing.T) {
	wd, _ := os.Getwd()
	root := filepath.Clean(filepath.Join(wd, "../.."))
	raw, err := os.ReadFile(filepath.Join(root, "docs/laravel.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, doc, _ := strings.Cut(string(raw), "## From an existing app to `ferry serve`\n")
	doc, _, _ = strings.Cut(doc, "\n## ")
	serveArgs := docCommand(t, doc, "5. ", "serve")
	reloadArgs := docCommand(t, doc, "7. ", "reload")
	m := regexp.MustCompile("(?s)```yaml\n(.*?)```\n").FindStringSubmatch(doc)
	if m == nil {
		t.Fatal("no ferry.yaml block in docs/laravel.md's steps")
	}
	cmd := regexp.MustCompile(`(?m)^(  command: ).*# without Composer: (.*)$`)
	if !cmd.MatchString(m[1]) {
		t.Fatalf("the ferry.yaml block has no \"# without Composer:\" command:\n%s", m[1])
	}
	yaml := cmd.ReplaceAllString(m[1], "${1}${2}")
	yaml = strings.NewReplacer("/path/to/ferry", root, "0.0.0.0:8080", anyPort, "num_workers: 0", "num_workers: 1").Replace(yaml)

	// The test app as a user on Debian's framework has it: no vendor/.
	app := filepath.Join(t.TempDir(), "app")
	if err := os.CopyFS(app, os.DirFS(filepath.Join(root, "php/laravel/tests/app"))); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(app, "vendor"))
	os.RemoveAll(filepath.Join(app, "storage"))
	cfg := filepath.Join(app, "ferry.yaml")
	if err := os.WriteFile(cfg, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	elsewhere := t.TempDir()
	s := &server{cfg: cfg}
	s.cmd = exec.Command(ferryBin, docArgs(serveArgs, app)...)
	s.cmd.Dir = elsewhere
	run(t, s)
	resp, body := get(t, s.url+"/hello/docs")
	expectStatus(t, resp, body, 200)

	reload := exec.Command(ferryBin, docArgs(reloadArgs, app)...)
	reload.Dir = elsewhere
	out, err := reload.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "reloaded 1 workers") {
		t.Fatalf("step 7, `bin/ferry %s` from another directory: %v\n%s", strings.Join(reloadArgs, " "), err, out)
	}
	resp, body = get(t, s.url+"/hello/again")
	expectStatus(t, resp, body, 200)
}

// docCommand is the `bin/ferry <verb> ...` of the numbered step, split in words.
func docCommand(t *testing.T, doc, step, verb string) []string {
	t.Helper()
	re := regexp.MustCompile("(?m)^" + regexp.QuoteMeta(step) + "(?s:.*?)`bin/ferry (" + verb + "[^`]*)`")
	m := re.FindStringSubmatch(doc)
	if m == nil {
		t.Fatalf("step %q gives no `bin/ferry %s` command", step, verb)
	}
	return strings.Fields(m[1])
}

// docArgs puts the app where the docs say /srv/app.
func docArgs(args []string, app string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = strings.ReplaceAll(a, "/srv/app", app)
	}
	return out
}
