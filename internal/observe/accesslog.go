package observe

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/ferry-php/ferry/internal/jsonq"
	"github.com/ferry-php/ferry/internal/pool"
	"github.com/valyala/fasthttp"
)

// Access log formats (docs/config.md, server.access_log).
const (
	FormatJSON     = "json"
	FormatCombined = "combined"
)

// AccessLog writes one line per request. Lines are buffered and written when
// the buffer fills or every flushEvery, so a request does not pay for a write
// syscall; Close and Reopen write what is buffered first.
type AccessLog struct {
	json bool
	path string // "" or "stderr": standard error, never reopened

	mu   sync.Mutex
	w    io.Writer
	f    *os.File // the file opened from path, nil for stderr
	buf  []byte
	done chan struct{}
}

const (
	flushEvery = time.Second
	flushAt    = 32 << 10
)

// OpenAccessLog opens path for appending ("stderr" or "" for standard error).
func OpenAccessLog(format, path string) (*AccessLog, error) {
	l := &AccessLog{json: format != FormatCombined, path: path, done: make(chan struct{})}
	if path == "" || path == "stderr" {
		l.w = os.Stderr
	} else if err := l.open(); err != nil {
		return nil, err
	}
	go l.flusher()
	return l, nil
}

func (l *AccessLog) open() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("access log: %w", err)
	}
	l.f, l.w = f, f
	return nil
}

// Reopen writes what is buffered to the old file and opens path anew: after
// logrotate has moved the file away, lines go to a new one.
func (l *AccessLog) Reopen() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushLocked()
	if l.f == nil || l.closedLocked() {
		return nil
	}
	old := l.f
	if err := l.open(); err != nil {
		return err // lines keep going to the old file
	}
	return old.Close()
}

// Close writes what is buffered and closes the file.
func (l *AccessLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closedLocked() {
		return nil
	}
	close(l.done)
	l.flushLocked()
	if l.f != nil {
		return l.f.Close()
	}
	return nil
}

func (l *AccessLog) closedLocked() bool {
	select {
	case <-l.done:
		return true
	default:
		return false
	}
}

func (l *AccessLog) flusher() {
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-l.done:
			return
		case <-t.C:
			l.mu.Lock()
			l.flushLocked()
			l.mu.Unlock()
		}
	}
}

func (l *AccessLog) flushLocked() {
	if len(l.buf) > 0 {
		l.w.Write(l.buf) // a full disk must not stop the server; the lines are lost
		l.buf = l.buf[:0]
	}
}

// entry is one request as logged.
type entry struct {
	ctx      *fasthttp.RequestCtx
	id       []byte
	start    time.Time
	duration time.Duration
	bytes    int64
	job      pool.Timing
}

func (l *AccessLog) write(e *entry) {
	l.mu.Lock()
	if l.json {
		l.buf = appendJSON(l.buf, e)
	} else {
		l.buf = appendCombined(l.buf, e)
	}
	if len(l.buf) >= flushAt {
		l.flushLocked()
	}
	l.mu.Unlock()
}

func appendJSON(b []byte, e *entry) []byte {
	r := &e.ctx.Request
	b = append(b, `{"time":"`...)
	b = e.start.UTC().AppendFormat(b, "2006-01-02T15:04:05.000000Z07:00")
	b = append(b, `","request_id":`...)
	b = appendJSONString(b, e.id)
	b = append(b, `,"remote":`...)
	b = appendJSONString(b, []byte(e.ctx.RemoteIP().String()))
	b = append(b, `,"method":`...)
	b = appendJSONString(b, r.Header.Method())
	b = append(b, `,"uri":`...)
	b = appendJSONString(b, r.Header.RequestURI())
	b = append(b, `,"proto":`...)
	b = appendJSONString(b, r.Header.Protocol())
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(e.ctx.Response.StatusCode()), 10)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, e.bytes, 10)
	b = append(b, `,"duration":`...)
	b = strconv.AppendFloat(b, e.duration.Seconds(), 'f', 6, 64)
	b = append(b, `,"queue_wait":`...)
	b = strconv.AppendFloat(b, e.job.Wait.Seconds(), 'f', 6, 64)
	b = append(b, `,"php":`...)
	b = strconv.AppendFloat(b, e.job.Run.Seconds(), 'f', 6, 64)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(e.job.PID), 10)
	b = append(b, `,"referer":`...)
	b = appendJSONString(b, r.Header.Referer())
	b = append(b, `,"user_agent":`...)
	b = appendJSONString(b, r.Header.UserAgent())
	return append(b, "}\n"...)
}

// appendCombined writes the Apache/nginx combined format, then the request
// id, duration, queue wait and PHP time in seconds, and the worker pid ("-"
// when PHP did not answer).
func appendCombined(b []byte, e *entry) []byte {
	r := &e.ctx.Request
	b = append(b, e.ctx.RemoteIP().String()...)
	b = append(b, " - - ["...)
	b = e.start.AppendFormat(b, "02/Jan/2006:15:04:05 -0700")
	b = append(b, `] "`...)
	b = appendEscaped(b, r.Header.Method())
	b = append(b, ' ')
	b = appendEscaped(b, r.Header.RequestURI())
	b = append(b, ' ')
	b = appendEscaped(b, r.Header.Protocol())
	b = append(b, `" `...)
	b = strconv.AppendInt(b, int64(e.ctx.Response.StatusCode()), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, e.bytes, 10)
	b = append(b, ` "`...)
	b = appendEscaped(b, r.Header.Referer())
	b = append(b, `" "`...)
	b = appendEscaped(b, r.Header.UserAgent())
	b = append(b, `" `...)
	if len(e.id) == 0 {
		b = append(b, '-')
	} else {
		b = append(b, e.id...) // validated: safe bytes only
	}
	b = append(b, ' ')
	b = strconv.AppendFloat(b, e.duration.Seconds(), 'f', 6, 64)
	b = append(b, ' ')
	b = strconv.AppendFloat(b, e.job.Wait.Seconds(), 'f', 6, 64)
	b = append(b, ' ')
	b = strconv.AppendFloat(b, e.job.Run.Seconds(), 'f', 6, 64)
	b = append(b, ' ')
	if e.job.PID == 0 {
		b = append(b, '-')
	} else {
		b = strconv.AppendInt(b, int64(e.job.PID), 10)
	}
	return append(b, '\n')
}

const hexDigits = "0123456789abcdef"

// appendEscaped keeps a quoted field of the combined format on its line and
// inside its quotes, as nginx does: quotes, backslashes, control and
// non-ASCII bytes become \xHH.
func appendEscaped(b, s []byte) []byte {
	if len(s) == 0 {
		return append(b, '-')
	}
	for _, c := range s {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			b = append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
		} else {
			b = append(b, c)
		}
	}
	return b
}

// appendJSONString quotes s as a JSON string; invalid UTF-8 becomes U+FFFD,
// so every line parses.
func appendJSONString(b, s []byte) []byte { return jsonq.Append(b, s) }
