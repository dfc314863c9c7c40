package config

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
)

// jitBufferSize is what PHPArgs gives opcache.jit_buffer_size when JIT is on:
// PHP's default is 0, which silently leaves the JIT disabled.
const jitBufferSize = "64M"

// webMemoryLimit is the memory_limit a worker gets when neither pool.max_memory
// nor pool.php.ini sets one: php.ini-production's, as under FPM. The CLI's ini
// (Debian's sets -1) would let one runaway request grow until exec_ttl.
const webMemoryLimit = "128M"

// PHPArgs returns the "-d" flags derived from pool.php, as separate argv
// words ("-d", "name=value", ...): extension (ext/ferry, once resolved; see
// SetExtensionFile), opcache.enable_cli, opcache.preload (and
// opcache.preload_user when running as root), opcache.jit and opcache.jit_buffer_size,
// memory_limit (pool.max_memory, else webMemoryLimit), then pool.php.ini in sorted key
// order. A directive also present in pool.php.ini is left to the ini entry,
// so users can override any derived value. The pool puts these right after
// the binary when the command's first word is a PHP binary (see WorkerArgv).
func (c *Config) PHPArgs() []string {
	p := c.Pool.PHP
	var args []string
	if c.extensionFile != "" {
		// Not through add(): an "extension" in pool.php.ini loads another module.
		args = append(args, "-d", "extension="+c.extensionFile)
	}
	add := func(name, value string) {
		if _, overridden := p.Ini[name]; !overridden {
			args = append(args, "-d", name+"="+value)
		}
	}
	if p.Opcache {
		add("opcache.enable_cli", "1")
	} else {
		// Explicit, so a php.ini that enables it does not win.
		add("opcache.enable_cli", "0")
	}
	if p.Preload != "" {
		add("opcache.preload", p.Preload)
		// PHP refuses to preload as root unless told which user to preload as
		// (a fatal error at every worker start otherwise).
		if os.Geteuid() == 0 {
			add("opcache.preload_user", "root")
		}
	}
	if p.JIT != "" {
		add("opcache.jit", p.JIT)
		if jitEnabled(p.JIT) {
			add("opcache.jit_buffer_size", jitBufferSize)
		}
	}
	if m := c.Pool.MaxMemory; m > 0 {
		// max_memory is checked between jobs; PHP's own limit stops the one
		// request that would run past it, with "Allowed memory size exhausted".
		add("memory_limit", strconv.FormatInt(int64(m), 10))
	} else {
		add("memory_limit", webMemoryLimit)
	}
	for _, name := range sortedKeys(p.Ini) {
		args = append(args, "-d", name+"="+p.Ini[name])
	}
	return args
}

var phpBinary = regexp.MustCompile(`^php[0-9.]*$`)

// IsPHPBinary reports whether a command's first word names the PHP CLI
// ("php", "/usr/bin/php8.2"), i.e. whether PHPArgs apply to it.
func IsPHPBinary(word string) bool {
	return phpBinary.MatchString(filepath.Base(word))
}

// WorkerArgv is pool.command with PHPArgs inserted after the binary when the
// binary is PHP; any other command (a wrapper script, "env", ...) is returned
// unchanged, because its argument syntax is unknown.
func (c *Config) WorkerArgv() []string {
	cmd := c.Pool.Command
	if len(cmd) == 0 || !IsPHPBinary(cmd[0]) {
		return append([]string(nil), cmd...)
	}
	out := append([]string{cmd[0]}, c.PHPArgs()...)
	return append(out, cmd[1:]...)
}

func jitEnabled(mode string) bool {
	return mode != "" && mode != "off" && mode != "disable" && mode != "0" && mode != "0000"
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
