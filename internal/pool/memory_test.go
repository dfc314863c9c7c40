package pool

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"testing"
)

func TestParseRollupOfThisProcess(t *testing.T) {
	b, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		t.Skipf("no smaps_rollup here: %v", err)
	}
	m, ok := parseRollup(b)
	if !ok {
		t.Fatalf("not parsed:\n%s", b)
	}
	if m.RSS == 0 || m.USS == 0 || m.PSS == 0 || m.USS > m.PSS || m.PSS > m.RSS {
		t.Errorf("want 0 < USS <= PSS <= RSS, got %+v", m)
	}
	if want := rollupField(t, string(b), "Rss"); m.RSS != want {
		t.Errorf("RSS %d, file says %d", m.RSS, want)
	}
}

func TestParseRollup(t *testing.T) {
	in := "55d0-7ffd ---p 00000000 00:00 0   [rollup]\nRss:  100 kB\nPss:   40 kB\nPss_Anon: 9 kB\nShared_Clean: 70 kB\nPrivate_Clean:  10 kB\nPrivate_Dirty:  20 kB\n"
	m, ok := parseRollup([]byte(in))
	if !ok || m != (Memory{RSS: 100 << 10, PSS: 40 << 10, USS: 30 << 10}) {
		t.Errorf("%+v %v", m, ok)
	}
	for _, bad := range []string{"", "Pss: 1 kB\n", "Rss: 1 MB\n", "Rss: -1 kB\n", "Rss: 99999999999999999999 kB\n", "Rss: 1\n"} {
		if m, ok := parseRollup([]byte(bad)); ok {
			t.Errorf("%q parsed as %+v", bad, m)
		}
	}
}

func FuzzParseRollup(f *testing.F) {
	if b, err := os.ReadFile("/proc/self/smaps_rollup"); err == nil {
		f.Add(b)
	}
	f.Add([]byte("Rss: 1 kB\nPrivate_Dirty: 1 kB\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, ok := parseRollup(b)
		if !ok && m != (Memory{}) {
			t.Errorf("refused input gave %+v", m)
		}
	})
}

// rollupField reads one smaps_rollup field in bytes, independently of
// parseRollup.
func rollupField(t *testing.T, s, name string) uint64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + name + `:\s+(\d+) kB$`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no %s in\n%s", name, s)
	}
	n, _ := strconv.ParseUint(m[1], 10, 64)
	return n << 10
}

func ussOf(t *testing.T, pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		t.Skipf("no smaps_rollup: %v", err)
	}
	return rollupField(t, string(b), "Private_Clean") + rollupField(t, string(b), "Private_Dirty")
}

// Workers share the pages of the PHP binary and its libraries (and, forked
// from a zygote, everything booted before the fork): RSS counts them in each
// worker, so max_memory between what a worker owns and its RSS retired
// workers that had grown by nothing. They stay.
func TestMaxMemoryComparesWhatTheWorkerOwns(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 2})
	most, least := uint64(0), uint64(1<<63) // the largest USS, the smallest RSS
	for _, w := range p.Workers() {
		most, least = max(most, ussOf(t, w.PID)), min(least, rss(w.PID))
	}
	limit := most + (least-most)/2
	if least < most+4<<20 {
		t.Skipf("workers share too little here to tell RSS from USS (RSS %d, USS %d)", least, most)
	}
	set := p.opt.Settings()
	set.MaxMemory = limit
	if err := p.ReloadWith(context.Background(), set); err != nil {
		t.Fatal(err)
	}
	before := pidsOf(p)
	for pid := range before {
		if r := rss(pid); r <= limit {
			t.Fatalf("worker %d RSS %d not over max_memory %d: the test proves nothing", pid, r, limit)
		}
	}
	for range 3 {
		p.checkLimits()
	}
	if n := p.Stats().Restarts[ReasonMaxMemory]; n != 0 {
		t.Errorf("%d workers retired for max_memory %d with RSS over it and USS under", n, limit)
	}
	for pid := range before {
		if !pidsOf(p)[pid] {
			t.Errorf("worker %d retired", pid)
		}
	}
}
