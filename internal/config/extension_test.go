package config

import "testing"

func TestExtensionKey(t *testing.T) {
	// auto since the extension's hot paths make a request cheaper than pure PHP (issue 16).
	if got := Default().Pool.PHP.Extension; got != ExtensionAuto {
		t.Fatalf("default pool.php.extension = %q, want auto", got)
	}
	for src, want := range map[string]string{
		"pool:\n  php: {extension: \"on\"}\n":                            "on",
		"pool:\n  php: {extension: \"off\"}\n":                           "off",
		"pool:\n  php: {extension: auto}\n":                              "auto",
		"pool:\n  php: {extension: /opt/ferry/ferry.so}\n":               "/opt/ferry/ferry.so",
		"pool:\n  php: {extension: ext/ferry/.build/modules/ferry.so}\n": "ext/ferry/.build/modules/ferry.so",
	} {
		c := mustParse(t, src)
		if c.Pool.PHP.Extension != want {
			t.Errorf("%q: extension = %q, want %q", src, c.Pool.PHP.Extension, want)
		}
	}
	// YAML 1.1 spellings of booleans are not accepted as on/off in disguise.
	wantOnlyError(t, "pool:\n  php:\n    extension: yes\n",
		`ferry.yaml:3: pool.php.extension: must be auto, on, off or the path of ferry.so (containing a "/", ending in .so), got "yes"`)
	wantOnlyError(t, "pool:\n  php:\n    extension: ferry.so\n",
		`ferry.yaml:3: pool.php.extension: must be auto, on, off or the path of ferry.so (containing a "/", ending in .so), got "ferry.so"`)
	wantOnlyError(t, "pool:\n  php:\n    extension: \"/a/b\\n.so\"\n",
		`ferry.yaml:3: pool.php.extension: must be auto, on, off or the path of ferry.so (containing a "/", ending in .so), got "/a/b\n.so"`)
}

func TestExtensionPath(t *testing.T) {
	for v, want := range map[string]string{
		"auto": "", "on": "", "off": "", "nope": "", "/x/ferry.so": "/x/ferry.so", "./ferry.so": "./ferry.so",
	} {
		if got := ExtensionPath(v); got != want {
			t.Errorf("ExtensionPath(%q) = %q, want %q", v, got, want)
		}
	}
}

// The resolved file is loaded first and is not an ini directive a
// pool.php.ini "extension" entry (another module) could cancel.
func TestPHPArgsLoadTheResolvedExtension(t *testing.T) {
	c := mustParse(t, "pool:\n  command: php w.php\n  php:\n    ini: {extension: gmp}\n")
	deepEqual(t, c.WorkerArgv(), []string{"php", "-d", "opcache.enable_cli=1", "-d", "memory_limit=128M", "-d", "extension=gmp", "w.php"})
	c.SetExtensionFile("/opt/ferry.so")
	if c.ExtensionFile() != "/opt/ferry.so" {
		t.Fatalf("ExtensionFile() = %q", c.ExtensionFile())
	}
	deepEqual(t, c.WorkerArgv(), []string{"php", "-d", "extension=/opt/ferry.so", "-d", "opcache.enable_cli=1", "-d", "memory_limit=128M", "-d", "extension=gmp", "w.php"})
	c.SetExtensionFile("")
	deepEqual(t, c.PHPArgs(), []string{"-d", "opcache.enable_cli=1", "-d", "memory_limit=128M", "-d", "extension=gmp"})
}
