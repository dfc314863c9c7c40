package forkserver

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// A zygote is the app's own process: what it says on its socket is checked
// like anything a worker sends. This one is played by the test, since a real
// PHP zygote does not lie about the pids it forks.
func TestForkRefusesAPidThatIsNotTheZygotesChild(t *testing.T) {
	l, err := Listen(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	peer := make(chan *net.UnixConn, 1)
	go func() {
		c, err := net.DialUnix("unixpacket", nil, &net.UnixAddr{Name: l.Path(), Net: "unixpacket"})
		if err != nil {
			t.Error(err)
			close(peer)
			return
		}
		hello, _ := json.Marshal(message{Zygote: os.Getpid(), Token: "secret"})
		c.Write(hello)
		peer <- c
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	z, err := Adopt(ctx, l, "secret")
	if err != nil {
		t.Fatal(err)
	}
	c := <-peer
	defer c.Close()
	go func() {
		buf := make([]byte, 4096)
		n, _, _, _, err := c.ReadMsgUnix(buf, make([]byte, 256))
		if err != nil {
			return
		}
		var m message
		json.Unmarshal(buf[:n], &m)
		// Exits of pids it never forked, then pid 1 as its new worker.
		for pid := 2; pid < 50; pid++ {
			b, _ := json.Marshal(message{Exit: pid, Status: "exit status 0"})
			c.Write(b)
		}
		b, _ := json.Marshal(message{Forked: m.Fork, PID: 1})
		c.Write(b)
	}()
	r, w, _ := os.Pipe()
	defer r.Close()
	defer w.Close()
	_, err = z.Fork(ctx, []*os.File{r, w}, nil)
	if err == nil || !strings.Contains(err.Error(), "pid 1") || !strings.Contains(err.Error(), "not its child") {
		t.Fatalf("Fork accepted pid 1 from the zygote: %v", err)
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if len(z.status) != 0 || len(z.children) != 0 {
		t.Errorf("the zygote's reports of processes it did not fork were kept: %d statuses, %d children", len(z.status), len(z.children))
	}
}
