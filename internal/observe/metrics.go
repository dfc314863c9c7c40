// Package observe is what an operator watches a running server with:
// Prometheus metrics, readiness, request ids, the access log and systemd
// notifications. It wraps the gateway's handler and reads the pool; neither
// knows about it beyond the pool's Observer hook.
package observe

import (
	"net/http"
	"strconv"
	"time"

	"github.com/ferry-php/ferry/internal/leaks"
	"github.com/ferry-php/ferry/internal/pool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Source is what the metrics read from the pool at scrape time.
type Source interface {
	Stats() pool.Stats
	Workers() []pool.Info
	BatchLimit() (int, time.Duration)
	Leaks() *leaks.Store
}

// methods get a label of their own; any other method counts as "other", so
// a client cannot grow the label set.
var methods = [...]string{"other", "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

var classes = [...]string{"other", "1xx", "2xx", "3xx", "4xx", "5xx"}

// latency buckets span a hello-world request (tens of µs) to exec_ttl's scale.
var latency = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// boots span a worker forked from a booted one (a millisecond or two) to a
// framework booted from exec (hundreds of ms) and one that hangs in its boot.
var boots = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// Metrics is safe for concurrent use. Recording a request touches only
// counters and histograms resolved in advance: atomics, no map or lock.
type Metrics struct {
	reg      *prometheus.Registry
	requests [len(methods)][len(classes)]prometheus.Counter
	duration prometheus.Histogram
	wait     prometheus.Histogram
	run      prometheus.Histogram
	spawn    prometheus.Histogram
	in, out  prometheus.Counter
}

// NewMetrics registers the front's metrics and the Go runtime's; Attach adds
// the pool's once it exists.
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	rv := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ferry_http_requests_total", Help: "HTTP requests answered, by method and status class.",
	}, []string{"method", "code"})
	for i, meth := range methods {
		for j, c := range classes {
			m.requests[i][j] = rv.WithLabelValues(meth, c)
		}
	}
	hist := func(name, help string) prometheus.Histogram {
		return prometheus.NewHistogram(prometheus.HistogramOpts{Name: name, Help: help, Buckets: latency})
	}
	m.duration = hist("ferry_http_request_duration_seconds", "Time from a request's headers being read to its answer being ready to write.")
	m.wait = hist("ferry_job_wait_seconds", "Time a job waited before PHP started on it: for a worker, or behind another job on its worker.")
	m.run = hist("ferry_job_php_seconds", "Time PHP spent on a job, from when it could start on it to its answer.")
	m.spawn = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ferry_worker_spawn_seconds",
		Help: "Time from a worker's start to its handshake, for every worker that became ready.", Buckets: boots})
	m.in = prometheus.NewCounter(prometheus.CounterOpts{Name: "ferry_http_request_body_bytes_total", Help: "Request body bytes received (declared Content-Length)."})
	m.out = prometheus.NewCounter(prometheus.CounterOpts{Name: "ferry_http_response_body_bytes_total", Help: "Response body bytes sent."})
	m.reg.MustRegister(rv, m.duration, m.wait, m.run, m.spawn, m.in, m.out,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// CounterFunc adds a counter read from f at each scrape: for what another
// package counts itself (the front's recovered panics).
func (m *Metrics) CounterFunc(name, help string, f func() float64) {
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f))
}

// GaugeFunc adds a gauge read from f at each scrape (the front's open
// connections).
func (m *Metrics) GaugeFunc(name, help string, f func() float64) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
}

// Attach adds the metrics read from the pool at each scrape.
func (m *Metrics) Attach(src Source) { m.reg.MustRegister(poolCollector{src}) }

// ObserveJob makes Metrics a pool.Observer.
func (m *Metrics) ObserveJob(t pool.Timing) {
	m.wait.Observe(t.Wait.Seconds())
	m.run.Observe(t.Run.Seconds())
}

// ObserveSpawn makes Metrics a pool.SpawnObserver.
func (m *Metrics) ObserveSpawn(d time.Duration) { m.spawn.Observe(d.Seconds()) }

// request records one answered request.
func (m *Metrics) request(method []byte, status int, in, out int64, d time.Duration) {
	mi := 0
	for i := 1; i < len(methods); i++ {
		if string(method) == methods[i] {
			mi = i
			break
		}
	}
	ci := status / 100
	if ci < 1 || ci >= len(classes) {
		ci = 0
	}
	m.requests[mi][ci].Inc()
	m.duration.Observe(d.Seconds())
	if in > 0 {
		m.in.Add(float64(in))
	}
	if out > 0 {
		m.out.Add(float64(out))
	}
}

// Handler serves the exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorLog: nil})
}

// poolCollector reads the pool when scraped: worker states and sizes change
// too often to be kept up to date on every transition.
type poolCollector struct{ src Source }

var (
	dQueued   = prometheus.NewDesc("ferry_jobs_queued", "Jobs accepted and not yet written to a worker.", nil, nil)
	dInFlight = prometheus.NewDesc("ferry_jobs_in_flight", "Jobs held by workers.", nil, nil)
	dJobs     = prometheus.NewDesc("ferry_jobs_total", "Jobs answered by workers since the server started.", nil, nil)
	dWrites   = prometheus.NewDesc("ferry_relay_writes_total", "Writes to workers' relays; jobs per write is the pipelining batch achieved.", nil, nil)
	dWorkers  = prometheus.NewDesc("ferry_workers", "Workers by state.", []string{"state"}, nil)
	dRSS      = prometheus.NewDesc("ferry_worker_rss_bytes", "Resident memory of each live worker.", []string{"pid"}, nil)
	dRSSAll   = prometheus.NewDesc("ferry_workers_rss_bytes", "Resident memory of all live workers together.", nil, nil)
	dPSS      = prometheus.NewDesc("ferry_worker_pss_bytes", "Proportional memory of each live worker: shared pages divided among their sharers.", []string{"pid"}, nil)
	dPSSAll   = prometheus.NewDesc("ferry_workers_pss_bytes", "Proportional memory of all live workers together.", nil, nil)
	dUSS      = prometheus.NewDesc("ferry_worker_uss_bytes", "Memory only each live worker maps, what pool.max_memory compares.", []string{"pid"}, nil)
	dUSSAll   = prometheus.NewDesc("ferry_workers_uss_bytes", "Memory only the live workers map, summed.", nil, nil)
	dSpawns   = prometheus.NewDesc("ferry_worker_spawns_total", "Workers started, by reason.", []string{"reason"}, nil)
	dCPU      = prometheus.NewDesc("ferry_worker_cpu_seconds_total", "CPU time used by each live worker.", []string{"pid"}, nil)
	dRestarts = prometheus.NewDesc("ferry_worker_restarts_total", "Workers that exited, by reason.", []string{"reason"}, nil)
	dBatch    = prometheus.NewDesc("ferry_batch_limit", "Jobs the next write to a sequential worker may carry (pool.pipeline).", nil, nil)
	dJobEst   = prometheus.NewDesc("ferry_job_seconds_estimate", "Measured time per job that sizes those batches.", nil, nil)
	dDirect   = prometheus.NewDesc("ferry_direct_requests_total", "Requests the workers served themselves (server.mode: direct).", nil, nil)
	dDirConns = prometheus.NewDesc("ferry_direct_connections", "Client connections the workers hold (server.mode: direct).", nil, nil)
	dDirDrops = prometheus.NewDesc("ferry_direct_access_log_dropped_total", "Access log lines the workers dropped because the server did not read them in time (server.mode: direct).", nil, nil)
	dLeaks    = prometheus.NewDesc("ferry_leak_findings_total", "Distinct leak findings, by kind (pool.leak_watch).", []string{"kind"}, nil)
	dLeaksOut = prometheus.NewDesc("ferry_leak_findings_dropped_total", "Leak findings not kept because the store was full.", nil, nil)
)

// workerStates are always exported, at 0 when empty, so a query for one
// state does not see it vanish.
var workerStates = []string{"starting", "ready", "working", "retiring", "stopping"}

// restartReasons are always exported too, for the same reason.
var restartReasons = []string{pool.ReasonCrash, pool.ReasonBootFailed, pool.ReasonExecTTL, pool.ReasonMaxJobs,
	pool.ReasonTTL, pool.ReasonIdleTTL, pool.ReasonMaxMemory, pool.ReasonReload, pool.ReasonReloadFail, pool.ReasonAsked, pool.ReasonShutdown, pool.ReasonScaleDown}

// spawnReasons are always exported too.
var spawnReasons = []string{pool.SpawnStart, pool.SpawnReload, pool.SpawnReplace, pool.SpawnScaleUp}

// Describe sends nothing: the pool's metrics are unchecked, as their label
// values (pids) are only known at scrape time.
func (poolCollector) Describe(chan<- *prometheus.Desc) {}

func (c poolCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	s := c.src.Stats()
	gauge(dQueued, float64(s.Queued))
	gauge(dInFlight, float64(s.InFlight))
	counter(dJobs, float64(s.Jobs))
	counter(dWrites, float64(s.Writes))
	counter(dDirect, float64(s.DirectRequests))
	gauge(dDirConns, float64(s.DirectConnections))
	counter(dDirDrops, float64(s.DirectLogDropped))
	for _, r := range restartReasons {
		counter(dRestarts, float64(s.Restarts[r]), r)
	}
	for _, r := range spawnReasons {
		counter(dSpawns, float64(s.Spawns[r]), r)
	}
	states := map[string]int{}
	var all, pss, uss uint64
	for _, w := range c.src.Workers() {
		states[w.State]++
		all, pss, uss = all+w.RSS, pss+w.PSS, uss+w.USS
		if w.PID != 0 {
			pid := strconv.Itoa(w.PID)
			gauge(dRSS, float64(w.RSS), pid)
			if w.USS > 0 { // 0: smaps_rollup unreadable, not a worker using nothing
				gauge(dPSS, float64(w.PSS), pid)
				gauge(dUSS, float64(w.USS), pid)
			}
			counter(dCPU, w.CPU, pid)
		}
	}
	for _, st := range workerStates {
		gauge(dWorkers, float64(states[st]), st)
	}
	gauge(dRSSAll, float64(all))
	gauge(dPSSAll, float64(pss))
	gauge(dUSSAll, float64(uss))
	limit, per := c.src.BatchLimit()
	gauge(dBatch, float64(limit))
	gauge(dJobEst, per.Seconds())
	kinds, dropped := c.src.Leaks().Kinds()
	for _, k := range kinds {
		counter(dLeaks, float64(k.Count), k.Kind)
	}
	if dropped > 0 {
		counter(dLeaksOut, float64(dropped))
	}
}
