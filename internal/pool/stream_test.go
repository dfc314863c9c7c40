package pool

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// readStream collects a streamed answer: the first part's body, then the rest.
func readStream(t *testing.T, res Result) (string, error) {
	t.Helper()
	if res.Stream == nil {
		t.Fatalf("not streamed: %q", res.Body)
	}
	var b strings.Builder
	b.Write(res.Body)
	for {
		part, last, err := res.Stream.Next()
		if err != nil {
			return b.String(), err
		}
		b.Write(part.Body)
		if last {
			return b.String(), nil
		}
	}
}

// exec_ttl bounds the time between two parts of a streamed answer, not the
// whole stream: a stream longer than exec_ttl whose parts keep coming is
// served, one that stalls for exec_ttl is cut.
func TestStreamExecTTL(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 1, ExecTTL: 400 * time.Millisecond})
	res, err := p.Exec(context.Background(), nil, []byte("parts:8,100"))
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Context) != "ctx" {
		t.Fatalf("head %q", res.Context)
	}
	body, err := readStream(t, res)
	if err != nil || body != "p1;p2;p3;p4;p5;p6;p7;p8;end" {
		t.Fatalf("got %q %v", body, err)
	}
	res, err = p.Exec(context.Background(), nil, []byte("parts:2,2000"))
	if err != nil {
		t.Fatal(err)
	}
	body, err = readStream(t, res)
	if !errors.Is(err, ErrExecTimeout) || body != "p1;" {
		t.Fatalf("a stalled stream: %q %v", body, err)
	}
	// The slot was given back: the replacement worker serves.
	res, err = p.Exec(context.Background(), nil, []byte("echo:ok"))
	if err != nil || string(res.Body) != "ok" || res.Stream != nil {
		t.Fatalf("after: %q %v", res.Body, err)
	}
	waitCounts(t, p, jobCounts{})
}

// Discard reads a stream nobody wants to its end and frees the slot.
func TestStreamDiscard(t *testing.T) {
	p := newPool(t, Options{NumWorkers: 1})
	res, err := p.Exec(context.Background(), nil, []byte("parts:5,20"))
	if err != nil || res.Stream == nil {
		t.Fatalf("%v %v", res, err)
	}
	res.Stream.Discard()
	res.Stream.Stop() // after Discard: nothing happens
	res, err = p.Exec(context.Background(), nil, []byte("echo:next"))
	if err != nil || string(res.Body) != "next" {
		t.Fatalf("%q %v", res.Body, err)
	}
	waitCounts(t, p, jobCounts{})
}
