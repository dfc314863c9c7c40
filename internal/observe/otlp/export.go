package otlp

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Exporter batches spans and POSTs them to the collector from one goroutine.
// Add never waits: a collector that is slow or gone costs the spans that
// overflow the queue, not the requests that made them.
type Exporter struct {
	cfg      Config
	resource []KeyValue
	scope    string
	client   *http.Client
	log      *slog.Logger

	queue chan *Span
	stop  chan context.Context
	done  chan struct{}
	// abort cuts an export in progress when Shutdown's deadline passes.
	base  context.Context
	abort context.CancelFunc
	once  sync.Once

	buf, zbuf bytes.Buffer
	zw        *gzip.Writer

	mu      sync.Mutex
	dropped int64 // spans lost since the last report
	failing bool  // the last export failed: the next success says so
}

// NewExporter starts the exporter's goroutine; Shutdown ends it.
func NewExporter(cfg Config, resource []KeyValue, scope string, log *slog.Logger) *Exporter {
	// The default transport's proxy settings ($HTTPS_PROXY) are kept, as
	// the SDK's exporter kept them.
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.TLS != nil {
		tr.TLSClientConfig = cfg.TLS
	}
	e := &Exporter{cfg: cfg, resource: resource, scope: scope, log: log,
		client: &http.Client{Transport: tr},
		queue:  make(chan *Span, cfg.MaxQueue), stop: make(chan context.Context, 1), done: make(chan struct{})}
	e.base, e.abort = context.WithCancel(context.Background())
	go e.run()
	return e
}

// Add queues a finished span, or drops it when the queue is full.
func (e *Exporter) Add(s *Span) {
	select {
	case e.queue <- s:
	default:
		e.mu.Lock()
		e.dropped++
		e.mu.Unlock()
	}
}

// Shutdown sends what is queued and stops. Spans still unsent when ctx ends
// are lost, and ctx's error is returned. Spans added afterwards are dropped.
func (e *Exporter) Shutdown(ctx context.Context) error {
	e.once.Do(func() { e.stop <- ctx })
	select {
	case <-e.done:
		return nil
	case <-ctx.Done():
		e.abort()
		<-e.done
		return fmt.Errorf("tracing: spans not sent before the shutdown deadline: %w", ctx.Err())
	}
}

func (e *Exporter) run() {
	defer close(e.done)
	batch := make([]*Span, 0, e.cfg.MaxBatch)
	// Armed by the first span of a batch: no span waits longer than the
	// schedule delay, and an idle server sets no timers.
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	send := func(ctx context.Context) {
		e.export(ctx, batch)
		clear(batch)
		batch = batch[:0]
	}
	for {
		select {
		case s := <-e.queue:
			if len(batch) == 0 {
				timer.Reset(e.cfg.ScheduleDelay)
			}
			batch = append(batch, s)
			if len(batch) < e.cfg.MaxBatch {
				continue
			}
			timer.Stop()
			ctx, cancel := context.WithTimeout(e.base, e.cfg.ExportTimeout)
			send(ctx)
			cancel()
		case <-timer.C:
			ctx, cancel := context.WithTimeout(e.base, e.cfg.ExportTimeout)
			send(ctx)
			cancel()
		case sctx := <-e.stop:
			timer.Stop()
			// Each batch within its export timeout, all within Shutdown's.
			all, cancel := context.WithCancel(e.base)
			stop := context.AfterFunc(sctx, cancel)
			for more := true; more; {
				select {
				case s := <-e.queue:
					batch = append(batch, s)
				default:
					more = false
				}
				if len(batch) == e.cfg.MaxBatch || (!more && len(batch) > 0) {
					ctx, cancelBatch := context.WithTimeout(all, e.cfg.ExportTimeout)
					send(ctx)
					cancelBatch()
				}
			}
			stop()
			cancel()
			e.report()
			return
		}
	}
}

// export sends one batch, retrying what the OTLP spec calls retryable
// (429, 502, 503, 504, or no answer) with growing pauses until ctx ends.
func (e *Exporter) export(ctx context.Context, batch []*Span) {
	body := e.encode(batch)
	pause := 500 * time.Millisecond
	for {
		retry, after, err := e.post(ctx, body)
		if err == nil {
			e.recovered()
			return
		}
		if retry && ctx.Err() == nil {
			if after > 0 {
				pause = after
			}
			t := time.NewTimer(pause)
			select {
			case <-t.C:
				pause = min(2*pause, 8*time.Second)
				continue
			case <-ctx.Done():
				t.Stop()
			}
		}
		e.failed(len(batch), err)
		return
	}
}

func (e *Exporter) encode(batch []*Span) []byte {
	e.buf.Reset()
	e.buf.Write(AppendRequest(e.buf.AvailableBuffer(), e.resource, e.scope, batch))
	if !e.cfg.Gzip {
		return e.buf.Bytes()
	}
	e.zbuf.Reset()
	if e.zw == nil {
		e.zw = gzip.NewWriter(&e.zbuf)
	} else {
		e.zw.Reset(&e.zbuf)
	}
	e.zw.Write(e.buf.Bytes())
	e.zw.Close()
	return e.zbuf.Bytes()
}

// post makes one attempt. after is the collector's Retry-After, if any.
func (e *Exporter) post(ctx context.Context, body []byte) (retry bool, after time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.cfg.Endpoint, bytes.NewReader(body))
	if err != nil {
		return false, 0, err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("User-Agent", "ferry")
	if e.cfg.Gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	for k, v := range e.cfg.Headers {
		req.Header.Set(k, v)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		// A certificate that does not verify will not verify next time.
		var cv *tls.CertificateVerificationError
		return !errors.As(err, &cv), 0, err
	}
	defer resp.Body.Close()
	// A collector's answer is a few bytes; more is not worth reading.
	got, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 == 2 {
		if n, msg, err := PartialSuccess(got); err == nil && (n > 0 || msg != "") {
			e.log.Warn("tracing: the collector rejected spans", "rejected", n, "message", msg)
		}
		return false, 0, nil
	}
	err = fmt.Errorf("collector answered %s", resp.Status)
	if msg, derr := StatusMessage(got); derr == nil && msg != "" {
		err = fmt.Errorf("%w: %s", err, msg)
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		if s, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && s > 0 {
			after = time.Duration(s) * time.Second
		}
		return true, after, err
	}
	return false, 0, err
}

// failed and recovered log a collector's trouble once, when it starts, and
// once when it ends with the count of spans lost meanwhile, rather than a
// line per batch.
func (e *Exporter) failed(n int, err error) {
	e.mu.Lock()
	e.dropped += int64(n)
	first := !e.failing
	e.failing = true
	e.mu.Unlock()
	if first && !errors.Is(err, context.Canceled) {
		e.log.Warn("tracing: spans not exported; more failures are counted, not logged", "spans", n, "error", err)
	}
}

func (e *Exporter) recovered() {
	e.mu.Lock()
	was, lost := e.failing, e.dropped
	e.failing, e.dropped = false, 0
	e.mu.Unlock()
	switch {
	case was:
		e.log.Info("tracing: the collector takes spans again", "spans_lost", lost)
	case lost > 0:
		e.log.Warn("tracing: the span queue was full: spans dropped (OTEL_BSP_MAX_QUEUE_SIZE)", "spans_lost", lost)
	}
}

// report says at exit how many spans never reached the collector.
func (e *Exporter) report() {
	e.mu.Lock()
	lost := e.dropped
	e.mu.Unlock()
	if lost > 0 {
		e.log.Warn("tracing: spans lost (queue full or collector failing)", "spans_lost", lost)
	}
}
