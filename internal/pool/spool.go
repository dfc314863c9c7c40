package pool

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// spool is a worker's own temp directory (FERRY_SPOOL_DIR): PHP writes there
// what it hands the server as a file, output past the spool threshold above
// all. A worker killed in the middle (exec_ttl, destroy_timeout, a crash)
// never removes what it wrote, so the server removes the directory, with
// whatever is left in it, once the worker has exited.
//
// Not before every answer naming a file in it has been taken over, though: an
// answer's file is opened by the caller after Exec returns, and the worker
// may exit meanwhile (retired once that job released it, or killed while
// running another).
type spool struct {
	dir  string
	name []byte // the directory's base name: how an answer is seen to name a file in it

	mu     sync.Mutex
	claims int  // answers naming it, delivered and not settled
	exited bool // the worker is gone: the last settle removes it
}

const (
	spoolEnv    = "FERRY_SPOOL_DIR"
	spoolPrefix = "ferry-spool-" // then the server's pid: sweepSpools knows whose it is
)

// sweepSpools removes the spool directories in base left by a server that is
// gone without cleaning up (SIGKILL, a crash of the machine): their workers
// died with it, and nothing else would ever remove them. A directory whose
// server still runs, another ferry's, is left alone.
func sweepSpools(base string) {
	dirs, _ := filepath.Glob(filepath.Join(base, spoolPrefix+"*-*"))
	for _, d := range dirs {
		pid, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), spoolPrefix), "-")
		n, err := strconv.Atoi(pid)
		if err != nil || n <= 0 || n == os.Getpid() {
			continue
		}
		if syscall.Kill(n, 0) == syscall.ESRCH {
			os.RemoveAll(d)
		}
	}
}

// newSpool makes a directory in base for one worker. MkdirTemp gives it mode
// 0700 and a name nobody else has; the path is absolute, as the worker may run
// in another directory (pool.dir) and a file answer names an absolute path.
func newSpool(base string) (*spool, error) {
	base, err := filepath.Abs(base)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(base, spoolPrefix+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return nil, err
	}
	return &spool{dir: dir, name: []byte(filepath.Base(dir))}, nil
}

// claim notes an answer whose head names the directory (a file answer) and
// returns it for the Result to settle; nil when there is nothing to wait for.
// Matched on the base name, which a JSON encoder that escapes slashes keeps as
// it is.
func (s *spool) claim(head []byte) *spool {
	if s == nil || !bytes.Contains(head, s.name) {
		return nil
	}
	s.mu.Lock()
	s.claims++
	s.mu.Unlock()
	return s
}

func (s *spool) settle() {
	s.mu.Lock()
	s.claims--
	remove := s.exited && s.claims == 0
	s.mu.Unlock()
	if remove {
		os.RemoveAll(s.dir)
	}
}

// gone is called once the worker has exited, whatever the reason.
func (s *spool) gone() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.exited = true
	remove := s.claims == 0
	s.mu.Unlock()
	if remove {
		os.RemoveAll(s.dir)
	}
}

// Settle tells the pool the caller is done with the file the answer names, if
// any: it has opened it, or given up. A worker's spool directory is removed
// only after its exit and every such answer settled, so a caller that reads
// file answers must call it once it is past opening the file; calling it for
// any other answer, or twice, does nothing.
func (r *Result) Settle() {
	if r.spool != nil {
		r.spool.settle()
		r.spool = nil
	}
}
