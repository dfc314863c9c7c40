package voting_test

import (
	"crypto/rand"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

var uuidRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// TestVotingService drives the voting service over HTTP: a real Tarantool (a temp data dir,
// WAL on) and a real `ferry serve` running examples/voting/worker.php. The steps share the
// servers and run in order.
func TestVotingService(t *testing.T) {
	tt := startTarantool(t, "write")
	f := startFerry(t, tt, false)
	countSessions := func() int {
		var n int
		tt.eval(`return box.space.sessions:len()`, &n)
		return n
	}

	var voter string
	t.Run("first visit sets a cookie and a session row", func(t *testing.T) {
		before := countSessions()
		r := do(t, "GET", f.url+"/", "", nil, false)
		if r.status != 200 {
			t.Fatalf("GET /: %d %s", r.status, tail(r.body, 500))
		}
		voter = r.voter()
		if !uuidRe.MatchString(voter) {
			t.Fatalf("voter cookie %q is not a UUID (Set-Cookie: %q)", voter, r.header.Values("Set-Cookie"))
		}
		if sc := r.header.Get("Set-Cookie"); !strings.Contains(sc, "HttpOnly") || !strings.Contains(sc, "Path=/") {
			t.Errorf("Set-Cookie %q lacks HttpOnly or Path=/", sc)
		}
		var row []any
		tt.eval(fmt.Sprintf(`return box.space.sessions:get(%q)`, voter), &row)
		if len(row) != 4 || row[0] != voter || row[2] != "127.0.0.1" || row[3] != "voting-e2e/1.0" {
			t.Fatalf("session row %v, want [%s, <time>, 127.0.0.1, voting-e2e/1.0]", row, voter)
		}
		if at, _ := row[1].(float64); time.Since(time.Unix(int64(at), 0)).Abs() > 10*time.Second {
			t.Errorf("session time %v is not now", row[1])
		}
		if got := countSessions(); got != before+1 {
			t.Errorf("sessions: %d -> %d, want one more", before, got)
		}
		// The cookie is honoured: no new session on the next visits.
		for _, path := range []string{"/", "/bad"} {
			if r := do(t, "GET", f.url+path, voter, nil, false); r.status != 200 || r.voter() != "" {
				t.Errorf("GET %s with a valid cookie: status %d, new cookie %q", path, r.status, r.voter())
			}
		}
		if sessions := countSessions(); sessions != before+1 {
			t.Errorf("a returning visitor created sessions: %d, want %d", sessions, before+1)
		}
	})

	t.Run("pages show the 9 highest and the 9 lowest ratings", func(t *testing.T) {
		all := tt.ratings()
		if len(all) != 16000 {
			t.Fatalf("%d stickers, want 16000", len(all))
		}
		good := shown(t, do(t, "GET", f.url+"/", voter, nil, false).body)
		if fmt.Sprint(good) != fmt.Sprint(all[:9]) {
			t.Errorf("/ shows %v, want the 9 best %v", good, all[:9])
		}
		worst := make([]rated, 9)
		for i := range worst {
			worst[i] = all[len(all)-1-i]
		}
		if bad := shown(t, do(t, "GET", f.url+"/bad", voter, nil, false).body); fmt.Sprint(bad) != fmt.Sprint(worst) {
			t.Errorf("/bad shows %v, want the 9 worst %v", bad, worst)
		}
	})

	var a, b rated // the first two of the top page; votes turn them round
	var votes int
	t.Run("votes change the order, one vote per session per pair", func(t *testing.T) {
		top := shown(t, do(t, "GET", f.url+"/", voter, nil, false).body)
		a, b = top[0], top[1]
		need := 1 // votes for b over a until b ranks first
		for !(b.Rating+need > a.Rating-need || (b.Rating+need == a.Rating-need && b.ID > a.ID)) {
			need++
		}
		if need > 30 {
			t.Fatalf("ratings %v and %v are too far apart for this test", a, b)
		}
		last := 0
		for i := 1; i <= need; i++ {
			status, v := vote(t, f, newVoter(t, f), b.ID, a.ID)
			if status != 200 || !v.OK || v.Vote <= last {
				t.Fatalf("vote %d: status %d %+v (previous vote id %d)", i, status, v, last)
			}
			last = v.Vote
			votes++
			first := shown(t, do(t, "GET", f.url+"/", voter, nil, false).body)[0]
			want := a
			want.Rating -= i
			if i == need {
				want = rated{b.ID, b.Rating + i}
			}
			if first != want {
				t.Fatalf("after %d of %d votes the top sticker is %v, want %v", i, need, first, want)
			}
		}
		stored := map[int]int{}
		for _, s := range tt.ratings() {
			stored[s.ID] = s.Rating
		}
		if stored[b.ID] != b.Rating+need || stored[a.ID] != a.Rating-need {
			t.Errorf("stored ratings %d: %d and %d: %d, want %d and %d", b.ID, stored[b.ID], a.ID, stored[a.ID], b.Rating+need, a.Rating-need)
		}
		a.Rating, b.Rating = a.Rating-need, b.Rating+need

		voter2 := newVoter(t, f)
		if status, v := vote(t, f, voter2, a.ID, b.ID); status != 200 || !v.OK {
			t.Fatalf("first vote of a new session: %d %+v", status, v)
		}
		votes++
		a.Rating, b.Rating = a.Rating+1, b.Rating-1
		for _, pair := range [][2]int{{a.ID, b.ID}, {b.ID, a.ID}} {
			if status, v := vote(t, f, voter2, pair[0], pair[1]); status != 409 || v.Outcome != "already_voted" {
				t.Errorf("second vote on the pair %v: %d %+v, want 409 already_voted", pair, status, v)
			}
		}
		// The HTML form: a redirect back to the page it came from.
		r := do(t, "POST", f.url+"/vote", voter2, url.Values{"winner": {"1"}, "loser": {"2"}, "from": {"/bad"}}, false)
		if r.status != 303 || r.header.Get("Location") != "/bad" {
			t.Errorf("form vote: %d Location %q, want 303 /bad", r.status, r.header.Get("Location"))
		}
		votes++
		var n int
		if tt.eval(`return box.space.votes:len()`, &n); n != votes {
			t.Errorf("%d votes stored, want %d", n, votes)
		}
	})

	t.Run("a forged or malformed cookie gets a fresh session", func(t *testing.T) {
		forged := randomUUID()
		for _, cookie := range []string{forged, "not-a-uuid", strings.ToUpper(voter), voter + "0", "' or 1=1 --"} {
			r := do(t, "GET", f.url+"/", cookie, nil, false)
			if r.status != 200 || !uuidRe.MatchString(r.voter()) || r.voter() == cookie || r.voter() == voter {
				t.Errorf("cookie %q: status %d, new cookie %q; want 200 and a fresh session", cookie, r.status, r.voter())
			}
		}
		var row any
		if tt.eval(fmt.Sprintf(`return box.space.sessions:get(%q)`, forged), &row); row != nil {
			t.Errorf("the forged id was stored as a session: %v", row)
		}
		if status, v := vote(t, f, forged, 1, 2); status != 403 || v.Outcome != "no_session" {
			t.Errorf("vote with a forged cookie: %d %+v, want 403 no_session", status, v)
		}
	})

	t.Run("bad requests", func(t *testing.T) {
		for _, c := range []struct{ winner, loser string }{{"16001", "1"}, {"1", "999999999"}} {
			r := do(t, "POST", f.url+"/vote", voter, url.Values{"winner": {c.winner}, "loser": {c.loser}}, false)
			if r.status != 400 || !strings.Contains(r.body, "no sticker with that id") {
				t.Errorf("unknown sticker %v: %d %s", c, r.status, tail(r.body, 200))
			}
		}
		for _, form := range []url.Values{{"winner": {"x"}, "loser": {"1"}}, {"winner": {"1"}}, {"winner": {"3"}, "loser": {"3"}}, {"winner": {"-1"}, "loser": {"2"}}} {
			if r := do(t, "POST", f.url+"/vote", voter, form, true); r.status != 400 {
				t.Errorf("POST /vote %v: %d, want 400", form, r.status)
			}
		}
		if r := do(t, "GET", f.url+"/vote", voter, nil, false); r.status != 405 {
			t.Errorf("GET /vote: %d, want 405", r.status)
		}
		if r := do(t, "GET", f.url+"/nope", voter, nil, false); r.status != 404 {
			t.Errorf("GET /nope: %d, want 404", r.status)
		}
		if r := do(t, "GET", f.url+"/stickers/07.svg", "", nil, false); r.status != 200 || !strings.HasPrefix(r.body, "<svg") {
			t.Errorf("GET /stickers/07.svg: %d %q", r.status, tail(r.body, 100))
		}
	})

	// Checks a page (and so a session, both ratings and the votes) came through a restart.
	checkKept := func(t *testing.T) {
		t.Helper()
		for i := 0; i < 6; i++ { // several requests: every worker must have reconnected
			r := do(t, "GET", f.url+"/", voter, nil, false)
			if r.status != 200 || r.voter() != "" {
				t.Fatalf("request %d after the restart: status %d, new cookie %q", i, r.status, r.voter())
			}
			first, second := b, a
			if a.Rating > b.Rating || (a.Rating == b.Rating && a.ID > b.ID) {
				first, second = a, b
			}
			if top := shown(t, r.body); len(top) < 2 || top[0] != first || top[1] != second {
				t.Fatalf("top after the restart %v, want %v then %v", top, first, second)
			}
		}
		var n int
		if tt.eval(`return box.space.votes:len()`, &n); n != votes {
			t.Errorf("%d votes after the restart, want %d", n, votes)
		}
	}

	t.Run("Tarantool down gives 503, then recovers and kept its data", func(t *testing.T) {
		tt.kill9()
		for i := 0; i < 4; i++ {
			r := do(t, "GET", f.url+"/", voter, nil, false)
			if r.status != 503 || r.header.Get("Retry-After") == "" || !strings.Contains(r.body, "not reachable") || r.took > 2*time.Second {
				t.Fatalf("GET / with Tarantool down: %d in %v, Retry-After %q: %s", r.status, r.took, r.header.Get("Retry-After"), tail(r.body, 300))
			}
		}
		if status, v := vote(t, f, voter, 5, 6); status != 503 || v.Outcome != "unavailable" {
			t.Errorf("vote with Tarantool down: %d %+v", status, v)
		}
		tt.start()
		checkKept(t)
	})

	t.Run("a hung Tarantool gives 503 within the timeouts", func(t *testing.T) {
		tt.signal(syscall.SIGSTOP)
		for i := 0; i < 3; i++ {
			if r := do(t, "GET", f.url+"/", voter, nil, false); r.status != 503 || r.took > 3*time.Second {
				tt.signal(syscall.SIGCONT)
				t.Fatalf("GET / with Tarantool stopped: %d after %v", r.status, r.took)
			}
		}
		tt.signal(syscall.SIGCONT)
		checkKept(t)
	})

	t.Run("a clean restart keeps the data", func(t *testing.T) {
		tt.stop()
		tt.start()
		checkKept(t)
		if status, v := vote(t, f, voter, b.ID, a.ID); status != 200 || !v.OK {
			t.Errorf("voting after the restart: %d %+v", status, v)
		}
	})
}

func randomUUID() string {
	b := make([]byte, 16)
	rand.Read(b)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// TestFiberMode runs the same app with pool.fibers: true, where requests of one worker
// interleave while they wait for Tarantool and share its connection.
func TestFiberMode(t *testing.T) {
	tt := startTarantool(t, "write")
	f := startFerry(t, tt, true)
	const n = 40
	type page struct {
		voter string
		top   []rated
		err   error
	}
	pages := make(chan page, n)
	for i := 0; i < n; i++ {
		go func() {
			r, err := request("GET", f.url+"/", "", nil, false)
			if err == nil && r.status != 200 {
				err = fmt.Errorf("status %d: %s", r.status, tail(r.body, 300))
			}
			pages <- page{r.voter(), shown(t, r.body), err}
		}()
	}
	want := fmt.Sprint(tt.ratings()[:9])
	voters := map[string]bool{}
	for i := 0; i < n; i++ {
		p := <-pages
		if p.err != nil {
			t.Fatal(p.err)
		}
		if fmt.Sprint(p.top) != want {
			t.Errorf("concurrent page shows %v, want %v", p.top, want)
		}
		voters[p.voter] = true
	}
	var sessions int
	if tt.eval(`return box.space.sessions:len()`, &sessions); len(voters) != n || sessions != n {
		t.Errorf("%d distinct cookies and %d sessions for %d first visits", len(voters), sessions, n)
	}
	var voter string
	for v := range voters {
		voter = v
	}
	if status, v := vote(t, f, voter, 1, 2); status != 200 || !v.OK {
		t.Errorf("vote: %d %+v", status, v)
	}
	if status, v := vote(t, f, voter, 2, 1); status != 409 {
		t.Errorf("repeated vote: %d %+v", status, v)
	}
	tt.signal(syscall.SIGSTOP) // hung: the read timeout (a loop timer in Fiber mode) must fire
	r := do(t, "GET", f.url+"/", voter, nil, false)
	tt.signal(syscall.SIGCONT)
	if r.status != 503 || r.took > 3*time.Second {
		t.Fatalf("Tarantool stopped: %d after %v", r.status, r.took)
	}
	tt.kill9()
	if r := do(t, "GET", f.url+"/", voter, nil, false); r.status != 503 || r.took > 2*time.Second {
		t.Fatalf("Tarantool down: %d after %v", r.status, r.took)
	}
	tt.start()
	for i := 0; i < 6; i++ {
		if r := do(t, "GET", f.url+"/", voter, nil, false); r.status != 200 || r.voter() != "" {
			t.Fatalf("request %d after the restart: %d, new cookie %q", i, r.status, r.voter())
		}
	}
}
