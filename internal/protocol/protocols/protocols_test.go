package protocols

import (
	"slices"
	"testing"

	"github.com/ferry-php/ferry/internal/frame"
)

// Each protocol answers to the name configuration gives it, and frames a job
// so that its own answer reader, fed the frame a worker echoes, finds the
// context where it was put.
func TestTableNamesAndFrames(t *testing.T) {
	if got := Names(); !slices.Equal(got, []string{"ferry", "roadrunner", "roadrunner-json"}) {
		t.Fatalf("Names() = %v", got)
	}
	for _, name := range Names() {
		e, ok := Lookup(name)
		if !ok || e.Protocol.Name() != name {
			t.Fatalf("Lookup(%q) = %v, %v", name, e, ok)
		}
		job := e.Protocol.AppendJob(nil, 7, []byte("ctx"), []byte("body"))
		f, _, err := frame.Parse(job, 1<<20)
		if err != nil {
			t.Fatalf("%s: job frame: %v", name, err)
		}
		// A worker's answer carries the same [ctxLen, ...] options a job does.
		f.Flags &^= frame.Proto | frame.JSON
		a, err := e.Protocol.ReadAnswer(f)
		if err != nil || a.Part || a.Ping || a.CtxLen != 3 || string(f.Payload[:3]) != "ctx" {
			t.Fatalf("%s: answer %+v %v", name, a, err)
		}
		if e.Protocol.Traits().InOrder == (a.ID == 7) {
			t.Errorf("%s: job id %d with InOrder=%v", name, a.ID, e.Protocol.Traits().InOrder)
		}
	}
	if _, ok := Lookup("fastcgi"); ok {
		t.Fatal("an unknown name was found")
	}
}
