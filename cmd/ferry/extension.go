package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/ferry-php/ferry/internal/config"
)

// extensionEnv replaces pool.php.extension when set: the PHP test suites run
// once with "off" so that pure PHP stays the reference even in the workers a
// test's ferry starts.
const extensionEnv = "FERRY_PHP_EXTENSION"

// resolveExtension decides whether the workers load ext/ferry (pool.php.extension,
// docs/config.md) and records the file with cfg.SetExtensionFile. It returns a
// line for the log. An error means the config demands the extension and it
// cannot be had: ferry serve must not start workers that would silently run
// without it.
func resolveExtension(cfg *config.Config) (string, error) {
	mode := cfg.Pool.PHP.Extension
	if v := os.Getenv(extensionEnv); v != "" {
		if err := config.CheckExtension(v); err != nil {
			return "", fmt.Errorf("%s: %w", extensionEnv, err)
		}
		mode = v
	}
	if mode == config.ExtensionOff {
		return "ext/ferry: off", nil
	}
	required := mode != config.ExtensionAuto
	fail := func(format string, args ...any) (string, error) {
		msg := fmt.Sprintf(format, args...)
		if required {
			return "", fmt.Errorf("pool.php.extension is %s, but %s", mode, msg)
		}
		return "ext/ferry not loaded: " + msg + "; workers run pure PHP", nil
	}
	php := cfg.Pool.Command[0]
	if !config.IsPHPBinary(php) {
		return fail("pool.command starts %q, not php, so Ferry cannot add -d extension=... (load it in that command and set pool.php.extension: off)", php)
	}
	loaded, extDir, out, err := probePHP(cfg, "")
	if err != nil {
		return fail("%s could not be started to look for it: %v: %s", php, err, out)
	}
	if loaded {
		return "ext/ferry: loaded by php.ini", nil
	}
	var candidates []string
	if p := config.ExtensionPath(mode); p != "" {
		abs, err := filepath.Abs(p)
		if err != nil {
			return "", err
		}
		candidates = []string{abs}
	} else {
		if exe, err := os.Executable(); err == nil {
			candidates = append(candidates, filepath.Join(filepath.Dir(exe), "..", "ext", "ferry", ".build", "modules", "ferry.so"))
		}
		if extDir != "" {
			candidates = append(candidates, filepath.Join(extDir, "ferry.so"))
		}
	}
	file := ""
	for _, c := range candidates {
		if st, err := os.Stat(c); err == nil && st.Mode().IsRegular() {
			file = filepath.Clean(c)
			break
		}
	}
	if file == "" {
		return fail("ferry.so was not found (looked for %s; build it with `make build` or ext/ferry/build.sh)", strings.Join(candidates, ", "))
	}
	loaded, _, out, err = probePHP(cfg, file)
	if err != nil || !loaded {
		if err == nil {
			err = errors.New("extension_loaded('ferry') is false")
		}
		return fail("%s does not load in %s: %v: %s", file, php, err, strings.TrimSpace(out))
	}
	cfg.SetExtensionFile(file)
	return "ext/ferry: loaded from " + file, nil
}

// probePHP runs the workers' php once, as the pool would start it (same
// environment, directory and pool.php.ini; no preload, which could run
// application code), with ferry.so from file unless it is "", and reports
// whether the extension is there and PHP's extension_dir. Anything PHP prints
// on stderr, such as "Unable to load dynamic library", comes back in out.
func probePHP(cfg *config.Config, file string) (loaded bool, extDir, out string, err error) {
	p := cfg.Pool
	args := []string{"-d", "opcache.enable_cli=0", "-d", "display_errors=stderr", "-d", "display_startup_errors=1"}
	if noIni(p.Command[1:]) {
		// The workers read no php.ini: neither may the probe, or it would find an
		// extension that php.ini loads and the workers never get.
		args = append(args, "-n")
	}
	keys := make([]string, 0, len(p.PHP.Ini))
	for k := range p.PHP.Ini {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !strings.HasPrefix(k, "opcache.") {
			args = append(args, "-d", k+"="+p.PHP.Ini[k])
		}
	}
	if file != "" {
		args = append(args, "-d", "extension="+file)
	}
	args = append(args, "-r", `echo extension_loaded('ferry') ? 1 : 0, "\n", ini_get('extension_dir'), "\n";`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.Command[0], args...)
	cmd.Dir = p.Dir
	cmd.Env = os.Environ()
	for _, k := range sortedEnvKeys(p.Env) {
		cmd.Env = append(cmd.Env, k+"="+p.Env[k])
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	out = stderr.String()
	lines := strings.Split(stdout.String(), "\n")
	if err == nil && len(lines) < 2 {
		err = fmt.Errorf("unexpected output %q", stdout.String())
	}
	if err != nil {
		return false, "", out + stdout.String(), err
	}
	return lines[0] == "1", lines[1], out, nil
}

func sortedEnvKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// noIni reports whether php's options, before the script name, include -n.
func noIni(args []string) bool {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-n":
			return true
		case a == "-d" || a == "-c" || a == "-z":
			i++ // the option's value
		case !strings.HasPrefix(a, "-"):
			return false
		}
	}
	return false
}
