package gateway

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// FuzzCookies checks, for any Cookie header and limits, that the context's
// cookies are well-formed serialize() data without a repeated key, that
// parse_str()'s rebuild of the flat paths (replayed here with PHP's
// registration minus the cookie rule) is the tree PHP's cookie parsing built,
// and that the allocation-free path for plain cookies agrees with the tree.
func FuzzCookies(f *testing.F) {
	for _, s := range []string{
		`a.b=3; a b=4; e; i="q"; j[]=1; j[]=2`,
		"a=1; a=2; b[x]=1; b[x]=2; b=3; c=1; c[y]=2; c=3",
		"n[9223372036854775807]=1; n[]=2; m[-5]=a; m[]=b; o[ 7]=1; o[\t]=2; p[a]b=1; q[a[b=1; r[a][b=1",
		"._Host-a=1; __Host-a=2; x=%41%2b%zz; 7=a; -0=b",
		"d" + strings.Repeat("[a]", 9) + "=1; d=2; e[][][x]=1; e[][]=2",
	} {
		f.Add([]byte(s), uint8(20), uint8(8))
	}
	f.Fuzz(func(t *testing.T, raw []byte, vars, nesting uint8) {
		h := New(nil, Options{MaxInputVars: int(vars%64) + 1, MaxInputNesting: int(nesting%12) + 1})
		l := &lists{raw: raw}
		plain, tree := h.parseCookies(l)
		enc := appendCookies(nil, plain, tree)
		if _, ok := (&unser{b: enc}).value(); !ok {
			t.Fatalf("malformed or repeated keys: %q", enc)
		}
		full := newCookieTree(h.opt.MaxInputNesting)
		eachCookie(raw, h.opt.MaxInputVars, func(k, v []byte) { full.register(k, rawURLDecode(v)) })
		if tree == nil {
			if got, want := enc, full.appendTo(nil); !bytes.Equal(got, want) {
				t.Fatalf("plain path %q, tree %q", got, want)
			}
			return
		}
		rebuilt := newCookieTree(1 << 20)
		rebuilt.overwrite = true
		d := unser{b: enc, i: 2}
		n, _ := d.upto(':')
		d.i++
		count, _ := strconv.Atoi(n)
		for range count {
			k, _ := d.value()
			v, _ := d.value()
			rebuilt.register([]byte(fmt.Sprint(k)), []byte(v.(string)))
		}
		if got, want := rebuilt.root.dump(), tree.root.dump(); got != want {
			t.Fatalf("parse_str() would rebuild\n%s\nfrom %q, PHP built\n%s", got, enc, want)
		}
	})
}

func (n *cnode) dump() string {
	var b strings.Builder
	b.WriteByte('{')
	for _, e := range n.entries {
		if e.dead {
			continue
		}
		if e.key.isInt {
			fmt.Fprintf(&b, "%d:", e.key.i)
		} else {
			fmt.Fprintf(&b, "%q:", e.key.s)
		}
		if e.arr != nil {
			b.WriteString(e.arr.dump())
		} else {
			fmt.Fprintf(&b, "%q", e.str)
		}
		b.WriteByte(',')
	}
	b.WriteByte('}')
	return b.String()
}
