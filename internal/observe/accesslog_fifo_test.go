package observe

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// FuzzLineJoiner cuts a stream of lines at arbitrary points, as reads of the
// FIFO may: what is handed on is the stream, whole lines only, in order.
func FuzzLineJoiner(f *testing.F) {
	f.Add([]byte("a\nbb\nccc\n"), []byte{1, 3, 0, 7})
	f.Add([]byte("no end"), []byte{2})
	f.Add([]byte("\n\n\n"), []byte{})
	f.Fuzz(func(t *testing.T, stream, cuts []byte) {
		var j lineJoiner
		var got []byte
		emit := func(b []byte) {
			if len(b) == 0 || b[len(b)-1] != '\n' || bytes.IndexByte(b, '\n') < 0 {
				t.Fatalf("handed on %q: not whole lines", b)
			}
			got = append(got, b...)
		}
		rest := stream
		for _, c := range cuts {
			n := min(int(c), len(rest))
			j.feed(rest[:n], emit)
			rest = rest[n:]
		}
		j.feed(rest, emit)
		whole := stream[:bytes.LastIndexByte(stream, '\n')+1]
		if !bytes.Equal(got, whole) {
			t.Fatalf("handed on %q, want %q", got, whole)
		}
		j.end(emit)
		want := stream
		if len(stream) > len(whole) {
			want = append(append([]byte{}, stream...), '\n')
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("at the end %q, want %q", got, want)
		}
	})
}

// The lines written to the FIFO reach the log, and Close reads what the
// writers left before it returns and removes the FIFO's directory.
func TestDirectFIFOCopiesLinesAndDrainsOnClose(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "access.log")
	l, err := OpenAccessLog(FormatJSON, path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	f, err := l.OpenDirectFIFO(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Dir(f.Path)); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("the FIFO's directory: %v %v", st, err)
	}
	w, err := os.OpenFile(f.Path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("one\ntw"))
	w.Write([]byte("o\n"))
	w.Close()
	start := time.Now()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d >= fifoDrainWait {
		t.Errorf("Close waited %v with no writer left", d)
	}
	l.Close()
	if b, _ := os.ReadFile(path); string(b) != "one\ntwo\n" {
		t.Errorf("the log holds %q", b)
	}
	if _, err := os.Stat(filepath.Dir(f.Path)); !os.IsNotExist(err) {
		t.Errorf("the FIFO's directory is still there: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "ferry-access-*")); len(left) != 0 || strings.Contains(f.Path, dir) == false {
		t.Errorf("left %v", left)
	}
}
