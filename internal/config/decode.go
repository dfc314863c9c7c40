package config

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode"

	"gopkg.in/yaml.v3"
)

// maxNodeVisits bounds the work of walking the node tree: aliases let a small
// file refer to the same large mapping many times ("billion laughs").
const maxNodeVisits = 1_000_000

var (
	durationType = reflect.TypeFor[time.Duration]()
	sizeType     = reflect.TypeFor[Size]()
)

// decoder walks the yaml.Node tree by hand rather than using yaml.Unmarshal,
// because only the tree knows the line of every key, and the error messages
// need the full key path (KnownFields only reports a bare field name).
type decoder struct {
	source string
	lines  map[string]int
	lookup func(string) (string, bool)
	errs   Errors
	visits int
	merges int // depth of "<<" merges being expanded
}

// maxMergeDepth bounds chains of merge keys (<<: *a where a itself merges),
// which also stops a mapping that merges itself.
const maxMergeDepth = 32

func (d *decoder) fail(n *yaml.Node, path, format string, args ...any) {
	d.errs.add(&Error{Source: d.source, Line: n.Line, Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (d *decoder) decodeRoot(root *yaml.Node, cfg *Config) {
	d.decodeValue(root, "", reflect.ValueOf(cfg).Elem(), "")
	d.errs.sortByLine()
}

func join(path, key string) string {
	if strings.ContainsFunc(key, func(r rune) bool { return !unicode.IsPrint(r) }) {
		// A key spanning lines (a multi-line plain or quoted scalar) would break the
		// one-error-per-line report: it is shown quoted.
		key = strconv.Quote(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	}
	return fmt.Sprintf("%q", n.Value)
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// resolve follows aliases; the budget check makes alias-heavy documents fail
// fast instead of expanding without bound.
func (d *decoder) resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	d.visits++
	if d.visits == maxNodeVisits {
		d.errs.add(&Error{Source: d.source, Msg: "document is too complex (aliases expand past a million nodes)"})
	}
	return n
}

func (d *decoder) stop() bool { return d.errs.full() || d.visits >= maxNodeVisits }

// scalar returns the env-expanded text of a scalar node.
func (d *decoder) scalar(n *yaml.Node, path, want string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		d.fail(n, path, "must be %s, got %s", want, kindName(n))
		return "", false
	}
	s, err := expandEnv(n.Value, d.lookup)
	if err != nil {
		d.fail(n, path, "%v", err)
		return "", false
	}
	return s, true
}

// decodeValue stores node n into v. A null value (an empty "key:" or "~")
// keeps the default already in v.
func (d *decoder) decodeValue(n *yaml.Node, path string, v reflect.Value, opts string) {
	n = d.resolve(n)
	if n == nil || d.stop() {
		return
	}
	if path != "" {
		d.lines[path] = n.Line
	}
	if isNull(n) {
		return
	}
	switch {
	case v.Type() == durationType:
		if s, ok := d.scalar(n, path, "a duration"); ok {
			dur, err := parseDuration(s)
			if err != nil {
				d.fail(n, path, "%v", err)
				return
			}
			v.SetInt(int64(dur))
		}
	case v.Type() == sizeType:
		if s, ok := d.scalar(n, path, "a size"); ok {
			sz, err := ParseSize(s)
			if err != nil {
				d.fail(n, path, "%v", err)
				return
			}
			v.SetInt(int64(sz))
		}
	case v.Kind() == reflect.String:
		if s, ok := d.scalar(n, path, "a string"); ok {
			v.SetString(s)
		}
	case v.Kind() == reflect.Bool:
		if s, ok := d.scalar(n, path, "true or false"); ok {
			switch strings.ToLower(strings.TrimSpace(s)) {
			case "true":
				v.SetBool(true)
			case "false":
				v.SetBool(false)
			default:
				d.fail(n, path, "must be true or false, got %q", s)
			}
		}
	case v.Kind() == reflect.Int:
		if s, ok := d.scalar(n, path, "a whole number"); ok {
			i, err := strconv.ParseInt(strings.TrimSpace(s), 10, strconv.IntSize)
			if err != nil {
				d.fail(n, path, "must be a whole number, got %q", s)
				return
			}
			v.SetInt(i)
		}
	case v.Kind() == reflect.Float64:
		if s, ok := d.scalar(n, path, "a number"); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				d.fail(n, path, "must be a number such as 0.25, got %q", s)
				return
			}
			v.SetFloat(f)
		}
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String:
		d.decodeList(n, path, v, opts == "split")
	case v.Kind() == reflect.Map:
		d.decodeMap(n, path, v)
	case v.Kind() == reflect.Struct:
		d.decodeStruct(n, path, v)
	default:
		panic("config: unsupported field type " + v.Type().String())
	}
}

// decodeList accepts a YAML list, or a single scalar: split on whitespace
// when split is set (pool.command: "php worker.php"), else a one-item list.
func (d *decoder) decodeList(n *yaml.Node, path string, v reflect.Value, split bool) {
	var out []string
	switch n.Kind {
	case yaml.ScalarNode:
		s, ok := d.scalar(n, path, "a list of strings")
		if !ok {
			return
		}
		if split {
			out = strings.Fields(s)
		} else {
			out = []string{s}
		}
	case yaml.SequenceNode:
		out = make([]string, 0, len(n.Content))
		for i, item := range n.Content {
			ipath := fmt.Sprintf("%s[%d]", path, i)
			item = d.resolve(item)
			if item == nil || d.stop() {
				return
			}
			d.lines[ipath] = item.Line
			s, ok := d.scalar(item, ipath, "a string")
			if !ok {
				continue
			}
			out = append(out, s)
		}
	default:
		d.fail(n, path, "must be a list of strings, got %s", kindName(n))
		return
	}
	v.Set(reflect.ValueOf(out))
}

func (d *decoder) decodeMap(n *yaml.Node, path string, v reflect.Value) {
	entries, ok := d.entries(n, path)
	if !ok {
		return
	}
	m := make(map[string]string, len(entries))
	for _, e := range entries {
		epath := join(path, e.key)
		val := d.resolve(e.val)
		if val == nil || d.stop() {
			return
		}
		d.lines[epath] = val.Line
		if isNull(val) {
			m[e.key] = ""
			continue
		}
		if s, ok := d.scalar(val, epath, "a string"); ok {
			m[e.key] = s
		}
	}
	v.Set(reflect.ValueOf(m))
}

func (d *decoder) decodeStruct(n *yaml.Node, path string, v reflect.Value) {
	entries, ok := d.entries(n, path)
	if !ok {
		return
	}
	t := v.Type()
	var names []string
	fields := map[string]int{}
	opts := map[string]string{}
	for i := range t.NumField() {
		tag := t.Field(i).Tag.Get("yaml")
		if tag == "" {
			continue
		}
		name, opt, _ := strings.Cut(tag, ",")
		names = append(names, name)
		fields[name] = i
		opts[name] = opt
	}
	for _, e := range entries {
		i, ok := fields[e.key]
		if !ok {
			msg := "unknown key"
			if s := suggest(e.key, names); s != "" {
				msg += " (did you mean " + s + "?)"
			} else {
				msg += " (known keys: " + strings.Join(names, ", ") + ")"
			}
			d.fail(e.keyNode, join(path, e.key), "%s", msg)
			continue
		}
		d.decodeValue(e.val, join(path, e.key), v.Field(i), opts[e.key])
		if d.stop() {
			return
		}
	}
}

type entry struct {
	key     string
	keyNode *yaml.Node
	val     *yaml.Node
}

// entries lists a mapping's key/value pairs with YAML merge keys ("<<: *base")
// applied: the mapping's own keys win over merged ones, and earlier merged
// mappings win over later ones. A key written twice is an error, because
// silently keeping one of them hides a mistake.
func (d *decoder) entries(n *yaml.Node, path string) ([]entry, bool) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, "must be a mapping of keys to values, got %s", kindName(n))
		return nil, false
	}
	var own, merged []entry
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := d.resolve(n.Content[i])
		if k == nil || d.stop() {
			return nil, false
		}
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merged = append(merged, d.mergeSources(n.Content[i+1], path)...)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.fail(k, path, "keys must be plain strings, got %s", kindName(k))
			continue
		}
		if prev, dup := seen[k.Value]; dup {
			d.fail(k, join(path, k.Value), "key given twice (first on line %d)", prev.Line)
			continue
		}
		seen[k.Value] = k
		own = append(own, entry{key: k.Value, keyNode: k, val: n.Content[i+1]})
	}
	for _, e := range merged {
		if _, dup := seen[e.key]; !dup {
			seen[e.key] = e.keyNode
			own = append(own, e)
		}
	}
	return own, !d.stop()
}

// mergeSources returns the entries brought in by one "<<" value, which is a
// mapping or a list of mappings (usually aliases).
func (d *decoder) mergeSources(v *yaml.Node, path string) []entry {
	if d.merges >= maxMergeDepth {
		d.fail(v, join(path, "<<"), "merge keys nested more than %d deep (or a mapping merges itself)", maxMergeDepth)
		return nil
	}
	d.merges++
	defer func() { d.merges-- }()
	v = d.resolve(v)
	if v == nil || d.stop() {
		return nil
	}
	var maps []*yaml.Node
	switch v.Kind {
	case yaml.MappingNode:
		maps = []*yaml.Node{v}
	case yaml.SequenceNode:
		for _, m := range v.Content {
			if m = d.resolve(m); m == nil || d.stop() {
				return nil
			}
			maps = append(maps, m)
		}
	}
	var out []entry
	seen := map[string]bool{}
	for _, m := range maps {
		if m.Kind != yaml.MappingNode {
			d.fail(m, join(path, "<<"), "merge value must be a mapping or a list of mappings, got %s", kindName(m))
			return nil
		}
		es, ok := d.entries(m, path)
		if !ok {
			return nil
		}
		for _, e := range es {
			if !seen[e.key] {
				seen[e.key] = true
				out = append(out, e)
			}
		}
	}
	if v.Kind != yaml.MappingNode && v.Kind != yaml.SequenceNode {
		d.fail(v, join(path, "<<"), "merge value must be a mapping or a list of mappings, got %s", kindName(v))
	}
	return out
}
