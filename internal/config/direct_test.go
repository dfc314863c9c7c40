package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDirectModeDefaultsToFront(t *testing.T) {
	c := mustParse(t, "")
	if c.Server.Mode != ModeFront || c.Server.Direct() {
		t.Fatalf("default mode %q (direct %v), want front", c.Server.Mode, c.Server.Direct())
	}
	if !mustParse(t, "server:\n  mode: direct\n").Server.Direct() {
		t.Fatal("server.mode: direct did not select direct mode")
	}
}

// What server.mode: direct cannot do is refused, pointing at the key that
// asks for it, with why.
func TestDirectModeRefusals(t *testing.T) {
	dir := t.TempDir()
	cert := filepath.Join(dir, "c.pem")
	if err := os.WriteFile(cert, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ src, want string }{
		{"server:\n  mode: both\n", `ferry.yaml:2: server.mode: must be one of front, direct, got "both"`},
		{"server:\n  mode: direct\npool:\n  protocol: roadrunner\n", `ferry.yaml:4: pool.protocol: server.mode: direct needs Ferry's own workers (pool.protocol: ferry, with ext/ferry), got "roadrunner"`},
		{"server:\n  mode: direct\n  http2:\n    h2c: true\n", "ferry.yaml:4: server.http2.h2c: h2c is served on server.address"},
		{"server:\n  mode: direct\n  tls:\n    address: \":8443\"\n    cert: " + cert + "\n    key: " + cert + "\n    redirect: true\n",
			"ferry.yaml:7: server.tls.redirect: the redirect is answered on server.address"},
		{"server:\n  mode: direct\n  static:\n    dir: " + dir + "\n", "ferry.yaml:4: server.static.dir: static files are served by the front"},
		{"server:\n  mode: direct\npool:\n  idle_ttl: 1m\n", "ferry.yaml:4: pool.idle_ttl: in server.mode: direct the server does not see the requests"},
		{"server:\n  mode: direct\npool:\n  refork_after: 100\n", "ferry.yaml:4: pool.refork_after: a direct-mode worker holds client connections"},
	}
	for _, c := range cases {
		errs := parseErrors(t, c.src)
		if len(errs) != 1 || !strings.HasPrefix(errs[0], c.want) {
			t.Errorf("Parse(%q):\n got %q\nwant one error starting %q", c.src, errs, c.want)
		}
	}
}

// The same keys are fine in front mode, and direct mode takes every relay,
// both boot modes, TLS beside it and static files served there.
func TestDirectModeAccepts(t *testing.T) {
	dir := t.TempDir()
	cert := filepath.Join(dir, "c.pem")
	if err := os.WriteFile(cert, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{
		"pool:\n  idle_ttl: 1m\n  protocol: roadrunner\nserver:\n  http2:\n    h2c: true\n",
		"server:\n  mode: direct\npool:\n  relay: unix\n",
		"server:\n  mode: direct\npool:\n  relay: tcp\n  boot: exec\n",
		"server:\n  mode: direct\npool:\n  relay: pipes\n  boot: fork\n  ttl: 1h\n  max_jobs: 1000\n  max_memory: 256MiB\n",
		"server:\n  mode: direct\n  tls:\n    address: \":8443\"\n    cert: " + cert + "\n    key: " + cert + "\n  static:\n    dir: " + dir + "\n",
	} {
		mustParse(t, src)
	}
}
