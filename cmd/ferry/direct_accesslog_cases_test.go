package main

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"regexp"
	"strings"
	"testing"
)

// The requests of TestDirectAccessLogMatchesTheFront, and how a line is read back: its
// fields by name, with what differs from run to run checked for its form and blanked.

// logCases are requests with what a log line must survive: quotes, backslashes, controls,
// invalid and valid UTF-8 in the fields the line quotes, repeated fields, HTTP/1.0, HEAD,
// the server's own answers (OPTIONS *, a worker's exit, an exception) and a file answer.
// The first word of each is its method; each is told apart in the log by its case=N, N its
// index. A request the parser refuses (a control byte in a field: case 3) is logged by
// neither.
const cutCase = "15"

// randomLogCases are n requests whose User-Agent, Referer and query are drawn from what a
// line must escape (quotes, backslashes, tab, DEL, every byte past 0x7f, valid UTF-8 too),
// numbered from first; short enough that direct mode cuts none of them.
func randomLogCases(seed int64, first, n int) []string {
	r := rand.New(rand.NewSource(seed))
	pieces := []string{"\"", "\\", "\t", "\x7f", "é", "☃", "𝄞", "\xef\xbf\xbd", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xc0\xaf", "\xe2\x98", "a", "Z", "9", " ", "'", "<", "{", "%"}
	field := func(query bool) string {
		var b strings.Builder
		for i := r.Intn(30); i > 0; i-- {
			p := pieces[r.Intn(len(pieces))]
			if r.Intn(4) == 0 {
				p = string([]byte{byte(0x80 + r.Intn(0x80))}) // a lone byte past 0x7f
			}
			if query && (p == " " || p == "\t" || p == "\x7f" || p == "%") {
				continue // refused in a target (or no escape): the parsers' business, not the log's
			}
			b.WriteString(p)
		}
		return b.String()
	}
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("GET /big?n=3&case=%d&q=%s HTTP/1.1\r\nHost: example.test\r\nConnection: close\r\nUser-Agent: x%sx\r\nReferer: y%sy\r\n\r\n",
			first+i, field(true), field(false), field(false))
	}
	return out
}

func logCases() []string {
	h := "Host: example.test\r\nConnection: close\r\n"
	return []string{
		"GET /echo?case=0 HTTP/1.1\r\n" + h + "User-Agent: t\xc3\xa9st \"agent\" \\ back\r\nReferer: http://r.test/\xff\xfe\"\r\nX-Request-Id: given-0\r\n\r\n",
		"POST /echo?case=1 HTTP/1.1\r\n" + h + "Content-Length: 3\r\nX-Request-Id: bad id\r\n\r\nabc",
		"HEAD /echo?case=2 HTTP/1.1\r\n" + h + "\r\n",
		"GET /echo?case=3&q=%22x%22&u=%C3%A9 HTTP/1.1\r\n" + h + "User-Agent: a\tb\x7fc\x01d\r\n\r\n",
		"GET /nowhere?case=4 HTTP/1.1\r\n" + h + "User-Agent: one\r\nUser-Agent: two\r\nReferer: first\r\nReferer: second\r\n\r\n",
		"GET /big?n=7&case=5 HTTP/1.0\r\nHost: example.test\r\nX-Request-Id: " + strings.Repeat("x", 129) + "\r\n\r\n",
		"GET /big?n=7&case=6 HTTP/1.1\r\n" + h + "User-Agent:\r\nX-Request-Id: a-Z_0.9:/+=@\r\n\r\n",
		"GET /echo?case=7&\xc3\xa9\xff HTTP/1.1\r\n" + h + "User-Agent: " + strings.Repeat("ü", 60) + "\r\n\r\n",
		"GET /file?case=8 HTTP/1.1\r\n" + h + "\r\n",
		"GET /big?case=9&n=5000 HTTP/1.1\r\n" + h + "\r\n",
		"GET /throw?case=10 HTTP/1.1\r\n" + h + "\r\n",
		"GET /crash?case=11 HTTP/1.1\r\n" + h + "\r\n",
		"GET http://example.test/echo?case=12 HTTP/1.1\r\n" + h + "\r\n",
		"OPTIONS * HTTP/1.1\r\n" + h + "User-Agent: case=13\r\n\r\n",
		"GET /echo?case=14 HTTP/1.1\r\n" + h + "User-Agent: a\tb\x7fc\r\n\r\n",
		// cutCase: past what a line may hold in PIPE_BUF, direct mode cuts the fields
		"GET /big?n=1&case=15&" + strings.Repeat("u", 3000) + " HTTP/1.1\r\n" + h + "User-Agent: " + strings.Repeat("\"", 3000) +
			"\r\nReferer: " + strings.Repeat("r", 3000) + "\r\n\r\n",
		// answers in parts (chunked; close-delimited for HTTP/1.0): no bytes counted, as the front counts them
		"GET /parts?case=16 HTTP/1.1\r\n" + h + "X-Request-Id: parts\r\n\r\n",
		"GET /parts?case=17 HTTP/1.0\r\nHost: example.test\r\n\r\n",
	}
}

var (
	caseOf       = regexp.MustCompile(`case=(\d+)`)
	madeID       = regexp.MustCompile(`^[0-9a-f]{16}-[0-9a-z]+$`)
	jsonTime     = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`)
	combinedLine = regexp.MustCompile(`^(\S+) - - \[(\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4})\] "([^"]*)" (\d+) (\d+) "([^"]*)" "([^"]*)" (\S+) (\d+\.\d{6}) (\d+\.\d{6}) (\d+\.\d{6}) (-|\d+)$`)
	seconds6     = regexp.MustCompile(`^\d+\.\d{6}$`)
)

// jsonFields is a JSON line's keys in order and their values as written.
func jsonFields(t *testing.T, line string) ([]string, map[string]string) {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("not a JSON line: %v\n%s", err, line)
	}
	d := json.NewDecoder(strings.NewReader(line))
	d.Token()
	var keys []string
	vals := map[string]string{}
	for d.More() {
		k, _ := d.Token()
		var v json.RawMessage
		d.Decode(&v)
		keys = append(keys, k.(string))
		vals[k.(string)] = string(v)
	}
	return keys, vals
}

// comparable is a line's fields by name, with the values that differ from run to run
// (times, pid, a made id) checked for their form and then blanked.
func comparable(t *testing.T, format, line string) map[string]string {
	t.Helper()
	var f map[string]string
	if format == "json" {
		keys, vals := jsonFields(t, line)
		want := "time request_id remote method uri proto status bytes duration queue_wait php pid referer user_agent"
		if strings.Join(keys, " ") != want {
			t.Errorf("fields %v, want %s", keys, want)
		}
		f = vals
		var tm, id string
		json.Unmarshal([]byte(f["time"]), &tm)
		json.Unmarshal([]byte(f["request_id"]), &id)
		if !jsonTime.MatchString(tm) {
			t.Errorf("time %q in %s", tm, line)
		}
		f["time"], f["request_id"] = "", strings.Trim(f["request_id"], `"`)
		for _, k := range []string{"duration", "queue_wait", "php"} {
			if !seconds6.MatchString(f[k]) {
				t.Errorf("%s %q in %s", k, f[k], line)
			}
			f[k] = ""
		}
		f["pid"] = fmt.Sprint(f["pid"] != "0")
	} else {
		m := combinedLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("not a combined line: %q", line)
		}
		f = map[string]string{"remote": m[1], "request": m[3], "status": m[4], "bytes": m[5], "referer": m[6],
			"user_agent": m[7], "request_id": m[8], "pid": fmt.Sprint(m[12] != "-")}
	}
	if madeID.MatchString(f["request_id"]) {
		f["request_id"] = "(made)"
	}
	return f
}

// byCase maps each line to the case whose request it logs.
func byCase(t *testing.T, lines []string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, l := range lines {
		m := caseOf.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("a line of no case: %q", l)
		}
		if out[m[1]] != "" {
			t.Fatalf("case %s logged twice:\n%s\n%s", m[1], out[m[1]], l)
		}
		out[m[1]] = l
	}
	return out
}
