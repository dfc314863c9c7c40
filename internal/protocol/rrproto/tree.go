package rrproto

import (
	"strconv"

	"github.com/ferry-php/ferry/internal/jsonq"
)

// RoadRunner sends form fields as a JSON tree in the body (parsed=true) and
// uploads as a JSON tree in the context, both shaped by the field names as PHP
// shapes $_POST and $_FILES: "a[b][]" is a list under a["b"]. A name that
// repeats without brackets keeps its last value.

// maxTreeDepth matches PHP's default max_input_nesting_level: deeper names are
// dropped, as PHP drops them.
const maxTreeDepth = 64

// formTree is an ordered map of names to values: string, *formTree or rrFile.
type formTree struct {
	keys []string
	vals map[string]any
	next int // the index "[]" takes next, as PHP counts it
}

func (t *formTree) set(k string, v any) {
	if t.vals == nil {
		t.vals = map[string]any{}
	}
	if _, ok := t.vals[k]; !ok {
		t.keys = append(t.keys, k)
	}
	t.vals[k] = v
	if i, err := strconv.Atoi(k); err == nil && i >= t.next {
		t.next = i + 1
	}
}

func (t *formTree) empty() bool { return len(t.keys) == 0 }

// splitName cuts "a[b][]" into ["a", "b", ""]. Spaces in the name are
// ignored, as RoadRunner does; text after an unclosed bracket is dropped.
func splitName(name string) []string {
	var segs []string
	i := 0
	base := make([]byte, 0, len(name))
	for ; i < len(name) && name[i] != '['; i++ {
		if name[i] != ' ' {
			base = append(base, name[i])
		}
	}
	segs = append(segs, string(base))
	for i < len(name) && name[i] == '[' {
		end := i + 1
		for end < len(name) && name[end] != ']' {
			end++
		}
		if end == len(name) {
			break
		}
		segs = append(segs, name[i+1:end])
		i = end + 1
	}
	return segs
}

// mount puts v at the path name describes.
func (t *formTree) mount(name string, v any) {
	segs := splitName(name)
	if segs[0] == "" || len(segs) > maxTreeDepth {
		return
	}
	cur := t
	for i, s := range segs {
		if s == "" {
			s = strconv.Itoa(cur.next)
		}
		if i == len(segs)-1 {
			cur.set(s, v)
			return
		}
		child, ok := cur.vals[s].(*formTree)
		if !ok {
			child = &formTree{}
			cur.set(s, child)
		}
		cur = child
	}
}

// rrFile is one upload as PSR7Worker reads it (Spiral\RoadRunner\Http\Request's
// UploadedFile shape).
type rrFile struct {
	name, mime, tmp string
	size            int64
	errCode         int
}

func (t *formTree) appendJSON(b []byte) []byte {
	b = append(b, '{')
	for i, k := range t.keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		switch v := t.vals[k].(type) {
		case string:
			b = appendJSONString(b, v)
		case *formTree:
			b = v.appendJSON(b)
		case rrFile:
			b = append(b, `{"name":`...)
			b = appendJSONString(b, v.name)
			b = append(b, `,"mime":`...)
			b = appendJSONString(b, v.mime)
			b = append(b, `,"size":`...)
			b = strconv.AppendInt(b, v.size, 10)
			b = append(b, `,"error":`...)
			b = strconv.AppendInt(b, int64(v.errCode), 10)
			b = append(b, `,"tmpName":`...)
			b = appendJSONString(b, v.tmp)
			b = append(b, '}')
		}
	}
	return append(b, '}')
}

// appendJSONString quotes s as a JSON string; bytes that are not UTF-8 become
// U+FFFD, so that PHP's json_decode accepts the whole.
func appendJSONString(b []byte, s string) []byte { return jsonq.Append(b, s) }
