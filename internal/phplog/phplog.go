// Package phplog reads what PHP workers print on stdout and stderr and turns
// it into structured log records: PHP's own error lines with their level and
// stack traces kept whole, Monolog's JSON and line formats, Symfony's logger,
// and HTML error pages as one record each. It also keeps what the pool needs
// to explain a failure: the last lines before a failed boot and the fatal
// errors printed just before a worker died. It knows nothing of the pool; the
// pool gives each worker one Writer as its stdout and stderr.
package phplog

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

const (
	tailLines = 20
	// quietFlush is how long a record waits for more continuation lines: PHP
	// writes a stack trace in one go, so a pause means the record is complete.
	quietFlush = 100 * time.Millisecond
	maxRecord  = 64 << 10
	// A fatal error older than fatalWindow when the worker dies belongs to
	// another request (or another process sharing the stream), not to the death.
	fatalWindow = 5 * time.Second
	// answerSlack allows for the stderr and relay streams being read by
	// different goroutines: an answer may be seen after a fatal PHP printed later.
	answerSlack = time.Second
	keptFatals  = 4
	maxQuote    = 8 << 10
	// maxPage bounds what is kept of an HTML page a worker printed (a
	// framework's error page, tens of KiB in debug mode): the rest is counted.
	maxPage = 4 << 10
	// pageSpan is how much of a page one record stands for: only maxPage of it
	// is held, so a debug page of a few hundred KiB is still one record, and a
	// page that never ends is logged every pageSpan.
	pageSpan = 1 << 20
)

// Writer turns a worker's output into log records tagged with the pid. PHP
// errors keep their level, a stack trace stays with the error that printed it,
// Monolog JSON lines keep their fields, and PHP's second copy of an error (once
// from log_errors, once from display_errors) is dropped. The raw lines are kept
// to quote when the worker fails to boot, and recent fatal errors to explain a
// death.
//
// Writers are made by New.
type Writer struct {
	log *slog.Logger
	now func() time.Time // nil means time.Now; set before the first Write

	mu     sync.Mutex
	pid    int
	part   []byte
	last   []string   // raw lines, quoted verbatim by Tail when the worker fails to boot
	cur    *phpRecord // record still taking continuation lines
	grew   time.Time  // wall time cur last took a line, for the quiet timer
	timer  *time.Timer
	armed  bool
	prev   phpRecord // last record logged, to spot PHP's second copy
	fatals []fatal   // recent fatal errors, oldest first
	// The level and arrival time of the last record above INFO: an error page
	// printed right after an error takes its level.
	errLevel slog.Level
	errAt    time.Time

	answered atomic.Int64 // clock of the worker's last answer, unix ns
}

type phpRecord struct {
	at     time.Time
	level  slog.Level
	fatal  bool
	logged bool   // "PHP " prefix: written by log_errors rather than display_errors
	msg    string // the message after the label; empty for plain lines
	lines  []string
	size   int
	kept   int  // bytes of a page kept
	ok     bool // prev holds a record that may still have a twin

	head  *logHead // a framework's log record (Monolog, Symfony)
	page  bool     // an HTML document, kept up to maxPage
	doc   bool     // the page's <!DOCTYPE> or <html> came (not only a comment)
	ended bool     // the page's </html> came
	cut   int      // bytes of the page not kept
}

type fatal struct {
	at   time.Time
	text string
}

// New returns a Writer logging to log.
func New(log *slog.Logger) *Writer { return &Writer{log: log} }

func (l *Writer) clock() time.Time {
	if l.now != nil {
		return l.now()
	}
	return time.Now()
}

// SetPID names the process in every record from here on.
func (l *Writer) SetPID(pid int) {
	l.mu.Lock()
	l.pid = pid
	l.mu.Unlock()
}

// JobDone notes that the worker answered a job at the given time (the read
// loop's clock read for the batch), so fatal errors printed well before it
// are not blamed for a later death.
func (l *Writer) JobDone(at time.Time) { l.answered.Store(at.UnixNano()) }

func (l *Writer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	// Lines read together were written together (or faster than we read):
	// the first of them continues the last burst only if it began there.
	burst := len(l.part) > 0
	l.part = append(l.part, p...)
	for {
		i := bytes.IndexByte(l.part, '\n')
		if i < 0 {
			break
		}
		l.line(string(bytes.TrimRight(l.part[:i], "\r")), burst)
		l.part = l.part[i+1:]
		burst = true
	}
	// A line without end must not grow forever; and Symfony's error page
	// ends in "</html>" with no newline after it.
	if len(l.part) > maxRecord || l.cur != nil && l.cur.page && !l.cur.ended && isHTMLEnd(string(l.part)) {
		l.line(string(l.part), burst)
		l.part = nil
	}
	return len(p), nil
}

// Close logs what is still held back; the process has exited, so nothing will
// continue it.
func (l *Writer) Close() error {
	l.mu.Lock()
	l.finishLocked()
	if l.timer != nil {
		l.timer.Stop()
		l.armed = false
	}
	l.mu.Unlock()
	return nil
}

func (l *Writer) finishLocked() {
	if len(l.part) > 0 {
		l.line(string(bytes.TrimRight(l.part, "\r")), true)
		l.part = nil
	}
	l.flushLocked()
}

// line takes one line; burst says it was read with the line before it.
func (l *Writer) line(s string, burst bool) {
	if s != "" {
		if len(l.last) == tailLines {
			copy(l.last, l.last[1:])
			l.last = l.last[:tailLines-1]
		}
		l.last = append(l.last, s)
	}
	t := unstamp(s)
	now := time.Now()
	var r phpRecord
	if c := l.cur; c != nil && l.joins(c, t, burst) {
		if c.size+len(s) <= c.bound() {
			c.add(s)
			l.grew = now
			c.ended = c.ended || c.page && isHTMLEnd(s)
			return
		}
		if c.page { // a page past pageSpan goes on in a record of its own
			r = phpRecord{level: c.level, page: true, doc: true}
		}
	}
	l.flushLocked()
	switch {
	case r.page:
	case strings.TrimSpace(s) == "":
		return
	case l.monolog(t):
		return
	default:
		if h, ok := parseHead(s); ok {
			r = phpRecord{level: h.level, head: &h}
		} else if isHTMLStart(s) {
			r = phpRecord{level: slog.LevelInfo, page: true, doc: isDocStart(s)}
			if now.Sub(l.errAt) < quietFlush {
				r.level = l.errLevel
			}
		} else {
			r = classify(t)
		}
	}
	r.at = l.clock()
	r.add(s)
	r.ended = r.page && isHTMLEnd(s)
	l.cur = &r
	l.grew = now
	if l.timer == nil {
		l.timer = time.AfterFunc(quietFlush, l.quiet)
	} else if !l.armed {
		l.timer.Reset(quietFlush)
	}
	l.armed = true
}

func (l *Writer) quiet() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.armed = false
	if l.cur == nil {
		return
	}
	if wait := quietFlush - time.Since(l.grew); wait > 0 {
		l.timer.Reset(wait)
		l.armed = true
		return
	}
	l.flushLocked()
}

// joins tells whether t continues the pending record c. A page takes every
// line up to its end, and the whole-line comments around it (Symfony's debug
// page is wrapped in two naming the error). A framework's record takes every
// line of its burst that does not open a record of its own, and the parts of
// an exception Monolog prints on lines of their own. Any record takes PHP's
// stack traces and indented lines.
func (l *Writer) joins(c *phpRecord, t string, burst bool) bool {
	switch {
	case c.page:
		switch {
		case c.ended:
			return isHTMLComment(t)
		case c.doc:
			return true
		case isDocStart(t):
			c.doc = true
			return true
		}
		return isHTMLComment(t)
	case continues(t, c):
		return true
	case c.head != nil:
		return burst && !startsRecord(t) || logContinues(t)
	}
	return false
}

func (l *Writer) flushLocked() {
	r := l.cur
	if r == nil {
		return
	}
	l.cur = nil
	if r.level > slog.LevelInfo {
		l.errLevel, l.errAt = r.level, l.grew
	}
	for len(r.lines) > 1 && strings.TrimSpace(r.lines[len(r.lines)-1]) == "" {
		r.lines = r.lines[:len(r.lines)-1]
	}
	if r.head != nil || r.page {
		l.prev.ok = false
		l.logFramework(r)
		return
	}
	p := l.prev
	if p.ok && r.msg != "" && p.msg == r.msg && p.level == r.level && (r.fatal || p.logged != r.logged) {
		l.prev.ok = false // drop one twin only: a third copy is a new error
		return
	}
	text := strings.Join(r.lines, "\n")
	l.prev = phpRecord{level: r.level, fatal: r.fatal, logged: r.logged, msg: r.msg, ok: true}
	if r.fatal {
		if len(l.fatals) == keptFatals {
			l.fatals = slices.Delete(l.fatals, 0, 1)
		}
		l.fatals = append(l.fatals, fatal{r.at, text})
	}
	l.log.LogAttrs(context.Background(), r.level, "worker output", slog.Int("pid", l.pid), slog.String("line", text))
}

func (r *phpRecord) bound() int {
	if r.page {
		return pageSpan
	}
	return maxRecord
}

func (r *phpRecord) add(s string) {
	r.size += len(s) + 1
	if r.page {
		if room := maxPage - r.kept; room < len(s)+1 {
			keep := max(0, room-1)
			for keep > 0 && !utf8.RuneStart(s[keep]) {
				keep--
			}
			r.cut += len(s) + 1 - keep
			if keep == 0 {
				return
			}
			s = s[:keep]
		}
		r.kept += len(s) + 1
	}
	r.lines = append(r.lines, s)
}

// Died logs what is held back and returns the fatal errors PHP reported
// shortly before the worker died, as an attribute for the death record (an
// empty one, which handlers omit, when there were none).
func (l *Writer) Died() slog.Attr {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.finishLocked()
	since := l.clock().Add(-fatalWindow)
	if a := l.answered.Load(); a != 0 {
		if t := time.Unix(0, a).Add(-answerSlack); t.After(since) {
			since = t
		}
	}
	var b strings.Builder
	for _, f := range l.fatals {
		if f.at.Before(since) || b.Len() >= maxQuote {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(f.text)
	}
	if b.Len() == 0 {
		return slog.Attr{}
	}
	s := b.String()
	if len(s) > maxQuote {
		s = s[:maxQuote] + "…"
	}
	return slog.String("fatal", s)
}

// Printed renders what a worker wrote where a frame was due: text as PHP
// printed it; what follows that is not text (often the handshake frame itself)
// is only counted, or escaped when nothing readable came first.
func Printed(b []byte) string {
	n := 0
	for n < len(b) {
		r, size := utf8.DecodeRune(b[n:])
		if r == utf8.RuneError && size <= 1 || r < ' ' && r != '\n' && r != '\t' && r != '\r' {
			break
		}
		n += size
	}
	text := strings.TrimRight(string(b[:n]), "\r\n")
	switch {
	case n == len(b):
		return text
	case text == "":
		return strconv.Quote(string(b))
	}
	return fmt.Sprintf("%s\n[followed by %d bytes that are not text]", text, len(b)-n)
}

// Tail is the worker's last lines as it printed them, the unfinished one
// included, for the error of a worker that failed to boot.
func (l *Writer) Tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	lines := l.last
	if len(l.part) > 0 {
		lines = append(append([]string(nil), lines...), string(l.part))
	}
	return strings.Join(lines, "\n")
}
