package voting_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

const adminPassword = "e2e-admin"

// tarantool is examples/voting/tarantool/init.lua in a real tarantool process.
type tarantool struct {
	t       testing.TB
	dir     string
	port    int
	walMode string
	env     []string // extra environment for init.lua (replica-set mode)
	cmd     *exec.Cmd
	done    chan struct{}
}

func startTarantool(t testing.TB, walMode string, env ...string) *tarantool {
	t.Helper()
	tt := &tarantool{t: t, dir: t.TempDir(), port: freePort(t), walMode: walMode, env: env}
	tt.start()
	t.Cleanup(func() {
		tt.stop()
		if t.Failed() {
			log, _ := os.ReadFile(filepath.Join(tt.dir, "tarantool.log"))
			t.Logf("tarantool log (last 3000 bytes):\n%s", tail(string(log), 3000))
		}
	})
	return tt
}

func (tt *tarantool) uri() string { return fmt.Sprintf("tcp://voting:voting@127.0.0.1:%d", tt.port) }

// start launches the process and waits for the greeting: init.lua only listens once the
// schema and the seed are complete.
func (tt *tarantool) start() {
	tt.t.Helper()
	cmd := exec.Command("tarantool", filepath.Join(exampleDir, "tarantool", "init.lua"))
	cmd.Dir = tt.dir
	cmd.Env = append(os.Environ(),
		fmt.Sprintf("VOTING_LISTEN=127.0.0.1:%d", tt.port),
		"VOTING_DATA_DIR="+filepath.Join(tt.dir, "data"),
		"VOTING_WAL_MODE="+tt.walMode,
		"VOTING_LOG="+filepath.Join(tt.dir, "tarantool.log"),
		"VOTING_ADMIN_PASSWORD="+adminPassword,
		"VOTING_MEMTX_MEMORY=134217728",
	)
	cmd.Env = append(cmd.Env, tt.env...)
	if err := cmd.Start(); err != nil {
		tt.t.Fatal(err)
	}
	tt.cmd, tt.done = cmd, make(chan struct{})
	go func(done chan struct{}) { cmd.Wait(); close(done) }(tt.done)
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case <-tt.done:
			log, _ := os.ReadFile(filepath.Join(tt.dir, "tarantool.log"))
			tt.t.Fatalf("tarantool exited during start:\n%s", tail(string(log), 3000))
		default:
		}
		if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", tt.port), time.Second); err == nil {
			greeting := make([]byte, 128)
			c.SetReadDeadline(time.Now().Add(2 * time.Second))
			_, err = io.ReadFull(c, greeting)
			c.Close()
			if err == nil && bytes.HasPrefix(greeting, []byte("Tarantool")) {
				return
			}
		}
		if time.Now().After(deadline) {
			tt.t.Fatalf("tarantool did not listen on %d within 30 s", tt.port)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (tt *tarantool) running() bool {
	select {
	case <-tt.done:
		return false
	default:
		return tt.cmd != nil
	}
}

// stop is a clean shutdown (SIGTERM), SIGKILL after 10 s.
func (tt *tarantool) stop() {
	if !tt.running() {
		return
	}
	tt.cmd.Process.Signal(syscall.SIGCONT) // in case a test left it stopped
	tt.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-tt.done:
	case <-time.After(10 * time.Second):
		tt.cmd.Process.Kill()
		<-tt.done
		tt.t.Errorf("tarantool did not stop within 10 s of SIGTERM")
	}
}

// kill9 is a crash: no chance to flush or snapshot anything.
func (tt *tarantool) kill9() {
	tt.cmd.Process.Kill()
	<-tt.done
}

func (tt *tarantool) signal(sig syscall.Signal) {
	if err := tt.cmd.Process.Signal(sig); err != nil {
		tt.t.Fatal(err)
	}
}

const evalClient = `
local c = require('net.box').connect(arg[1], {connect_timeout = 5})
if not c:is_connected() then
    io.stderr:write('cannot connect: ', tostring(c.error), '\n')
    os.exit(2)
end
local ok, res = pcall(c.eval, c, io.read('*a'))
if not ok then
    io.stderr:write(tostring(res), '\n')
    os.exit(3)
end
io.write(require('json').encode(res))
os.exit(0)
`

// eval runs Lua on the server as admin, through a separate tarantool client process (the
// app's own code path is not involved), and decodes the single value it returns into out.
func (tt *tarantool) eval(lua string, out any) {
	tt.t.Helper()
	script := filepath.Join(tt.dir, "eval.lua")
	if _, err := os.Stat(script); err != nil {
		if err := os.WriteFile(script, []byte(evalClient), 0o644); err != nil {
			tt.t.Fatal(err)
		}
	}
	cmd := exec.Command("tarantool", script, fmt.Sprintf("admin:%s@127.0.0.1:%d", adminPassword, tt.port))
	cmd.Stdin = strings.NewReader(lua)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.Output()
	if err != nil {
		tt.t.Fatalf("eval %q: %v: %s", lua, err, stderr.String())
	}
	if err := json.Unmarshal(stdout, out); err != nil {
		tt.t.Fatalf("eval %q: decoding %q: %v", lua, tail(string(stdout), 300), err)
	}
}

type rated struct{ ID, Rating int }

// ratings reads every sticker's rating straight from the space (not through the index the
// app uses), ordered best first: rating, then id, both descending.
func (tt *tarantool) ratings() []rated {
	tt.t.Helper()
	var raw [][2]int
	tt.eval(`local r = {} for _, t in box.space.stickers:pairs() do r[#r + 1] = {t.id, t.rating} end return r`, &raw)
	out := make([]rated, len(raw))
	for i, p := range raw {
		out[i] = rated{p[0], p[1]}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Rating != out[j].Rating {
			return out[i].Rating > out[j].Rating
		}
		return out[i].ID > out[j].ID
	})
	return out
}
