package config

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// comparable strips the bookkeeping fields so two configs compare by value.
func comparable(c *Config) Config {
	cp := *c
	cp.source, cp.lines = "", nil
	return cp
}

func mustParse(t *testing.T, src string) *Config {
	t.Helper()
	c, err := Parse([]byte(src), "ferry.yaml")
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	return c
}

// parseErrors returns the individual messages of a failed Parse.
func parseErrors(t *testing.T, src string) []string {
	t.Helper()
	_, err := Parse([]byte(src), "ferry.yaml")
	if err == nil {
		t.Fatalf("Parse(%q): want an error, got none", src)
	}
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("Parse(%q): error %T is not Errors: %v", src, err, err)
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Error()
	}
	return out
}

// wantOnlyError asserts that src fails with exactly one message.
func wantOnlyError(t *testing.T, src, want string) {
	t.Helper()
	got := parseErrors(t, src)
	if len(got) != 1 || got[0] != want {
		t.Errorf("Parse(%q) errors:\n  %s\nwant exactly:\n  %s", src, strings.Join(got, "\n  "), want)
	}
}

func deepEqual(t *testing.T, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %#v\nwant %#v", got, want)
	}
}
