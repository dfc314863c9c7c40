package voting_test

import (
	"encoding/json"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestDurabilityKill9 is the data-loss test: votes pour in through Ferry from
// concurrent clients, Tarantool is killed with SIGKILL mid-load and restarted, then every
// vote that was answered 200 must still be there. wal_mode=write must lose nothing (the
// commit returns after the WAL write(), and the page cache survives the process); what
// wal_mode=none loses is only measured and logged (go test -v shows it).
func TestDurabilityKill9(t *testing.T) {
	for _, mode := range []string{"write", "none"} {
		t.Run("wal_mode="+mode, func(t *testing.T) {
			acked, inDoubt := breakTarantool(t, mode)
			lost := 0
			for _, v := range acked {
				if !v.recovered {
					lost++
				}
			}
			t.Logf("wal_mode=%s: %d votes acknowledged before the kill, %d lost after restart (%.1f%%); %d unanswered at the kill, of which %d were stored anyway",
				mode, len(acked), lost, 100*float64(lost)/float64(max(len(acked), 1)), inDoubt.total, inDoubt.stored)
			if len(acked) < 50 {
				t.Fatalf("only %d votes acknowledged: the load did not run", len(acked))
			}
			if mode == "write" && lost > 0 {
				t.Errorf("wal_mode=write lost %d of %d acknowledged votes", lost, len(acked))
			}
		})
	}
}

type ackedVote struct {
	id, winner, loser int
	session           string
	recovered         bool
}

type doubt struct{ total, stored int }

// breakTarantool runs the load, kills Tarantool, restarts it, checks the recovered data is
// consistent (each rating moved by exactly its recovered wins minus losses) and marks which
// acknowledged votes survived.
func breakTarantool(t *testing.T, walMode string) ([]*ackedVote, doubt) {
	tt := startTarantool(t, walMode)
	f := startFerry(t, tt, false)
	before := map[int]int{}
	for _, s := range tt.ratings() {
		before[s.ID] = s.Rating
	}

	const clients = 8
	var (
		mu       sync.Mutex
		acked    []*ackedVote
		inDoubt  = map[[3]any]bool{} // votes whose request failed: applied or not, nobody knows
		killed   atomic.Bool
		wg       sync.WaitGroup
		ackCount atomic.Int64
	)
	for c := 0; c < clients; c++ {
		session := newVoter(t, f)
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			failures := 0
			// Each session votes on pairs (2i+1, 2i+2): never the same pair twice.
			for i := 0; i < 7999 && failures < 3; i++ {
				winner, loser := 2*i+1, 2*i+2
				if (i+c)%2 == 0 {
					winner, loser = loser, winner
				}
				r, err := request("POST", f.url+"/vote", session, url.Values{"winner": {strconv.Itoa(winner)}, "loser": {strconv.Itoa(loser)}}, true)
				var v voteReply
				if err == nil && r.status == 200 && json.Unmarshal([]byte(r.body), &v) == nil && v.OK {
					mu.Lock()
					acked = append(acked, &ackedVote{id: v.Vote, winner: winner, loser: loser, session: session})
					mu.Unlock()
					ackCount.Add(1)
					failures = 0
					continue
				}
				if err == nil && r.status != 503 {
					t.Errorf("client %d: vote %d>%d answered %d %s", c, winner, loser, r.status, tail(r.body, 200))
					return
				}
				mu.Lock()
				inDoubt[[3]any{session, winner, loser}] = true
				mu.Unlock()
				if !killed.Load() {
					t.Errorf("client %d: vote failed before the kill: %v %d %s", c, err, r.status, tail(r.body, 200))
					return
				}
				failures++
			}
		}(c)
	}
	// Kill once the load is well under way.
	deadline := time.Now().Add(3 * time.Second)
	for ackCount.Load() < 2000 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	killed.Store(true)
	tt.kill9()
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	tt.start()
	type storedVote struct {
		ID      int    `json:"id"`
		Session string `json:"session"`
		Winner  int    `json:"winner"`
		Lo      int    `json:"lo"`
		Hi      int    `json:"hi"`
	}
	var rows [][5]any
	tt.eval(`local r = {} for _, v in box.space.votes:pairs() do r[#r + 1] = {v.id, v.session, v.winner, v.lo, v.hi} end return r`, &rows)
	stored := map[int]storedVote{}
	byPair := map[[3]any]bool{}
	delta := map[int]int{}
	for _, row := range rows {
		v := storedVote{int(row[0].(float64)), row[1].(string), int(row[2].(float64)), int(row[3].(float64)), int(row[4].(float64))}
		stored[v.ID] = v
		loser := v.Lo + v.Hi - v.Winner
		byPair[[3]any{v.Session, v.Winner, loser}] = true
		delta[v.Winner]++
		delta[loser]--
	}
	for _, v := range acked {
		s, ok := stored[v.id]
		v.recovered = ok && s.Session == v.session && s.Winner == v.winner && s.Lo == min(v.winner, v.loser) && s.Hi == max(v.winner, v.loser)
	}
	var d doubt
	for k := range inDoubt {
		d.total++
		if byPair[k] {
			d.stored++
		}
	}
	// Atomicity: a vote row never survives without its two rating changes, nor the reverse.
	bad := 0
	for _, s := range tt.ratings() {
		if got, want := s.Rating-before[s.ID], delta[s.ID]; got != want {
			if bad++; bad <= 5 {
				t.Errorf("sticker %d: rating moved by %d, its recovered votes say %d", s.ID, got, want)
			}
		}
	}
	return acked, d
}
