package config

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// maxErrors caps how many problems one Parse reports: past a few, the rest
// are usually consequences of the first, and a hostile file must not be able
// to produce megabytes of messages.
const maxErrors = 20

// Error is one problem in a config, located by key path and file line.
type Error struct {
	Source string // file name given to Parse or Load; may be empty
	Line   int    // 1-based line in Source; 0 when unknown (e.g. a hand-built Config)
	Path   string // dotted key path such as "pool.max_jobs" or "pool.command[1]"; may be empty
	Msg    string
}

func (e *Error) Error() string {
	var b strings.Builder
	switch {
	case e.Source != "" && e.Line > 0:
		b.WriteString(e.Source + ":" + strconv.Itoa(e.Line) + ": ")
	case e.Source != "":
		b.WriteString(e.Source + ": ")
	case e.Line > 0:
		b.WriteString("line " + strconv.Itoa(e.Line) + ": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in one pass, in file order, one per line.
type Errors []*Error

func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// Unwrap lets errors.As find the individual *Error values.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

func (es Errors) full() bool { return len(es) >= maxErrors }

func (es *Errors) add(e *Error) {
	if len(*es) < maxErrors {
		*es = append(*es, e)
	} else if len(*es) == maxErrors {
		*es = append(*es, &Error{Source: e.Source, Msg: "too many errors, stopping"})
	}
}

func (es Errors) sortByLine() {
	sort.SliceStable(es, func(i, j int) bool {
		li, lj := es[i].Line, es[j].Line
		if li == 0 || lj == 0 {
			return li != 0 && lj == 0
		}
		return li < lj
	})
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError rewrites yaml.v3's "yaml: line N: msg" into the package's
// file:line form so every config error reads the same way.
func yamlError(source string, err error) error {
	msg := err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return Errors{{Source: source, Line: line, Msg: "invalid YAML: " + m[2]}}
	}
	return Errors{{Source: source, Msg: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")}}
}

// suggest returns the known key closest to a mistyped one, or "" when none is
// close enough to be a plausible typo.
func suggest(key string, known []string) string {
	norm := strings.ToLower(strings.ReplaceAll(key, "-", "_"))
	best, bestDist := "", -1
	for _, k := range known {
		if k == norm {
			return k
		}
		// "respawn" or "forbidden": one is a longer spelling of the other.
		if len(norm) >= 4 && (strings.HasPrefix(k, norm) || strings.HasPrefix(norm, k)) {
			return k
		}
		d := editDistance(norm, k)
		if bestDist < 0 || d < bestDist {
			best, bestDist = k, d
		}
	}
	limit := max(2, len(best)/3)
	if bestDist >= 0 && bestDist <= limit && bestDist < len(norm) {
		return best
	}
	return ""
}

// editDistance is the Damerau (optimal string alignment) distance, so a
// swapped pair of letters counts as one typo.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return max(len(a), len(b))
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
