package config

import (
	"strings"
	"testing"
)

func TestExpandEnv(t *testing.T) {
	env := map[string]string{"HOST": "example.org", "PORT": "9000", "EMPTY": "", "X_1": "v"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"${HOST}:${PORT}", "example.org:9000"},
		{"${MISSING:-127.0.0.1}:8080", "127.0.0.1:8080"},
		{"${HOST:-fallback}", "example.org"},
		{"${EMPTY:-used}", "used"},
		{"${EMPTY}", ""},
		{"${MISSING:-}", ""},
		{"${MISSING:-a:-b c}", "a:-b c"},
		{"$$", "$"},
		{"$${HOST}", "${HOST}"},
		{"cost: 5$", "cost: 5$"},
		{"$HOST stays", "$HOST stays"},
		{"a$$$${X_1}", "a$${X_1}"},
		{"$$$${X_1}", "$${X_1}"},
		{"$${X_1}$${X_1}", "${X_1}${X_1}"},
		{"x${X_1}y", "xvy"},
		{"${X_1}${X_1}", "vv"},
	}
	for _, c := range cases {
		got, err := expandEnv(c.in, lookup)
		if err != nil || got != c.want {
			t.Errorf("expandEnv(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	bad := []struct{ in, want string }{
		{"${MISSING}", "environment variable MISSING is not set (use ${MISSING:-default} to give a default)"},
		{"a ${HOST", `unterminated "${" in "a ${HOST" (write "$$" for a literal "$")`},
		{"${}", `invalid variable reference "${}"`},
		{"${1ABC}", `invalid variable reference "${1ABC}"`},
		{"${A-B}", `invalid variable reference "${A-B}"`},
		{"${A:-${B}}", `nested "${" in the default of "${A:-${B}" is not supported`},
	}
	for _, c := range bad {
		_, err := expandEnv(c.in, lookup)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("expandEnv(%q) error = %v; want prefix %q", c.in, err, c.want)
		}
	}
}

func TestEnvExpansionInParse(t *testing.T) {
	t.Setenv("FERRY_TEST_PORT", "9123")
	t.Setenv("FERRY_TEST_WORKERS", "3")
	t.Setenv("FERRY_TEST_DEBUG", "true")
	t.Setenv("FERRY_TEST_SECRET", "s3cr$t")
	c := mustParse(t, `
server:
  address: "127.0.0.1:${FERRY_TEST_PORT}"
  debug: ${FERRY_TEST_DEBUG}
  read_timeout: ${FERRY_TEST_UNSET_TIMEOUT:-15s}
  max_body_size: ${FERRY_TEST_UNSET_BODY:-2MiB}
pool:
  num_workers: ${FERRY_TEST_WORKERS}
  command: php ${FERRY_TEST_UNSET_APP:-app/worker.php}
  env:
    SECRET: ${FERRY_TEST_SECRET}
    PRICE: "$$5"
`)
	if c.Server.Address != "127.0.0.1:9123" || !c.Server.Debug || c.Server.ReadTimeout.String() != "15s" ||
		c.Server.MaxBodySize != 2*MiB || c.Pool.NumWorkers != 3 {
		t.Fatalf("expansion gave %+v", c.Server)
	}
	deepEqual(t, c.Pool.Command, []string{"php", "app/worker.php"})
	// Expanded values are not expanded again: "$t" from the variable stays.
	deepEqual(t, c.Pool.Env, map[string]string{"SECRET": "s3cr$t", "PRICE": "$5"})
}

func TestKeysAreNotExpanded(t *testing.T) {
	t.Setenv("FERRY_TEST_KEY", "GOOD")
	wantOnlyError(t, "pool:\n  env:\n    ${FERRY_TEST_KEY}: v\n",
		`ferry.yaml:3: pool.env.${FERRY_TEST_KEY}: invalid environment variable name "${FERRY_TEST_KEY}" (letters, digits and _, not starting with a digit)`)
}

func TestEnvExpansionErrorsNameKeyAndVariable(t *testing.T) {
	wantOnlyError(t, "server:\n  address: ${FERRY_TEST_SURELY_UNSET_1}\n",
		"ferry.yaml:2: server.address: environment variable FERRY_TEST_SURELY_UNSET_1 is not set (use ${FERRY_TEST_SURELY_UNSET_1:-default} to give a default)")
	wantOnlyError(t, "pool:\n  command:\n    - php\n    - ${FERRY_TEST_SURELY_UNSET_2}\n",
		"ferry.yaml:4: pool.command[1]: environment variable FERRY_TEST_SURELY_UNSET_2 is not set (use ${FERRY_TEST_SURELY_UNSET_2:-default} to give a default)")
	wantOnlyError(t, "pool:\n  php:\n    ini:\n      memory_limit: ${FERRY_TEST_SURELY_UNSET_3}\n",
		"ferry.yaml:4: pool.php.ini.memory_limit: environment variable FERRY_TEST_SURELY_UNSET_3 is not set (use ${FERRY_TEST_SURELY_UNSET_3:-default} to give a default)")
	wantOnlyError(t, "log:\n  output: ${oops\n",
		`ferry.yaml:2: log.output: unterminated "${" in "${oops" (write "$$" for a literal "$")`)
}

func TestExpandedValueIsStillValidated(t *testing.T) {
	t.Setenv("FERRY_TEST_PIPE", "5000")
	wantOnlyError(t, "pool:\n  pipeline: ${FERRY_TEST_PIPE}\n", "ferry.yaml:2: pool.pipeline: must be <= 1024, got 5000")
	t.Setenv("FERRY_TEST_BOOL", "maybe")
	wantOnlyError(t, "pool:\n  fibers: ${FERRY_TEST_BOOL}\n", `ferry.yaml:2: pool.fibers: must be true or false, got "maybe"`)
}
