package main

import (
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"testing"
)

// Direct mode end to end against the front: the differential table's requests (the
// hardening tests' smuggling, CL+TE, malformed targets and Host, header bombs, obs-fold, bare
// LF, NUL, ...) and a few hundred drawn from its grammar go to a server of each mode, and
// every answer on the connection must agree: its status and what PHP was given.
//
// The parser's model (testdata/http_verdicts.php) marks the two places where the front's
// answers are its own quirks rather than verdicts, and they are left out as in the parser's
// own differential: fasthttp's extra 400 after a trailer section starting with '0', an
// obs-fold it serves only at the client's end of input, and a refusal that end of input
// turns into a 400 (verdict.EOF).
func TestDirectModeAnswersAsTheFront(t *testing.T) {
	so := extensionSO(t)
	t.Setenv("FERRY_PHP_EXTENSION", so)
	front, direct := startVerdictServer(t, "front"), startVerdictServer(t, "direct")
	var names, raws []string
	for _, c := range directVerdictCases() {
		names, raws = append(names, c.name), append(raws, c.raw)
	}
	seed, n := int64(35), 300
	if s, err := strconv.ParseInt(os.Getenv("FERRY_VERDICT_SEED"), 10, 64); err == nil {
		seed = s // FERRY_VERDICT_SEED and FERRY_VERDICT_N replay or widen a run, as for the parser's
	}
	if v, err := strconv.Atoi(os.Getenv("FERRY_VERDICT_N")); err == nil && v > 0 {
		n = v
	}
	g := &requestGen{r: rand.New(rand.NewSource(seed))}
	for i := 0; i < n; i++ {
		names, raws = append(names, fmt.Sprintf("seed %d #%d", seed, i)), append(raws, g.request())
	}
	model := parserAnswers(t, so, raws)
	compared := 0
	for i, raw := range raws {
		f, d := front.answers(raw), direct.answers(raw)
		skip := false
		for _, a := range model[i] {
			skip = skip || a.Reparsed || a.EOF
		}
		if skip {
			continue
		}
		if m := len(model[i]); m > 0 && model[i][m-1].Quirk && len(f) == len(d)+1 && f[len(f)-1].Status == 400 {
			f = f[:len(d)]
		}
		compared++
		same := len(f) == len(d)
		for j := 0; same && j < len(f); j++ {
			same = f[j] == d[j]
		}
		if !same {
			t.Errorf("%s: %q\nfront:  %v\ndirect: %v", names[i], raw, f, d)
		}
	}
	t.Logf("%d of %d requests compared", compared, len(raws))
}
