package config

import (
	"os"
	"reflect"
	"strings"
	"testing"
)

func readDoc(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatalf("docs/config.md: %v", err)
	}
	return string(b)
}

// keyPaths lists every key of the schema, derived from the struct tags the
// decoder uses, so a new field cannot be added without documenting it.
func keyPaths(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		tag := t.Field(i).Tag.Get("yaml")
		if tag == "" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		path := join(prefix, name)
		ft := t.Field(i).Type
		if ft.Kind() == reflect.Struct {
			out = append(out, keyPaths(ft, path)...)
		} else {
			out = append(out, path)
		}
	}
	return out
}

func TestEveryKeyIsDocumented(t *testing.T) {
	doc := readDoc(t)
	paths := keyPaths(reflect.TypeFor[Config](), "")
	if len(paths) < 40 {
		t.Fatalf("found only %d keys: %v", len(paths), paths)
	}
	for _, p := range paths {
		if !strings.Contains(doc, "| `"+p+"` |") {
			t.Errorf("docs/config.md has no table row for %s", p)
		}
	}
}

// The annotated example claims to spell out the defaults; hold it to that.
func TestDocExampleIsTheDefaults(t *testing.T) {
	doc := readDoc(t)
	_, after, ok := strings.Cut(doc, "## Full annotated example")
	if !ok {
		t.Fatal("no example section")
	}
	_, block, ok := strings.Cut(after, "```yaml\n")
	if !ok {
		t.Fatal("no yaml block in the example section")
	}
	block, _, _ = strings.Cut(block, "```")
	t.Setenv("FERRY_ADDRESS", "")
	c := mustParse(t, block)
	deepEqual(t, comparable(c), comparable(Default()))
	for _, p := range keyPaths(reflect.TypeFor[Config](), "") {
		if _, ok := c.lines[p]; !ok {
			t.Errorf("the example does not set %s", p)
		}
	}
}
