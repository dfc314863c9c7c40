package pool

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
)

// A direct-mode worker's stats page is read by every metrics scrape, which
// may come while the worker boots (it is listed from the start): the page
// must be the worker's before it is listed, not set by its boot. Run with
// -race, which saw boot's write race a scrape's read.
func TestDirectStatsPageWhileWorkersBoot(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := newPool(t, Options{NumWorkers: 2, SpoolDir: t.TempDir(), Direct: f})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				p.Stats()
			}
		}
	}()
	for i := 0; i < 4; i++ {
		if _, err := p.Exec(context.Background(), nil, []byte("crash")); !errors.Is(err, ErrCrashed) {
			t.Fatalf("crash: %v", err)
		}
		waitFor(t, func() bool { return countState(p, "ready") == 2 }, "the crashed worker's replacement")
	}
	close(stop)
	wg.Wait()
}
