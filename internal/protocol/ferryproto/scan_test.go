package ferryproto

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ferry-php/ferry/internal/protocol"
	"github.com/valyala/fasthttp"
)

// headersOf collects what ended up in the response, in order, per name.
func headersOf(r *fasthttp.Response) map[string][]string {
	m := map[string][]string{}
	r.Header.VisitAll(func(k, v []byte) {
		if string(k) == "Content-Type" || string(k) == "Server" || string(k) == "Date" {
			return
		}
		m[string(k)] = append(m[string(k)], string(v))
	})
	return m
}

func TestScanAnswerMatchesEncodingJSON(t *testing.T) {
	cases := []string{
		`{"status":200,"headers":{"X-A":["1","2"],"Set-Cookie":["a=b; path=\/"]}}`,
		`{"status":404,"headers":[]}`,
		`{"headers":{"X-Esc":["tab\there \"q\" \u00e9 \\ back"]},"status":201}`,
		`{}`,
		` { "status" : 302 , "headers" : { "Location" : [ "\/x" ] } } `,
	}
	for _, c := range cases {
		var fast fasthttp.Response
		status, ok := scanAnswer([]byte(c), &fast)
		if !ok {
			t.Fatalf("fast path refused %s", c)
		}
		var a protocol.Head
		if err := json.Unmarshal([]byte(c), &a); err != nil {
			t.Fatal(err)
		}
		want := map[string][]string{}
		for k, vs := range a.Headers {
			want[k] = vs
		}
		if status != a.Status || !reflect.DeepEqual(headersOf(&fast), want) {
			t.Fatalf("%s: fast %d %v, json %d %v", c, status, headersOf(&fast), a.Status, want)
		}
	}
}

func TestScanAnswerRefusesWhatItDoesNotKnow(t *testing.T) {
	for _, c := range []string{
		``, `[]`, `{"status":"200"}`, `{"status":200,"extra":1}`, `{"status":200`,
		`{"headers":{"A":"not a list"}}`, `{"headers":{"A":["\ud83d\ude00"]}}`, `{"status":200}x`,
		`{"status":12345}`, `{"headers":{"A":["\x"]}}`,
	} {
		var r fasthttp.Response
		if _, ok := scanAnswer([]byte(c), &r); ok {
			t.Errorf("fast path accepted %q", c)
		}
	}
}

func TestWriteAnswerFallsBackAndRejects(t *testing.T) {
	var r fasthttp.Response
	// A surrogate pair goes to encoding/json and still works.
	if _, err := (Protocol{}).WriteAnswer(&r, []byte(`{"status":200,"headers":{"X-E":["\ud83d\ude00"]}}`), []byte("b")); err != nil {
		t.Fatal(err)
	}
	if got := string(r.Header.Peek("X-E")); got != "😀" {
		t.Fatalf("X-E %q", got)
	}
	if string(r.Header.ContentType()) != "text/html; charset=UTF-8" {
		t.Fatalf("default content type %q", r.Header.ContentType())
	}
	var typed fasthttp.Response
	if _, err := (Protocol{}).WriteAnswer(&typed, []byte(`{"status":200,"headers":{"content-type":["application\/json"]}}`), nil); err != nil {
		t.Fatal(err)
	}
	if got := string(typed.Header.ContentType()); got != "application/json" {
		t.Fatalf("the worker's Content-Type lost: %q", got)
	}
	for _, bad := range []string{`not json`, `{"status":42}`, `{"status":1000}`} {
		var r fasthttp.Response
		if _, err := (Protocol{}).WriteAnswer(&r, []byte(bad), nil); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

// FuzzScanAnswer: whatever the fast scanner accepts, encoding/json must read the
// same way; it may refuse more, never accept differently.
func FuzzScanAnswer(f *testing.F) {
	f.Add([]byte(`{"status":200,"headers":{"X-A":["1","2"]}}`))
	f.Add([]byte(`{"headers":{"K":["\u00e9\/\n"]},"status":500}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var fast fasthttp.Response
		status, ok := scanAnswer(b, &fast)
		if !ok {
			return
		}
		var a protocol.Head
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatalf("fast path accepted %q that encoding/json rejects: %v", b, err)
		}
		if status != a.Status {
			t.Fatalf("status %d vs %d", status, a.Status)
		}
		for k, vs := range a.Headers {
			for _, v := range vs {
				found := false
				fast.Header.VisitAll(func(hk, hv []byte) {
					if string(hv) == v {
						found = true
					}
				})
				// encoding/json turns invalid UTF-8 into U+FFFD where the scanner keeps
				// the bytes; PHP's json_encode never emits invalid UTF-8 anyway.
				if !found && k != "" && isToken(k) && v != "" && printable(v) && !strings.ContainsRune(v, utf8.RuneError) {
					t.Fatalf("header %q=%q lost", k, v)
				}
			}
		}
	})
}

func isToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || c == ':' {
			return false
		}
	}
	return true
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] == 0x7f {
			return false
		}
	}
	return true
}
