package pool

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
)

const tailLines = 20

// lineLog turns a worker's stderr into one log line per line of output, tagged
// with the pid, and keeps the last lines to quote when the worker fails to boot.
type lineLog struct {
	log  *slog.Logger
	mu   sync.Mutex
	pid  int
	part []byte
	last []string
}

func (l *lineLog) setPID(pid int) {
	l.mu.Lock()
	l.pid = pid
	l.mu.Unlock()
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.part = append(l.part, p...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			break
		}
		l.emit(string(bytes.TrimRight(l.part[:i], "\r")))
		l.part = l.part[i+1:]
	}
	if len(l.part) > 64<<10 { // a line without end must not grow forever
		l.emit(string(l.part))
		l.part = nil
	}
	return len(p), nil
}

func (l *lineLog) emit(line string) {
	if line == "" {
		return
	}
	l.log.Info("worker output", "pid", l.pid, "line", line)
	if len(l.last) == tailLines {
		copy(l.last, l.last[1:])
		l.last = l.last[:tailLines-1]
	}
	l.last = append(l.last, line)
}

func (l *lineLog) tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	lines := l.last
	if len(l.part) > 0 {
		lines = append(append([]string(nil), lines...), string(l.part))
	}
	return strings.Join(lines, "\n")
}
