package pool

import (
	"context"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkEcho measures one job round trip to a real PHP worker. Run: go test ./internal/pool -run XXX -bench Echo -benchtime 20000x
// The worker is the real SDK (php/worker) in its default, sequential mode.
func BenchmarkEcho(b *testing.B) {
	for _, relay := range []string{"pipes", "unix", "tcp"} {
		b.Run(relay, func(b *testing.B) {
			p := newPool(b, Options{NumWorkers: 1, Relay: relay, Command: phpCommand(b, "testdata/fiber_worker.php")})
			body := []byte("echo:hello")
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := p.Exec(context.Background(), nil, body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEchoParallel keeps the pipeline full: many jobs in flight per worker.
func BenchmarkEchoParallel(b *testing.B) {
	p := newPool(b, Options{NumWorkers: 1, Pipeline: 16, Command: phpCommand(b, "testdata/fiber_worker.php")})
	body := []byte("echo:hello")
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := p.Exec(context.Background(), nil, body); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkHello has the shape of the hello load test: two sequential workers
// (the real SDK) at the default pipeline depth, and as many clients as the
// bench harness, each waiting for its answer before sending again.
// Run: go test ./internal/pool -run XXX -bench Hello -benchtime 100000x -count 5
func BenchmarkHello(b *testing.B) {
	p := newPool(b, Options{NumWorkers: 2, Pipeline: 32, Command: phpCommand(b, "testdata/fiber_worker.php")})
	body := []byte("echo:hello")
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(b.N) {
				if _, err := p.Exec(context.Background(), nil, body); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	var jobs, writes uint64
	for _, w := range p.Workers() {
		jobs, writes = jobs+w.Jobs, writes+w.Writes
	}
	b.ReportMetric(float64(jobs)/float64(writes), "jobs/write")
}

// BenchmarkMixed is BenchmarkHello with a rare slow job among the fast ones:
// the jobs held for or sent with it wait for it, however free the other
// worker is. The latencies are those of the fast jobs.
func BenchmarkMixed(b *testing.B) {
	p := newPool(b, Options{NumWorkers: 2, Pipeline: 32, Command: phpCommand(b, "testdata/fiber_worker.php")})
	fast, slow := []byte("echo:hello"), []byte("sleep:10")
	var next atomic.Int64
	var wg sync.WaitGroup
	lat := make([][]time.Duration, 50)
	b.ResetTimer()
	for c := range lat {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := next.Add(1)
				if n > int64(b.N) {
					return
				}
				body := fast
				if n%1000 == 0 {
					body = slow
				}
				t0 := time.Now()
				if _, err := p.Exec(context.Background(), nil, body); err != nil {
					b.Error(err)
					return
				}
				if n%1000 != 0 {
					lat[c] = append(lat[c], time.Since(t0))
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	all := slices.Concat(lat...)
	slices.Sort(all)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	b.ReportMetric(float64(all[len(all)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(all[len(all)/2].Microseconds()), "p50-µs")
	late := len(all) - sort.Search(len(all), func(i int) bool { return all[i] >= 5*time.Millisecond })
	b.ReportMetric(100*float64(late)/float64(len(all)), "%fast>5ms")
}
