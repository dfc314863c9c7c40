package static

import "testing"

func TestETagListMatch(t *testing.T) {
	const etag = `"abc-1"`
	for _, c := range []struct {
		list         string
		weak, strong bool
	}{
		{`"abc-1"`, true, true},
		{`W/"abc-1"`, true, false},
		{` "x" ,W/"y",  "abc-1" `, true, true},
		{`*`, true, true},
		{`"abc-1`, false, false},
		{`abc-1`, false, false},
		{`"x,"abc-1"`, false, false},
		{`"abc-10"`, false, false},
		{``, false, false},
	} {
		if got := etagListMatch([]byte(c.list), etag, false); got != c.weak {
			t.Errorf("weak %q: %v", c.list, got)
		}
		if got := etagListMatch([]byte(c.list), etag, true); got != c.strong {
			t.Errorf("strong %q: %v", c.list, got)
		}
	}
}
