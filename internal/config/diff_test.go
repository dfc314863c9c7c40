package config

import (
	"slices"
	"testing"
)

func TestChanged(t *testing.T) {
	a := mustParse(t, "server: {address: \"127.0.0.1:1\"}\npool: {env: {A: x}}\n")
	b := mustParse(t, "server: {address: \"127.0.0.1:2\", tls: {redirect: false}}\npool: {env: {A: y}, num_workers: 3}\nlog: {level: debug}\n")
	want := []string{"server.address", "pool.env", "pool.num_workers", "log.level"}
	if got := Changed(a, b); !slices.Equal(got, want) {
		t.Fatalf("Changed: %q, want %q", got, want)
	}
	if got := Changed(a, a); len(got) != 0 {
		t.Fatalf("a config against itself: %q", got)
	}
}
