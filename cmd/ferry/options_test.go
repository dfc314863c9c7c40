package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestFiberReuseReachesWorkers(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", "off")
	dir := t.TempDir()
	for _, tc := range []struct {
		yaml string
		off  bool
	}{{"pool:\n  fibers: true\n", false}, {"pool:\n  fibers: true\n  fiber_reuse: false\n", true}} {
		path := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(path, []byte(tc.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := loadConfig("serve", []string{"-c", path})
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(poolOptions(c, discardLogger()).Env, "FERRY_FIBER_REUSE=0"); got != tc.off {
			t.Errorf("%q: FERRY_FIBER_REUSE=0 in the worker environment: %v, want %v", tc.yaml, got, tc.off)
		}
	}
}

func TestFiberIOReachesWorkers(t *testing.T) {
	t.Setenv("FERRY_PHP_EXTENSION", "off")
	dir := t.TempDir()
	for _, tc := range []struct {
		yaml string
		on   bool
	}{{"pool:\n  fibers: true\n", false}, {"pool:\n  fibers: true\n  fiber_io: true\n", true}, {"pool:\n  fiber_io: true\n", false}} {
		path := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(path, []byte(tc.yaml), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := loadConfig("serve", []string{"-c", path})
		if err != nil {
			t.Fatal(err)
		}
		if got := slices.Contains(poolOptions(c, discardLogger()).Env, "FERRY_FIBER_IO=1"); got != tc.on {
			t.Errorf("%q: FERRY_FIBER_IO=1 in the worker environment: %v, want %v", tc.yaml, got, tc.on)
		}
	}
}
