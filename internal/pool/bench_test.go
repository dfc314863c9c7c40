package pool

import (
	"context"
	"testing"
)

// BenchmarkEcho measures one job round trip to a real PHP worker (seed 003's
// table). Run: go test ./internal/pool -run XXX -bench Echo -benchtime 20000x
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
