package main

import (
	"bufio"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"sync"
	"time"
)

// Config is one load run.
type Config struct {
	Host     string
	Conns    int
	Duration time.Duration
	Timeout  time.Duration
	Seed     uint64
	Classes  []Class
}

// Result is what loadgen prints.
type Result struct {
	URL         string        `json:"url"`
	Connections int           `json:"connections"`
	DurationS   float64       `json:"duration_s"`
	TimeoutS    float64       `json:"timeout_s"`
	Seed        uint64        `json:"seed"`
	Requests    int           `json:"requests"`
	RPS         float64       `json:"rps"`
	Counts      Counts        `json:"errors"`
	Latency     *Summary      `json:"latency_ms"`
	Classes     []ClassResult `json:"classes"`
}

// Counts are the requests that did not give a response in time, and the non-2xx/3xx
// answers. Unfinished requests were cut off by the end of the run, as wrk's are; they
// are not failures.
type Counts struct {
	Connect    int `json:"connect"`
	Read       int `json:"read"`
	Write      int `json:"write"`
	Timeout    int `json:"timeout"`
	Non2xx     int `json:"non2xx"`
	Unfinished int `json:"unfinished"`
}

func (c *Counts) add(o Counts) {
	c.Connect += o.Connect
	c.Read += o.Read
	c.Write += o.Write
	c.Timeout += o.Timeout
	c.Non2xx += o.Non2xx
	c.Unfinished += o.Unfinished
}

// ClassResult is one class's share of the run.
type ClassResult struct {
	Name     string   `json:"name"`
	Path     string   `json:"path"`
	Weight   int      `json:"weight"`
	Sent     int      `json:"sent"`
	Requests int      `json:"requests"`
	RPS      float64  `json:"rps"`
	Counts   Counts   `json:"errors"`
	Latency  *Summary `json:"latency_ms"`
}

// conn is one client connection: it sends a request, reads the whole response, and
// only then sends the next, like a browser without pipelining.
type conn struct {
	cfg     *Config
	id      int
	reqs    [][]byte
	lat     [][]time.Duration
	counts  []Counts
	sent    []int
	cumul   []int
	c       net.Conn
	br      *bufio.Reader
	backoff time.Duration
}

func run(cfg Config) Result {
	cumul := make([]int, len(cfg.Classes))
	reqs := make([][]byte, len(cfg.Classes))
	total := 0
	for i, cl := range cfg.Classes {
		total += cl.Weight
		cumul[i] = total
		reqs[i] = []byte("GET " + cl.Path + " HTTP/1.1\r\nHost: " + cfg.Host +
			"\r\nUser-Agent: ferry-bench-loadgen\r\n\r\n")
	}
	conns := make([]*conn, cfg.Conns)
	start := time.Now()
	end := start.Add(cfg.Duration)
	var wg sync.WaitGroup
	for i := range conns {
		n := len(cfg.Classes)
		conns[i] = &conn{cfg: &cfg, id: i, reqs: reqs, cumul: cumul, lat: make([][]time.Duration, n),
			counts: make([]Counts, n), sent: make([]int, n), backoff: 10 * time.Millisecond}
		wg.Add(1)
		go func(c *conn) {
			defer wg.Done()
			c.loop(end)
		}(conns[i])
	}
	wg.Wait()

	res := Result{Connections: cfg.Conns, DurationS: cfg.Duration.Seconds(), TimeoutS: cfg.Timeout.Seconds(),
		Seed: cfg.Seed}
	var every []time.Duration
	for k, cl := range cfg.Classes {
		cr := ClassResult{Name: cl.Name, Path: cl.Path, Weight: cl.Weight}
		var lat []time.Duration
		for _, c := range conns {
			lat = append(lat, c.lat[k]...)
			cr.Counts.add(c.counts[k])
			cr.Sent += c.sent[k]
		}
		cr.Requests = len(lat)
		cr.RPS = float64(cr.Requests) / cfg.Duration.Seconds()
		cr.Latency = summarize(lat)
		res.Counts.add(cr.Counts)
		res.Requests += cr.Requests
		res.Classes = append(res.Classes, cr)
		every = append(every, lat...)
	}
	res.RPS = float64(res.Requests) / cfg.Duration.Seconds()
	res.Latency = summarize(every)
	return res
}

func (c *conn) loop(end time.Time) {
	rng := rand.New(rand.NewPCG(c.cfg.Seed, uint64(c.id)))
	defer c.drop()
	total := c.cumul[len(c.cumul)-1]
	for {
		now := time.Now()
		if !now.Before(end) {
			return
		}
		r := rng.IntN(total)
		k := 0
		for c.cumul[k] <= r {
			k++
		}
		c.sent[k]++
		deadline := now.Add(c.cfg.Timeout)
		if deadline.After(end) {
			deadline = end
		}
		c.once(k, deadline, end)
	}
}

// once sends one request of class k and waits for its whole response.
func (c *conn) once(k int, deadline, end time.Time) {
	counts := &c.counts[k]
	if c.c == nil {
		d := net.Dialer{Deadline: deadline}
		nc, err := d.Dial("tcp", c.cfg.Host)
		if err != nil {
			if c.classify(err, deadline, end, counts) != nil {
				counts.Connect++
			}
			// A refused connection fails at once; waiting a little keeps the loop from
			// spinning on a server that is down.
			time.Sleep(min(c.backoff, time.Until(end)))
			return
		}
		c.c, c.br = nc, bufio.NewReaderSize(nc, 16<<10)
	}
	if err := c.c.SetDeadline(deadline); err != nil {
		counts.Write++
		c.drop()
		return
	}
	t0 := time.Now()
	if _, err := c.c.Write(c.reqs[k]); err != nil {
		if c.classify(err, deadline, end, counts) != nil {
			counts.Write++
		}
		c.drop()
		return
	}
	resp, err := http.ReadResponse(c.br, nil)
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	took := time.Since(t0)
	if err != nil {
		if c.classify(err, deadline, end, counts) != nil {
			counts.Read++
		}
		c.drop()
		return
	}
	c.lat[k] = append(c.lat[k], took)
	if resp.StatusCode < 200 || resp.StatusCode > 399 {
		counts.Non2xx++
	}
	if resp.Close {
		c.drop()
	}
}

// classify counts a deadline error as a timeout, or as unfinished when the deadline was
// the end of the run; it returns err untouched when it is another kind of error.
func (c *conn) classify(err error, deadline, end time.Time, counts *Counts) error {
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			return err
		}
	}
	if deadline.Equal(end) {
		counts.Unfinished++
	} else {
		counts.Timeout++
	}
	return nil
}

func (c *conn) drop() {
	if c.c != nil {
		c.c.Close()
		c.c, c.br = nil, nil
	}
}
