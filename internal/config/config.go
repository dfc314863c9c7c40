// Package config loads, checks and documents ferry.yaml, the Ferry server's
// configuration file. The reference for every key is docs/config.md.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"gopkg.in/yaml.v3"
)

// MaxFileSize bounds what Load reads: a config file is a few KiB, so anything
// larger is a wrong path (a log, a binary) and must not be slurped into memory.
const MaxFileSize = 1 << 20

// Relay kinds accepted by pool.relay.
const (
	RelayPipes = "pipes"
	RelayUnix  = "unix"
	RelayTCP   = "tcp"
	RelayStdio = "stdio"
)

// What serves HTTP/1.1 on server.address (server.mode).
const (
	ModeFront  = "front"  // the Go front, which hands requests to the workers over the relay
	ModeDirect = "direct" // the workers accept on server.address themselves (ext/ferry)
)

// Ways pool.boot starts workers.
const (
	BootExec = "exec" // each worker runs the command itself
	BootFork = "fork" // a zygote runs it once per generation and forks the workers
)

// Config is the whole ferry.yaml. Build one with Default, Parse or Load;
// a hand-built or modified Config should be checked with Validate.
type Config struct {
	Server ServerConfig `yaml:"server"`
	Pool   PoolConfig   `yaml:"pool"`
	Admin  AdminConfig  `yaml:"admin"`
	Log    LogConfig    `yaml:"log"`

	// source and lines let Validate point at the file line that set a key.
	source string
	lines  map[string]int
	// extensionFile is the ferry.so that PHPArgs loads, once ferry serve has
	// resolved pool.php.extension (SetExtensionFile).
	extensionFile string
}

// ServerConfig is the HTTP front end.
type ServerConfig struct {
	Address           string            `yaml:"address"`
	Mode              string            `yaml:"mode"` // front or direct (ModeFront, ModeDirect)
	ReadHeaderTimeout time.Duration     `yaml:"read_header_timeout"`
	ReadTimeout       time.Duration     `yaml:"read_timeout"`
	WriteTimeout      time.Duration     `yaml:"write_timeout"`
	IdleTimeout       time.Duration     `yaml:"idle_timeout"`
	MaxBodySize       Size              `yaml:"max_body_size"`
	MaxHeaderSize     Size              `yaml:"max_header_size"`
	MaxHeaders        int               `yaml:"max_headers"`      // header lines per request; 431 beyond
	MaxConnections    int               `yaml:"max_connections"`  // open client connections; 0 = no limit
	BodyBufferSize    Size              `yaml:"body_buffer_size"` // bodies above this are spooled to a file
	TrustedProxies    []string          `yaml:"trusted_proxies"`  // CIDRs whose X-Forwarded-* headers are believed
	Debug             bool              `yaml:"debug"`
	UnderscoreHeaders bool              `yaml:"underscores_in_headers"` // keep header names with "_", which nginx drops
	AccessLog         AccessLogConfig   `yaml:"access_log"`
	Tracing           TracingConfig     `yaml:"tracing"`
	RequestID         bool              `yaml:"request_id"`  // keep or make X-Request-Id, pass it to PHP, echo it
	DrainDelay        time.Duration     `yaml:"drain_delay"` // /ready answers 503 this long before the listener closes
	Watch             []string          `yaml:"watch"`       // globs; a change to a matching file reloads the workers
	MaxProcs          int               `yaml:"max_procs"`   // Go threads running at once; 0 = half the CPUs
	Static            StaticConfig      `yaml:"static"`
	Uploads           UploadsConfig     `yaml:"uploads"`
	Compression       CompressionConfig `yaml:"compression"`
	TLS               TLSConfig         `yaml:"tls"`
	HTTP2             HTTP2Config       `yaml:"http2"`
}

// TLSConfig is the HTTPS listener: HTTP/1.1 and HTTP/2 (ALPN) beside the plain one.
type TLSConfig struct {
	Address  string `yaml:"address"`  // "" = no HTTPS
	Cert     string `yaml:"cert"`     // PEM chain, reread on SIGHUP
	Key      string `yaml:"key"`      // PEM private key
	Redirect bool   `yaml:"redirect"` // the plain address answers 308 to https
}

// HTTP2Config tunes HTTP/2, on the TLS address and, with H2C, on the plain one.
type HTTP2Config struct {
	H2C                  bool `yaml:"h2c"` // prior-knowledge HTTP/2 without TLS on server.address
	MaxConcurrentStreams int  `yaml:"max_concurrent_streams"`
}

// CompressionConfig compresses PHP's answers on the fly when the client accepts it.
type CompressionConfig struct {
	Enabled    bool     `yaml:"enabled"`
	MinSize    Size     `yaml:"min_size"`   // smaller bodies go as they are
	Types      []string `yaml:"types"`      // media types; "text/*" and "application/*+json" match families
	Algorithms []string `yaml:"algorithms"` // server preference among br, zstd, gzip
}

// UploadsConfig bounds what a multipart/form-data body may put on disk.
type UploadsConfig struct {
	Dir               string   `yaml:"dir"`                  // "" = the system temp dir
	MaxFiles          int      `yaml:"max_files"`            // file parts per request (PHP's max_file_uploads)
	MaxParts          int      `yaml:"max_parts"`            // parts of any kind per request
	MaxPartHeaderSize Size     `yaml:"max_part_header_size"` // header block of one part
	Forbid            []string `yaml:"forbid"`               // file name extensions refused with 400
}

// StaticConfig serves files from disk before requests reach PHP.
type StaticConfig struct {
	Dir          string   `yaml:"dir"`
	Prefix       string   `yaml:"prefix"`
	Forbid       []string `yaml:"forbid"`
	CacheControl string   `yaml:"cache_control"`
}

// Forked tells whether the workers are forked from a zygote: pool.boot: fork
// applies to Ferry's protocol over pipes, and workers of any other protocol
// or relay are exec'd whatever it says.
func (p *PoolConfig) Forked() bool {
	return p.Boot == BootFork && p.Protocol == ProtocolFerry && p.Relay == RelayPipes
}

// Direct tells whether the workers serve server.address themselves.
func (s *ServerConfig) Direct() bool { return s.Mode == ModeDirect }

// PoolConfig describes the PHP worker processes.
type PoolConfig struct {
	// Command is split on whitespace when given as one string.
	Command         []string          `yaml:"command,split"`
	Dir             string            `yaml:"dir"`
	Env             map[string]string `yaml:"env"`
	Relay           string            `yaml:"relay"`
	Protocol        string            `yaml:"protocol"` // ferry or roadrunner (rr.go)
	Boot            string            `yaml:"boot"`     // fork or exec (Forked)
	ReforkAfter     int               `yaml:"refork_after"`
	NumWorkers      int               `yaml:"num_workers"`
	MaxWorkers      int               `yaml:"max_workers"` // 0: fixed at num_workers; else num_workers is the floor
	ScaleUpAfter    time.Duration     `yaml:"scale_up_after"`
	ScaleDownAfter  time.Duration     `yaml:"scale_down_after"`
	MaxJobs         int               `yaml:"max_jobs"`
	TTL             time.Duration     `yaml:"ttl"`
	IdleTTL         time.Duration     `yaml:"idle_ttl"`
	MaxMemory       Size              `yaml:"max_memory"`
	ExecTTL         time.Duration     `yaml:"exec_ttl"`
	AllocateTimeout time.Duration     `yaml:"allocate_timeout"`
	DestroyTimeout  time.Duration     `yaml:"destroy_timeout"`
	QueueSize       int               `yaml:"queue_size"`
	Pipeline        int               `yaml:"pipeline"`
	Fibers          bool              `yaml:"fibers"`
	FiberReuse      bool              `yaml:"fiber_reuse"`
	FiberIO         bool              `yaml:"fiber_io"` // with Fibers: socket streams and sleep() suspend only their Fiber (docs/fibers.md)
	MaxConcurrency  int               `yaml:"max_concurrency"`
	MaxFrameSize    Size              `yaml:"max_frame_size"`
	PHP             PHPConfig         `yaml:"php"`
	RespawnBackoff  BackoffConfig     `yaml:"respawn_backoff"`
	// Leak watch (development, CI): workers report the state requests leave behind.
	LeakWatch       bool `yaml:"leak_watch"`
	LeakWatchEvery  int  `yaml:"leak_watch_every"`  // check after every Nth request (and the next, when something moved)
	LeakWatchWarmup int  `yaml:"leak_watch_warmup"` // requests served before the baseline snapshot
	// GET paths each worker replays after warm-up and again later, comparing the bodies.
	LeakWatchReplay []string `yaml:"leak_watch_replay"`
}

// PHPConfig becomes -d flags on the php command line; see Config.PHPArgs.
type PHPConfig struct {
	Opcache bool              `yaml:"opcache"`
	Preload string            `yaml:"preload"`
	JIT     string            `yaml:"jit"`
	Ini     map[string]string `yaml:"ini"`
	// Extension is auto, on, off or a path to ferry.so; see extension.go.
	Extension string `yaml:"extension"`
}

// BackoffConfig bounds the delay before restarting a worker that died; the
// delay doubles per consecutive failure so a broken script cannot spin a core.
type BackoffConfig struct {
	Min time.Duration `yaml:"min"`
	Max time.Duration `yaml:"max"`
}

// AdminConfig is the local control socket, and the TCP addresses that
// serve metrics and health checks to scrapers and load balancers.
type AdminConfig struct {
	Socket         string `yaml:"socket"`
	MetricsAddress string `yaml:"metrics_address"` // "": metrics only on the socket
	HealthAddress  string `yaml:"health_address"`  // "": /health and /ready only on the socket
}

// TracingConfig exports an OpenTelemetry span per request (internal/observe/trace.go).
type TracingConfig struct {
	Enabled     bool    `yaml:"enabled"`
	Endpoint    string  `yaml:"endpoint"`     // OTLP/HTTP traces URL
	ServiceName string  `yaml:"service_name"` // resource service.name
	SampleRatio float64 `yaml:"sample_ratio"` // share of new traces kept, 0-1
}

// AccessLogConfig writes a line per request (internal/observe/accesslog.go).
type AccessLogConfig struct {
	Enabled bool   `yaml:"enabled"`
	Format  string `yaml:"format"` // json or combined
	Path    string `yaml:"path"`   // a file, reopened on SIGUSR1, or stderr
}

// LogConfig is the server's own log.
type LogConfig struct {
	Level  string `yaml:"level"`
	Format string `yaml:"format"`
	Output string `yaml:"output"`
}

// Default returns the configuration used when a key is absent. It runs the
// bundled hello-world app from the repository root.
func Default() *Config {
	return &Config{
		Server: ServerConfig{
			Address:           "127.0.0.1:8080",
			Mode:              ModeFront,
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       60 * time.Second,
			WriteTimeout:      60 * time.Second,
			IdleTimeout:       120 * time.Second,
			MaxBodySize:       8 * MiB,
			MaxHeaderSize:     64 * KiB,
			MaxHeaders:        100,
			MaxConnections:    10000,
			BodyBufferSize:    1 * MiB,
			AccessLog:         AccessLogConfig{Format: "json", Path: "stderr"},
			Tracing:           TracingConfig{Endpoint: "http://127.0.0.1:4318/v1/traces", ServiceName: "ferry", SampleRatio: 1},
			RequestID:         false,
			Watch:             []string{},
			TrustedProxies:    []string{},
			UnderscoreHeaders: false,
			Static: StaticConfig{
				Prefix: "/",
				Forbid: []string{".php", ".htaccess"},
			},
			Uploads: UploadsConfig{MaxFiles: 20, MaxParts: 1000, MaxPartHeaderSize: 16 * KiB, Forbid: []string{}},
			Compression: CompressionConfig{
				Enabled: false, MinSize: 1 * KiB, Algorithms: []string{"zstd", "br", "gzip"},
				Types: []string{
					"text/*", "application/json", "application/*+json", "application/javascript",
					"application/xml", "application/*+xml", "application/x-ndjson", "image/svg+xml", "application/wasm",
				},
			},
			HTTP2: HTTP2Config{MaxConcurrentStreams: 250},
		},
		Pool: PoolConfig{
			Command:         []string{"php", "examples/hello/worker.php"},
			Env:             map[string]string{},
			Relay:           RelayPipes,
			Protocol:        ProtocolFerry,
			Boot:            BootFork,
			ScaleUpAfter:    10 * time.Millisecond,
			ScaleDownAfter:  10 * time.Second,
			ExecTTL:         60 * time.Second,
			AllocateTimeout: 60 * time.Second,
			DestroyTimeout:  5 * time.Second,
			QueueSize:       1024,
			Pipeline:        32,
			MaxConcurrency:  64,
			FiberReuse:      true,
			MaxFrameSize:    64 * MiB,
			PHP: PHPConfig{
				Opcache:   true,
				Ini:       map[string]string{},
				Extension: ExtensionAuto,
			},
			RespawnBackoff:  BackoffConfig{Min: 100 * time.Millisecond, Max: 5 * time.Second},
			LeakWatchEvery:  250,
			LeakWatchWarmup: 10,
			LeakWatchReplay: []string{},
		},
		Admin: AdminConfig{Socket: "ferry.sock"},
		Log:   LogConfig{Level: "info", Format: "text", Output: "stderr"},
	}
}

// Load reads a YAML file and returns the checked configuration. Error
// messages start with path:line so they can be pasted into an editor.
func Load(path string) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("config: %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("config: %s: file is larger than %d bytes; is this really a config file?", path, MaxFileSize)
	}
	return parse(data, path, baseDir(path))
}

// Parse decodes YAML over Default(), expands environment variables, and
// validates. source names the input in error messages (usually the file path).
// An empty document gives the defaults. Relative paths stay relative to the
// working directory; Load makes them relative to the file's directory.
func Parse(data []byte, source string) (cfg *Config, err error) {
	return parse(data, source, "")
}

// parse is Parse with the relative paths resolved against base (paths.go).
func parse(data []byte, source, base string) (cfg *Config, err error) {
	root, err := parseYAML(data, source)
	if err != nil {
		return nil, err
	}
	cfg = Default()
	cfg.source = source
	cfg.lines = map[string]int{}
	var errs Errors
	if root != nil {
		d := decoder{source: source, lines: cfg.lines, lookup: os.LookupEnv}
		d.decodeRoot(root, cfg)
		errs = d.errs
	}
	cfg.resolvePaths(base)
	// Validate even after decode errors so one run reports every problem;
	// a key that failed to decode kept its default, which is valid, so it
	// is not reported twice.
	if verr, ok := cfg.Validate().(Errors); ok && !errs.full() {
		for _, e := range verr {
			errs.add(e)
		}
	}
	if len(errs) > 0 {
		errs.sortByLine()
		return nil, errs
	}
	return cfg, nil
}

// parseYAML returns the top-level node of the single document in data, or nil
// when data holds no document.
func parseYAML(data []byte, source string) (root *yaml.Node, err error) {
	// yaml.v3 is third-party code fed with user input; a panic in it must
	// become an error, not bring the server down at start-up.
	defer func() {
		if r := recover(); r != nil {
			root, err = nil, Errors{{Source: source, Msg: fmt.Sprintf("invalid YAML: %v", r)}}
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, yamlError(source, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, yamlError(source, err)
		}
		return nil, Errors{{Source: source, Line: extra.Line, Msg: "only one YAML document is allowed (found a second '---')"}}
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}
