package gateway

import (
	"bytes"
	"math"
	"strconv"
)

// cookieTree is $_COOKIE built the way PHP's php_register_variable_ex builds
// it, for a header where some cookie is not plain: names mangled, "a[x][]"
// nesting, max_input_nesting_level, and the cookie rule that a later cookie
// never replaces an earlier top-level one of the same name.
//
// The result goes to the worker as flat pairs, one per leaf, its path written
// as "name[k1][k2]" (see appendTo): parse_str() rebuilds exactly this
// tree from them, and the context keeps a small fixed depth however deep the
// cookie names nest.
type cookieTree struct {
	root    cnode
	nesting int
	// overwrite drops the cookie rule: a later top-level name replaces an
	// earlier one, as for any other PHP input (parse_str()).
	overwrite bool
	slab      []cnode
}

type ckey struct {
	s     string
	i     int64
	isInt bool
}

type centry struct {
	key  ckey
	str  []byte
	arr  *cnode
	dead bool
}

// cnode is a PHP array: entries in insertion order, a key's update keeping
// its place, and PHP's next free integer key for "[]".
type cnode struct {
	entries []centry
	index   map[ckey]int
	next    int64 // math.MinInt64: no integer key yet, "[]" gives 0
	first   [1]centry
}

// newNode holds its first entry inline and comes from a slab: a name nests
// one array in another at each "[...]", most of them with one entry, and a
// header of deep names must not cost an allocation per level.
func (t *cookieTree) newNode() *cnode {
	if len(t.slab) == cap(t.slab) {
		t.slab = make([]cnode, 0, 64)
	}
	t.slab = append(t.slab, cnode{next: math.MinInt64})
	n := &t.slab[len(t.slab)-1]
	n.entries = n.first[:0]
	return n
}

func newCookieTree(nesting int) *cookieTree {
	return &cookieTree{root: cnode{next: math.MinInt64}, nesting: nesting}
}

// phpKey is a key as PHP's symbol tables take it: a decimal integer in
// canonical form ("0", "-12", no leading zero, no "-0", within int64) is an
// integer key.
func phpKey(s []byte) ckey {
	if len(s) > 0 && len(s) <= 20 && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9')) {
		if i, err := strconv.ParseInt(string(s), 10, 64); err == nil && strconv.FormatInt(i, 10) == string(s) {
			return ckey{i: i, isInt: true}
		}
	}
	return ckey{s: string(s)}
}

func (n *cnode) find(k ckey) int {
	if n.index != nil {
		if i, ok := n.index[k]; ok {
			return i
		}
		return -1
	}
	for i := range n.entries {
		if !n.entries[i].dead && n.entries[i].key == k {
			return i
		}
	}
	return -1
}

func (n *cnode) add(e centry) *centry {
	if e.key.isInt && e.key.i >= n.next {
		n.next = e.key.i
		if n.next != math.MaxInt64 {
			n.next++
		}
	}
	n.entries = append(n.entries, e)
	if n.index != nil {
		n.index[e.key] = len(n.entries) - 1
	} else if len(n.entries) > smallGroup {
		n.index = make(map[ckey]int, 2*len(n.entries))
		for i := range n.entries {
			if !n.entries[i].dead {
				n.index[n.entries[i].key] = i
			}
		}
	}
	return &n.entries[len(n.entries)-1]
}

// set is zend_symtable_update: in place when the key is there.
func (n *cnode) set(k ckey, str []byte, arr *cnode) {
	if i := n.find(k); i >= 0 {
		n.entries[i].str, n.entries[i].arr = str, arr
		return
	}
	n.add(centry{key: k, str: str, arr: arr})
}

// push is zend_hash_next_index_insert; false when PHP's would fail (the key
// after PHP_INT_MAX).
func (n *cnode) push(str []byte, arr *cnode) bool {
	k := ckey{isInt: true}
	if n.next != math.MinInt64 {
		k.i = n.next
	}
	if n.find(k) >= 0 {
		return false
	}
	n.add(centry{key: k, str: str, arr: arr})
	return true
}

func (n *cnode) del(k ckey) {
	if i := n.find(k); i >= 0 {
		n.entries[i] = centry{dead: true}
		if n.index != nil {
			delete(n.index, k)
		}
	}
}

// arrayAt is the step into "[k]" of a name: the array there, a new one when
// the key is missing or holds a string (PHP replaces it).
func (t *cookieTree) arrayAt(n *cnode, k ckey) *cnode {
	if i := n.find(k); i >= 0 {
		e := &n.entries[i]
		if e.arr == nil {
			e.str, e.arr = nil, t.newNode()
		}
		return e.arr
	}
	return n.add(centry{key: k, arr: t.newNode()}).arr
}

// register adds one cookie (value already decoded) as
// php_register_variable_ex does.
func (t *cookieTree) register(rawName, value []byte) {
	for len(rawName) > 0 && rawName[0] == ' ' {
		rawName = rawName[1:]
	}
	name := append([]byte(nil), rawName...)
	bracket := -1
	for i, c := range name {
		if c == ' ' || c == '.' {
			name[i] = '_'
		} else if c == '[' {
			bracket = i
			break
		}
	}
	base := name
	if bracket >= 0 {
		base = name[:bracket]
	}
	// Mangling must not forge the prefixes browsers reserve for secure cookies.
	for _, prefix := range [...]string{"__Host-", "__Secure-"} {
		if bytes.HasPrefix(base, []byte(prefix)) && !bytes.HasPrefix(rawName, []byte(prefix)) {
			return
		}
	}
	if len(base) == 0 {
		return
	}
	cur := &t.root
	index, hasIndex := base, true
	if bracket >= 0 {
		ip := bracket
		for level := 1; ; level++ {
			if level > t.nesting {
				t.root.del(phpKey(base))
				return
			}
			ip++
			start := ip
			if ip < len(name) && cSpace(name[ip]) {
				ip++
			}
			var next []byte
			nextIndexed := true
			if ip < len(name) && name[ip] == ']' {
				nextIndexed = false
			} else {
				end := bytes.IndexByte(name[ip:], ']')
				if end < 0 {
					// No closing bracket: not an index; the name goes on, mangled.
					name[start-1] = '_'
					for i := start; i < len(name); i++ {
						if c := name[i]; c == ' ' || c == '.' || c == '[' {
							name[i] = '_'
						}
					}
					if level == 1 {
						index = name
					}
					break
				}
				ip += end
				next = name[start:ip]
			}
			if hasIndex {
				cur = t.arrayAt(cur, phpKey(index))
			} else {
				arr := t.newNode()
				if !cur.push(nil, arr) {
					return
				}
				cur = arr
			}
			index, hasIndex = next, nextIndexed
			ip++
			if ip >= len(name) || name[ip] != '[' {
				break
			}
		}
	}
	if !hasIndex {
		cur.push(value, nil)
		return
	}
	k := phpKey(index)
	if !t.overwrite && cur == &t.root && cur.find(k) >= 0 {
		return
	}
	cur.set(k, value, nil)
}

// appendTo writes the tree as the context's cookies: one entry per
// leaf, "name[k1][k2]" => value, in PHP's order. The count is written first.
func (t *cookieTree) appendTo(b phpArray) phpArray {
	b = b.open(t.root.leaves())
	var path []byte
	for i := range t.root.entries {
		switch e := &t.root.entries[i]; {
		case e.dead:
		case e.arr == nil && e.key.isInt:
			b = b.int(e.key.i).bytes(e.str)
		default:
			path = appendKey(path[:0], e.key)
			b = e.appendLeaves(b, path)
		}
	}
	return b.close()
}

func (e *centry) appendLeaves(b phpArray, path []byte) phpArray {
	if e.arr == nil {
		return b.bytes(path).bytes(e.str)
	}
	for i := range e.arr.entries {
		c := &e.arr.entries[i]
		if c.dead {
			continue
		}
		p := appendKey(append(path, '['), c.key)
		b = c.appendLeaves(b, append(p, ']'))
	}
	return b
}

func (n *cnode) leaves() int {
	count := 0
	for _, e := range n.entries {
		switch {
		case e.dead:
		case e.arr == nil:
			count++
		default:
			count += e.arr.leaves()
		}
	}
	return count
}

func appendKey(b []byte, k ckey) []byte {
	if k.isInt {
		return strconv.AppendInt(b, k.i, 10)
	}
	return append(b, k.s...)
}
