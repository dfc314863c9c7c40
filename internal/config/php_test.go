package config

import (
	"os"
	"testing"
)

func TestPHPArgs(t *testing.T) {
	preload := []string{"-d", "opcache.enable_cli=1", "-d", "opcache.preload=app/preload.php"}
	if os.Geteuid() == 0 {
		preload = append(preload, "-d", "opcache.preload_user=root")
	}
	// Without max_memory or an ini entry, a worker gets php.ini-production's limit.
	preload = append(preload, "-d", "memory_limit=128M")
	cases := []struct {
		src  string
		want []string
	}{
		{"", []string{"-d", "opcache.enable_cli=1", "-d", "memory_limit=128M"}},
		{"pool:\n  php: {opcache: false}\n", []string{"-d", "opcache.enable_cli=0", "-d", "memory_limit=128M"}},
		{"pool:\n  php: {preload: app/preload.php}\n", preload},
		{"pool:\n  php:\n    preload: app/preload.php\n    ini: {opcache.preload_user: www-data}\n",
			[]string{"-d", "opcache.enable_cli=1", "-d", "opcache.preload=app/preload.php", "-d", "memory_limit=128M", "-d", "opcache.preload_user=www-data"}},
		{"pool:\n  php: {jit: tracing}\n",
			[]string{"-d", "opcache.enable_cli=1", "-d", "opcache.jit=tracing", "-d", "opcache.jit_buffer_size=64M", "-d", "memory_limit=128M"}},
		{"pool:\n  php: {jit: \"off\"}\n", []string{"-d", "opcache.enable_cli=1", "-d", "opcache.jit=off", "-d", "memory_limit=128M"}},
		{"pool:\n  php:\n    jit: \"1255\"\n    ini:\n      zend.assertions: \"-1\"\n      memory_limit: 256M\n      opcache.jit_buffer_size: 128M\n",
			[]string{"-d", "opcache.enable_cli=1", "-d", "opcache.jit=1255",
				"-d", "memory_limit=256M", "-d", "opcache.jit_buffer_size=128M", "-d", "zend.assertions=-1"}},
		{"pool:\n  php:\n    ini: {opcache.enable_cli: \"0\"}\n", []string{"-d", "memory_limit=128M", "-d", "opcache.enable_cli=0"}},
		// max_memory is the limit; an ini entry wins over both.
		{"pool:\n  max_memory: 64MiB\n", []string{"-d", "opcache.enable_cli=1", "-d", "memory_limit=67108864"}},
		{"pool:\n  max_memory: 64MiB\n  php:\n    ini: {memory_limit: \"-1\"}\n", []string{"-d", "opcache.enable_cli=1", "-d", "memory_limit=-1"}},
	}
	for _, c := range cases {
		deepEqual(t, mustParse(t, c.src).PHPArgs(), c.want)
	}
}

func TestWorkerArgv(t *testing.T) {
	cases := []struct {
		src  string
		want []string
	}{
		{"", []string{"php", "-d", "opcache.enable_cli=1", "-d", "memory_limit=128M", "examples/hello/worker.php"}},
		{"pool:\n  command: /usr/bin/php8.2 -n w.php\n", []string{"/usr/bin/php8.2", "-d", "opcache.enable_cli=1", "-d", "memory_limit=128M", "-n", "w.php"}},
		{"pool:\n  command: ./run-worker.sh --fast\n", []string{"./run-worker.sh", "--fast"}},
		{"pool:\n  command: env FOO=1 php w.php\n", []string{"env", "FOO=1", "php", "w.php"}},
		{"pool:\n  command: php-fpm\n", []string{"php-fpm"}},
	}
	for _, c := range cases {
		deepEqual(t, mustParse(t, c.src).WorkerArgv(), c.want)
	}
	c := Default()
	argv := c.WorkerArgv()
	argv[0] = "changed"
	if c.Pool.Command[0] != "php" {
		t.Fatal("WorkerArgv aliases pool.command")
	}
}

func TestIsPHPBinary(t *testing.T) {
	for w, want := range map[string]bool{
		"php": true, "php8.2": true, "/usr/local/bin/php": true, "php82": true,
		"php-cgi": false, "phpunit": false, "bash": false, "": false, "/opt/php/bin/run": false,
	} {
		if got := IsPHPBinary(w); got != want {
			t.Errorf("IsPHPBinary(%q) = %v", w, got)
		}
	}
}
