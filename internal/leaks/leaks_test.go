package leaks

import (
	"strings"
	"testing"
	"time"
)

func TestParseTakesAReportAndClipsItsText(t *testing.T) {
	long := strings.Repeat("é", maxField) // 2 bytes each: the cut must not split one
	f, err := Parse([]byte(`{"leak":{"kind":"static","subject":"App\\Registry::$items","message":"` + long +
		`","request":"GET /add","method":"GET","path":"/add","pid":7,"requests":12}}`))
	if err != nil {
		t.Fatal(err)
	}
	if f.Kind != "static" || f.Subject != `App\Registry::$items` || f.Method != "GET" || f.Path != "/add" || f.Requests != 12 {
		t.Fatalf("parsed %+v", f)
	}
	if len(f.Message) > maxField+3 || !strings.HasSuffix(f.Message, "é...") {
		t.Fatalf("message not clipped on a rune: %d bytes, ends %q", len(f.Message), f.Message[len(f.Message)-8:])
	}
}

func TestParseRefusesWhatIsNotAFinding(t *testing.T) {
	for _, p := range []string{`{"stop":true}`, `{"leak":{}}`, `{"leak":{"kind":"x","subject":"y"}}`, `{"leak":[1]}`, `{"leak":`} {
		if _, err := Parse([]byte(p)); err == nil {
			t.Errorf("%s: accepted", p)
		}
	}
}

func TestStoreKeepsEachFindingOnceAndCountsReports(t *testing.T) {
	s := NewStore()
	t0 := time.Unix(1000, 0)
	a := Finding{Kind: "static", Subject: "A::$x", Message: "grows", PID: 1}
	if !s.Add(a, t0) {
		t.Fatal("a new finding was not new")
	}
	again := a
	again.PID, again.Message = 2, "grows (seen by a restarted worker)"
	if s.Add(again, t0.Add(time.Minute)) {
		t.Fatal("the same kind and subject counted as new")
	}
	if !s.Add(Finding{Kind: "ini", Subject: "A::$x", Message: "m"}, t0) {
		t.Fatal("same subject of another kind is another finding")
	}
	got := s.List()
	if len(got) != 2 || got[0].PID != 1 || got[0].Message != "grows" || got[0].Reports != 2 ||
		!got[0].First.Equal(t0) || !got[0].Last.Equal(t0.Add(time.Minute)) {
		t.Fatalf("list %+v", got)
	}
	kinds, dropped := s.Kinds()
	if len(kinds) != 2 || kinds[0] != (KindCount{"ini", 1}) || kinds[1] != (KindCount{"static", 1}) || dropped != 0 {
		t.Fatalf("kinds %v dropped %d", kinds, dropped)
	}
	if txt := Text(got); !strings.Contains(txt, "[static] grows\n") || !strings.Contains(txt, "found by 2 workers") {
		t.Fatalf("text:\n%s", txt)
	}
}

func TestStoreIsBounded(t *testing.T) {
	s := NewStore()
	for i := range MaxFindings + 5 {
		s.Add(Finding{Kind: "static", Subject: strings.Repeat("x", i+1), Message: "m"}, time.Now())
	}
	if n := len(s.List()); n != MaxFindings {
		t.Fatalf("kept %d", n)
	}
	if _, dropped := s.Kinds(); dropped != 5 {
		t.Fatalf("dropped %d", dropped)
	}
}
