package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"time"

	"github.com/ferry-php/ferry/internal/config"
	"github.com/ferry-php/ferry/internal/listen"
	"github.com/ferry-php/ferry/internal/pool"
)

// directLimits is FERRY_DIRECT_LIMITS, what a worker of server.mode: direct
// enforces on the connections it accepts itself: the front's limits, with
// the same meaning (docs/config.md). 0 is "no limit" throughout.
type directLimits struct {
	MaxHeaderSize       int64    `json:"max_header_size"`
	MaxHeaders          int      `json:"max_headers"`
	MaxBodySize         int64    `json:"max_body_size"`
	ReadHeaderTimeoutMS int64    `json:"read_header_timeout_ms"`
	ReadTimeoutMS       int64    `json:"read_timeout_ms"`
	WriteTimeoutMS      int64    `json:"write_timeout_ms"`
	IdleTimeoutMS       int64    `json:"idle_timeout_ms"`
	MaxConnections      int      `json:"max_connections"` // this worker's share
	MaxJobs             int      `json:"max_jobs"`
	TrustedProxies      []string `json:"trusted_proxies"` // CIDRs only
	// server.underscores_in_headers: 1 keeps the fields whose name holds "_", which are dropped otherwise
	Underscores int `json:"underscores_in_headers"`
	// server.uploads: how the worker reads a multipart body, as internal/multipart does for the front
	Uploads directUploads `json:"uploads"`
	// server.request_id: 1 keeps or makes X-Request-Id as the front does
	RequestID int `json:"request_id,omitempty"`
	// server.access_log: absent when off
	AccessLog *directAccessLog `json:"access_log,omitempty"`
}

// directAccessLog is where and how a worker writes its access log lines:
// the server reads them from the FIFO into its own log (observe.DirectFIFO).
type directAccessLog struct {
	Format string `json:"format"`
	FIFO   string `json:"fifo"`
}

// directAccessFIFO is the FIFO of the running server's access log, "" when
// it has none; set once, before the pool starts (ops.go).
var directAccessFIFO string

// directUploads is server.uploads as the front's multipart.Limits take it (cmd/ferry
// options.go): the file bytes are bounded by max_body_size.
type directUploads struct {
	Dir               string   `json:"dir"`
	MaxFiles          int      `json:"max_files"`
	MaxParts          int      `json:"max_parts"`
	MaxPartHeaderSize int      `json:"max_part_header_size"`
	Forbid            []string `json:"forbid"`
}

// directLimitsJSON is FERRY_DIRECT_LIMITS for c's workers.
//
// server.max_connections is split evenly among as many workers as the pool
// may hold at once (pool.max_workers for an elastic pool, else num_workers),
// rounded down, so that together they never hold more than it, however far
// an elastic pool grows; at least 1 each when it is set, since 0 would mean
// no limit. While a reload runs, the old generation only finishes the
// connections it has. The front's own listeners (TLS, HTTP/2) keep their own
// budget of server.max_connections, as they do in front mode.
func directLimitsJSON(c *config.Config) string {
	s, p := &c.Server, &c.Pool
	n := p.NumWorkers
	if n <= 0 {
		n = runtime.NumCPU() // the pool's own default
	}
	n = max(n, p.MaxWorkers)
	share := 0
	if s.MaxConnections > 0 {
		share = max(s.MaxConnections/n, 1)
	}
	idle := s.IdleTimeout
	if idle == 0 {
		idle = s.ReadTimeout // server.idle_timeout: 0 means read_timeout's, as in the front
	}
	l := directLimits{
		MaxHeaderSize: int64(s.MaxHeaderSize), MaxHeaders: s.MaxHeaders, MaxBodySize: int64(s.MaxBodySize),
		ReadHeaderTimeoutMS: millis(s.ReadHeaderTimeout), ReadTimeoutMS: millis(s.ReadTimeout),
		WriteTimeoutMS: millis(s.WriteTimeout), IdleTimeoutMS: millis(idle),
		MaxConnections: share, MaxJobs: p.MaxJobs, TrustedProxies: cidrs(s.TrustedProxies),
	}
	if s.UnderscoreHeaders {
		l.Underscores = 1
	}
	if s.RequestID {
		l.RequestID = 1
	}
	if s.AccessLog.Enabled && directAccessFIFO != "" {
		l.AccessLog = &directAccessLog{Format: s.AccessLog.Format, FIFO: directAccessFIFO}
	}
	u := &s.Uploads
	l.Uploads = directUploads{Dir: u.Dir, MaxFiles: u.MaxFiles, MaxParts: u.MaxParts,
		MaxPartHeaderSize: int(u.MaxPartHeaderSize), Forbid: u.Forbid}
	b, _ := json.Marshal(l) // plain fields: it always encodes
	return string(b)
}

// millis rounds up: a timeout under a millisecond must not become 0, "none".
func millis(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// cidrs writes trusted_proxies as CIDRs only, a lone address as its /32 or
// /128, so the worker parses one form. Validation has refused anything else.
func cidrs(in []string) []string {
	out := make([]string, 0, len(in))
	for _, v := range in {
		if pfx, err := netip.ParsePrefix(v); err == nil {
			out = append(out, pfx.Masked().String())
		} else if a, err := netip.ParseAddr(v); err == nil {
			a = a.Unmap()
			out = append(out, netip.PrefixFrom(a, a.BitLen()).String())
		}
	}
	return out
}

// directEnv adds FERRY_DIRECT_LIMITS to the workers' environment in direct
// mode; the pool adds FERRY_DIRECT_FD itself, since it places the socket.
func directEnv(c *config.Config, env []string) []string {
	if !c.Server.Direct() {
		return env
	}
	return append(env, pool.DirectLimitsEnv+"="+directLimitsJSON(c))
}

// plainListener is server.address: the front's (fasthttp serves it), or in
// direct mode the workers' socket, which the server holds for its whole life
// without accepting on it, so that the accept queue outlives every worker
// and generation.
type plainListener struct {
	front  net.Listener
	direct *listen.DirectListener
}

func listenPlain(cfg *config.Config) (*plainListener, error) {
	if cfg.Server.Direct() {
		d, err := listen.Direct(cfg.Server.Address)
		return &plainListener{direct: d}, err
	}
	ln, err := net.Listen("tcp", cfg.Server.Address)
	return &plainListener{front: ln}, err
}

func (l *plainListener) addr() string {
	if l.direct != nil {
		return l.direct.Addr().String()
	}
	return l.front.Addr().String()
}

// Close is for a start that failed.
func (l *plainListener) Close() error {
	if l.front != nil {
		return l.front.Close()
	}
	l.direct.Close(context.Background(), nil)
	return nil
}

// closeDirect closes the workers' socket after the last worker has exited;
// what is left in its queue gets a 503 (listen.DirectListener.Close).
func (l *plainListener) closeDirect(ctx context.Context, log *slog.Logger) {
	if l.direct != nil {
		l.direct.Close(ctx, log)
	}
}
