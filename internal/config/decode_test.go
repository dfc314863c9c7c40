package config

import (
	"strconv"
	"strings"
	"testing"
)

func TestUnknownKeys(t *testing.T) {
	cases := []struct{ src, want string }{
		{"server:\n  adress: x\n", "ferry.yaml:2: server.adress: unknown key (did you mean address?)"},
		{"\n\n\nserver:\n  adress: x\n", "ferry.yaml:5: server.adress: unknown key (did you mean address?)"},
		{"pool:\n  max-jobs: 3\n", "ferry.yaml:2: pool.max-jobs: unknown key (did you mean max_jobs?)"},
		{"pool:\n  Pipeline: 3\n", "ferry.yaml:2: pool.Pipeline: unknown key (did you mean pipeline?)"},
		{"pool:\n  num_wokrers: 3\n", "ferry.yaml:2: pool.num_wokrers: unknown key (did you mean num_workers?)"},
		{"pool:\n  max-workers: 8\n", "ferry.yaml:2: pool.max-workers: unknown key (did you mean max_workers?)"},
		{"pool:\n  scale_down: 5s\n", "ferry.yaml:2: pool.scale_down: unknown key (did you mean scale_down_after?)"},
		{"pool:\n  php:\n    opcahce: true\n", "ferry.yaml:3: pool.php.opcahce: unknown key (did you mean opcache?)"},
		{"pool:\n  respawn_backof: {min: 1s}\n", "ferry.yaml:2: pool.respawn_backof: unknown key (did you mean respawn_backoff?)"},
		{"server:\n  static:\n    forbidden: []\n", "ferry.yaml:3: server.static.forbidden: unknown key (did you mean forbid?)"},
		{"servre:\n  address: x\n", "ferry.yaml:1: servre: unknown key (did you mean server?)"},
		// A key spanning lines must not split the one-error-per-line report (found by FuzzParse).
		{"? 0\n\n 0", "ferry.yaml:1: \"0\\n0\": unknown key (known keys: server, pool, admin, log)"},
		{"misc: {}\n", "ferry.yaml:1: misc: unknown key (known keys: server, pool, admin, log)"},
		{"logging: {}\n", "ferry.yaml:1: logging: unknown key (did you mean log?)"},
		{"admin:\n  zzz: 1\n", "ferry.yaml:2: admin.zzz: unknown key (known keys: socket, metrics_address, health_address)"},
		{"log:\n  colour: true\n", "ferry.yaml:2: log.colour: unknown key (known keys: level, format, output)"},
	}
	for _, c := range cases {
		wantOnlyError(t, c.src, c.want)
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"address", "read_timeout", "write_timeout", "debug", "static"}
	cases := map[string]string{
		"adress":                 "address",
		"addresss":               "address",
		"Address":                "address",
		"read-timeout":           "read_timeout",
		"writ_timeout":           "write_timeout",
		"debgu":                  "debug",
		"x":                      "",
		"zzzzzz":                 "",
		"":                       "",
		strings.Repeat("a", 500): "",
	}
	for in, want := range cases {
		if got := suggest(in, known); got != want {
			t.Errorf("suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTypeErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"server:\n  debug: yes\n", `ferry.yaml:2: server.debug: must be true or false, got "yes"`},
		{"server:\n  request_id: [true]\n", `ferry.yaml:2: server.request_id: must be true or false, got a list`},
		{"pool:\n  num_workers: four\n", `ferry.yaml:2: pool.num_workers: must be a whole number, got "four"`},
		{"pool:\n  num_workers: 1.5\n", `ferry.yaml:2: pool.num_workers: must be a whole number, got "1.5"`},
		{"pool:\n  max_jobs: 99999999999999999999999\n", `ferry.yaml:2: pool.max_jobs: must be a whole number, got "99999999999999999999999"`},
		{"pool:\n  ttl: 30\n", `ferry.yaml:2: pool.ttl: must be a duration with a unit like "5s", "1m30s" or "250ms", got "30" (missing unit?)`},
		{"pool:\n  exec_ttl: soon\n", `ferry.yaml:2: pool.exec_ttl: must be a duration like "5s", "1m30s" or "250ms", got "soon"`},
		{"pool:\n  max_memory: 12 apples\n", `ferry.yaml:2: pool.max_memory: unknown size unit "apples" in "12 apples" (use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB; whole numbers only)`},
		{"pool:\n  max_frame_size: {a: 1}\n", `ferry.yaml:2: pool.max_frame_size: must be a size, got a mapping`},
		{"server: 8080\n", `ferry.yaml:1: server: must be a mapping of keys to values, got "8080"`},
		{"server:\n  - address\n", `ferry.yaml:2: server: must be a mapping of keys to values, got a list`},
		{"pool:\n  env: [A, B]\n", `ferry.yaml:2: pool.env: must be a mapping of keys to values, got a list`},
		{"pool:\n  env:\n    A: [1]\n", `ferry.yaml:3: pool.env.A: must be a string, got a list`},
		{"pool:\n  command: {php: x}\n", `ferry.yaml:2: pool.command: must be a list of strings, got a mapping`},
		{"pool:\n  command:\n    - php\n    - [x]\n", `ferry.yaml:4: pool.command[1]: must be a string, got a list`},
		{"server:\n  address: [a]\n", `ferry.yaml:2: server.address: must be a string, got a list`},
		{"- a\n- b\n", `ferry.yaml:1: must be a mapping of keys to values, got a list`},
		{"just text\n", `ferry.yaml:1: must be a mapping of keys to values, got "just text"`},
		{"server:\n  ? [a, b]\n  : 1\n", `ferry.yaml:2: server: keys must be plain strings, got a list`},
	}
	for _, c := range cases {
		wantOnlyError(t, c.src, c.want)
	}
}

func TestYAMLSyntaxErrors(t *testing.T) {
	cases := []struct{ src, want string }{
		{"server:\n  address: [\n", "ferry.yaml:3: invalid YAML: did not find expected node content"},
		{"server:\n\taddress: x\n", "ferry.yaml:2: invalid YAML: found character that cannot start any token"},
		{"a: 1\n---\nb: 2\n", "ferry.yaml:3: only one YAML document is allowed (found a second '---')"},
	}
	for _, c := range cases {
		got := parseErrors(t, c.src)
		if len(got) != 1 || !strings.HasPrefix(got[0], "ferry.yaml:") || !strings.Contains(got[0], strings.SplitN(c.want, ": ", 2)[1]) {
			t.Errorf("Parse(%q) = %q, want like %q", c.src, got, c.want)
		}
	}
}

func TestDuplicateKey(t *testing.T) {
	// yaml.v3 rejects duplicates itself in some positions; either way the
	// message must carry a line and name the key.
	got := parseErrors(t, "pool:\n  pipeline: 2\n  pipeline: 3\n")
	if len(got) != 1 || !strings.HasPrefix(got[0], "ferry.yaml:3: ") || !strings.Contains(got[0], "pipeline") {
		t.Fatalf("got %q", got)
	}
}

func TestNullKeepsDefault(t *testing.T) {
	c := mustParse(t, "server:\n  address:\n  static: ~\npool:\n  command: null\nlog:\n")
	deepEqual(t, comparable(c), comparable(Default()))
}

func TestCommandForms(t *testing.T) {
	cases := []struct {
		src  string
		want []string
	}{
		{"pool:\n  command: php  app.php   --flag\n", []string{"php", "app.php", "--flag"}},
		{"pool:\n  command: [php, \"my app.php\"]\n", []string{"php", "my app.php"}},
		{"pool:\n  command:\n    - /usr/bin/php8.2\n    - w.php\n", []string{"/usr/bin/php8.2", "w.php"}},
	}
	for _, c := range cases {
		deepEqual(t, mustParse(t, c.src).Pool.Command, c.want)
	}
}

func TestForbidForms(t *testing.T) {
	deepEqual(t, mustParse(t, "server:\n  static:\n    forbid: .env\n").Server.Static.Forbid, []string{".env"})
	deepEqual(t, mustParse(t, "server:\n  static:\n    forbid: []\n").Server.Static.Forbid, []string{})
	deepEqual(t, mustParse(t, "server:\n  static:\n    forbid: [.php, .git, .env]\n").Server.Static.Forbid, []string{".php", ".git", ".env"})
}

func TestScalarStylesForStrings(t *testing.T) {
	c := mustParse(t, "pool:\n  env:\n    N: 42\n    B: true\n    F: 1.50\n    Q: '007'\n  php:\n    ini:\n      memory_limit: 512M\n")
	deepEqual(t, c.Pool.Env, map[string]string{"N": "42", "B": "true", "F": "1.50", "Q": "007"})
	deepEqual(t, c.Pool.PHP.Ini, map[string]string{"memory_limit": "512M"})
}

func TestAnchorsAndMergeKeys(t *testing.T) {
	c := mustParse(t, `
pool:
  env: &common
    APP_ENV: prod
    LOG: stderr
  php:
    ini:
      <<: *common
      LOG: file
`)
	deepEqual(t, c.Pool.PHP.Ini, map[string]string{"APP_ENV": "prod", "LOG": "file"})
	deepEqual(t, c.Pool.Env, map[string]string{"APP_ENV": "prod", "LOG": "stderr"})

	c = mustParse(t, "pool:\n  respawn_backoff: &b {min: 1s, max: 2s}\n  php:\n    ini: {a: x}\nserver:\n  idle_timeout: 3s\n")
	if c.Pool.RespawnBackoff.Max.String() != "2s" {
		t.Fatalf("got %v", c.Pool.RespawnBackoff)
	}
}

func TestMergeErrorsCarryPaths(t *testing.T) {
	wantOnlyError(t, "x: &x {bogus: 1}\n", "ferry.yaml:1: x: unknown key (known keys: server, pool, admin, log)")
	got := parseErrors(t, "base: &b\n  adress: 1\nserver:\n  <<: *b\n")
	if len(got) != 2 || got[1] != "ferry.yaml:2: server.adress: unknown key (did you mean address?)" {
		t.Fatalf("got %q", got)
	}
	wantOnlyError(t, "server:\n  <<: 5\n", `ferry.yaml:2: server.<<: merge value must be a mapping or a list of mappings, got "5"`)
}

func TestAliasBombIsBounded(t *testing.T) {
	// Each level doubles the number of references; a naive walk would visit
	// 2^30 nodes. The document must fail (or succeed) quickly, not hang.
	var b strings.Builder
	b.WriteString("defs:\n  a0: &a0 {x: 1}\n")
	for i := 1; i <= 30; i++ {
		prev := "*a" + strconv.Itoa(i-1)
		b.WriteString("  a" + strconv.Itoa(i) + ": &a" + strconv.Itoa(i) + " {<<: [" + prev + ", " + prev + "]}\n")
	}
	b.WriteString("pool:\n  env: *a30\n")
	_, err := Parse([]byte(b.String()), "bomb.yaml")
	if err == nil || !strings.Contains(err.Error(), "document is too complex") {
		t.Fatalf("got %v, want a too-complex error", err)
	}
}

func TestSelfMerge(t *testing.T) {
	got := parseErrors(t, "&a {<<: *a}\n")
	if !strings.Contains(strings.Join(got, "\n"), "merge keys nested more than") {
		t.Fatalf("got %q", got)
	}
}
