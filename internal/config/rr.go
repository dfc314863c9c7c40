package config

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/ferry-php/ferry/internal/protocol/protocols"
	"gopkg.in/yaml.v3"
)

// Values of pool.protocol (internal/protocol/protocols lists them all).
const (
	ProtocolFerry          = "ferry"
	ProtocolRoadRunner     = "roadrunner"      // http.v1.Request in protobuf (roadrunner-http 3.5 and later)
	ProtocolRoadRunnerJSON = "roadrunner-json" // the JSON context of roadrunner-http before 3.5
)

func (k *checker) protocol(p *PoolConfig) {
	k.oneOf("pool.protocol", p.Protocol, protocols.Names())
	if e, ok := protocols.Lookup(p.Protocol); ok && e.Protocol.Traits().Sequential && p.Fibers {
		k.at([]string{"pool.protocol", "pool.fibers"}, "%s workers run one request at a time: pool.fibers must be off", e.Title)
	}
}

// IsRoadRunnerFile tells a RoadRunner configuration from a ferry.yaml: by its
// name (.rr.yaml, .rr.dev.yaml, rr.yml, ...) or by its shape, a top-level
// version key (which ferry.yaml does not have) beside server or http.
func IsRoadRunnerFile(path string, data []byte) bool {
	base := strings.ToLower(filepath.Base(path))
	if (strings.HasPrefix(base, ".rr") || strings.HasPrefix(base, "rr.")) &&
		(strings.HasSuffix(base, ".yaml") || strings.HasSuffix(base, ".yml")) {
		return true
	}
	root, err := parseYAML(data, path)
	if err != nil || root == nil || root.Kind != yaml.MappingNode {
		return false
	}
	keys := map[string]bool{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		keys[root.Content[i].Value] = true
	}
	return keys["version"] && (keys["server"] || keys["http"])
}

// rrReader walks a .rr.yaml, keeping what it maps and naming what it does not.
type rrReader struct {
	source  string
	errs    Errors
	ignored []string
}

func (r *rrReader) fail(n *yaml.Node, path, format string, args ...any) {
	r.errs.add(&Error{Source: r.source, Line: n.Line, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// fields calls fn for the keys of mapping n it knows and adds the others, by
// path, to the ignored list.
func (r *rrReader) fields(n *yaml.Node, path string, fn map[string]func(*yaml.Node, string)) {
	if n == nil || isNull(n) {
		return
	}
	if n.Kind != yaml.MappingNode {
		r.fail(n, path, "must be a mapping, got %s", kindName(n))
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i].Value, n.Content[i+1]
		for v.Kind == yaml.AliasNode {
			v = v.Alias
		}
		p := join(path, k)
		if f, ok := fn[k]; ok {
			f(v, p)
		} else {
			r.ignored = append(r.ignored, p)
		}
	}
}

func (r *rrReader) str(n *yaml.Node, path string) (string, bool) {
	if n.Kind != yaml.ScalarNode {
		r.fail(n, path, "must be a string, got %s", kindName(n))
		return "", false
	}
	s, err := expandEnv(n.Value, os.LookupEnv)
	if err != nil {
		r.fail(n, path, "%v", err)
		return "", false
	}
	return s, true
}

func (r *rrReader) num(n *yaml.Node, path string, set func(int)) {
	if s, ok := r.str(n, path); ok {
		i, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || i < 0 {
			r.fail(n, path, "must be a whole number >= 0, got %q", s)
			return
		}
		set(i)
	}
}

func (r *rrReader) setStr(n *yaml.Node, path string, dst *string) {
	if v, ok := r.str(n, path); ok {
		*dst = v
	}
}

func (r *rrReader) flag(n *yaml.Node, path string, dst *bool) {
	if v, ok := r.str(n, path); ok {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			r.fail(n, path, "must be true or false, got %q", v)
			return
		}
		*dst = b
	}
}

func (r *rrReader) dur(n *yaml.Node, path string, set func(time.Duration)) {
	if s, ok := r.str(n, path); ok {
		d, err := parseDuration(s)
		if err != nil {
			r.fail(n, path, "%v", err)
			return
		}
		set(d)
	}
}

// ParseRoadRunner reads the part of a RoadRunner v3 configuration that maps
// onto Ferry (docs/roadrunner.md) over Default(), with pool.protocol set to
// roadrunner. ignored names every other key, sections first, so that nothing
// is dropped silently.
func ParseRoadRunner(data []byte, source string) (cfg *Config, ignored []string, err error) {
	return parseRoadRunner(data, source, "")
}

func parseRoadRunner(data []byte, source, base string) (cfg *Config, ignored []string, err error) {
	root, err := parseYAML(data, source)
	if err != nil {
		return nil, nil, err
	}
	cfg = Default()
	cfg.source, cfg.lines = source, map[string]int{}
	cfg.Pool.Protocol = ProtocolRoadRunner
	r := &rrReader{source: source}
	if root == nil {
		return nil, nil, Errors{{Source: source, Msg: "empty RoadRunner configuration: server.command is required"}}
	}
	p, s := &cfg.Pool, &cfg.Server
	haveCommand := false
	r.fields(root, "", map[string]func(*yaml.Node, string){
		"version": func(n *yaml.Node, path string) {
			if v, ok := r.str(n, path); ok && v != "3" && !strings.HasPrefix(v, "3.") {
				r.fail(n, path, "Ferry reads RoadRunner configuration version \"3\", got %q", v)
			}
		},
		"server": func(n *yaml.Node, path string) {
			r.fields(n, path, map[string]func(*yaml.Node, string){
				"command": func(n *yaml.Node, path string) { haveCommand = r.command(n, path, p) },
				"env":     func(n *yaml.Node, path string) { r.env(n, path, p) },
				"relay":   func(n *yaml.Node, path string) { r.relay(n, path, p) },
			})
		},
		"http": func(n *yaml.Node, path string) { r.http(n, path, cfg) },
		// Ferry serves no RPC; the address still reaches the worker as
		// RR_RPC, as RoadRunner gives it, for code that reads it at boot.
		"rpc": func(n *yaml.Node, path string) {
			r.ignored = append(r.ignored, path)
			if n.Kind != yaml.MappingNode {
				return
			}
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == "listen" {
					if v, ok := r.str(n.Content[i+1], path+".listen"); ok {
						p.Env["RR_RPC"] = v
					}
				}
			}
		},
		"logs": func(n *yaml.Node, path string) {
			r.fields(n, path, map[string]func(*yaml.Node, string){
				"level": func(n *yaml.Node, path string) {
					if v, ok := r.str(n, path); ok {
						cfg.Log.Level = rrLevel(v)
					}
				},
			})
		},
	})
	if !haveCommand && len(r.errs) == 0 {
		r.errs.add(&Error{Source: source, Path: "server.command", Msg: "is required: the worker RoadRunner would start"})
	}
	// A body must fit in one frame.
	if s.MaxBodySize+MiB > p.MaxFrameSize {
		p.MaxFrameSize = s.MaxBodySize + MiB
	}
	cfg.resolvePaths(base)
	if verr, ok := cfg.Validate().(Errors); ok {
		for _, e := range verr {
			r.errs.add(e)
		}
	}
	if len(r.errs) > 0 {
		r.errs.sortByLine()
		return nil, nil, r.errs
	}
	sort.SliceStable(r.ignored, func(i, j int) bool {
		return strings.Count(r.ignored[i], ".") < strings.Count(r.ignored[j], ".")
	})
	return cfg, r.ignored, nil
}

func (r *rrReader) command(n *yaml.Node, path string, p *PoolConfig) bool {
	var argv []string
	switch n.Kind {
	case yaml.ScalarNode:
		s, ok := r.str(n, path)
		if !ok {
			return false
		}
		argv = strings.Fields(s)
	case yaml.SequenceNode:
		for i, item := range n.Content {
			if s, ok := r.str(item, fmt.Sprintf("%s[%d]", path, i)); ok {
				argv = append(argv, s)
			}
		}
	default:
		r.fail(n, path, "must be a string or a list, got %s", kindName(n))
		return false
	}
	if len(argv) == 0 {
		r.fail(n, path, "is empty")
		return false
	}
	p.Command = argv
	return true
}

// env accepts RoadRunner's map and its older list of "KEY=value" strings.
func (r *rrReader) env(n *yaml.Node, path string, p *PoolConfig) {
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if v, ok := r.str(n.Content[i+1], join(path, n.Content[i].Value)); ok {
				p.Env[n.Content[i].Value] = v
			}
		}
	case yaml.SequenceNode:
		for i, item := range n.Content {
			if s, ok := r.str(item, fmt.Sprintf("%s[%d]", path, i)); ok {
				k, v, _ := strings.Cut(s, "=")
				p.Env[k] = v
			}
		}
	default:
		if !isNull(n) {
			r.fail(n, path, "must be a mapping of names to values, got %s", kindName(n))
		}
	}
}

// relay maps RoadRunner's relay onto Ferry's: the kind is kept, the address
// is Ferry's own (a private socket or a free port on 127.0.0.1), since the
// server tells the worker where it is through RR_RELAY anyway.
func (r *rrReader) relay(n *yaml.Node, path string, p *PoolConfig) {
	v, ok := r.str(n, path)
	if !ok {
		return
	}
	switch {
	case v == "pipes" || v == "":
		p.Relay = RelayPipes
	case strings.HasPrefix(v, "tcp://"):
		p.Relay = RelayTCP
	case strings.HasPrefix(v, "unix://"):
		p.Relay = RelayUnix
	default:
		r.fail(n, path, "must be pipes, tcp://host:port or unix://path, got %q", v)
	}
}

func (r *rrReader) http(n *yaml.Node, path string, cfg *Config) {
	p, s := &cfg.Pool, &cfg.Server
	supervisor := map[string]func(*yaml.Node, string){
		"max_worker_memory": func(n *yaml.Node, path string) {
			r.num(n, path, func(mb int) { p.MaxMemory = Size(mb) * MiB })
		},
		"ttl":      func(n *yaml.Node, path string) { r.dur(n, path, func(d time.Duration) { p.TTL = d }) },
		"idle_ttl": func(n *yaml.Node, path string) { r.dur(n, path, func(d time.Duration) { p.IdleTTL = d }) },
		"exec_ttl": func(n *yaml.Node, path string) { r.dur(n, path, func(d time.Duration) { p.ExecTTL = d }) },
	}
	r.fields(n, path, map[string]func(*yaml.Node, string){
		"address": func(n *yaml.Node, path string) {
			if v, ok := r.str(n, path); ok {
				s.Address = v
			}
		},
		"max_request_size": func(n *yaml.Node, path string) {
			r.num(n, path, func(mb int) {
				if mb > 0 {
					s.MaxBodySize = Size(mb) * MiB
				}
			})
		},
		"pool": func(n *yaml.Node, path string) {
			// RoadRunner's dynamic_allocator.max_workers counts the workers
			// added to num_workers; Ferry's max_workers counts them all.
			extra := 0
			dynamic := map[string]func(*yaml.Node, string){
				"max_workers":  func(n *yaml.Node, path string) { r.num(n, path, func(i int) { extra = i }) },
				"idle_timeout": func(n *yaml.Node, path string) { r.dur(n, path, func(d time.Duration) { p.ScaleDownAfter = d }) },
			}
			r.fields(n, path, map[string]func(*yaml.Node, string){
				"num_workers":       func(n *yaml.Node, path string) { r.num(n, path, func(i int) { p.NumWorkers = i }) },
				"max_jobs":          func(n *yaml.Node, path string) { r.num(n, path, func(i int) { p.MaxJobs = i }) },
				"allocate_timeout":  func(n *yaml.Node, path string) { r.dur(n, path, func(d time.Duration) { p.AllocateTimeout = d }) },
				"destroy_timeout":   func(n *yaml.Node, path string) { r.dur(n, path, func(d time.Duration) { p.DestroyTimeout = d }) },
				"supervisor":        func(n *yaml.Node, path string) { r.fields(n, path, supervisor) },
				"dynamic_allocator": func(n *yaml.Node, path string) { r.fields(n, path, dynamic) },
			})
			if extra > 0 {
				floor := p.NumWorkers
				if floor == 0 {
					floor = runtime.NumCPU()
				}
				p.MaxWorkers = floor + extra
			}
		},
		"ssl": func(n *yaml.Node, path string) {
			s.TLS.Address = ":443" // RoadRunner's default
			r.fields(n, path, map[string]func(*yaml.Node, string){
				"address":  func(n *yaml.Node, path string) { r.setStr(n, path, &s.TLS.Address) },
				"cert":     func(n *yaml.Node, path string) { r.setStr(n, path, &s.TLS.Cert) },
				"key":      func(n *yaml.Node, path string) { r.setStr(n, path, &s.TLS.Key) },
				"redirect": func(n *yaml.Node, path string) { r.flag(n, path, &s.TLS.Redirect) },
			})
		},
		"http2": func(n *yaml.Node, path string) {
			r.fields(n, path, map[string]func(*yaml.Node, string){
				"h2c": func(n *yaml.Node, path string) { r.flag(n, path, &s.HTTP2.H2C) },
				"max_concurrent_streams": func(n *yaml.Node, path string) {
					r.num(n, path, func(i int) { s.HTTP2.MaxConcurrentStreams = i })
				},
			})
		},
		"static": func(n *yaml.Node, path string) {
			r.fields(n, path, map[string]func(*yaml.Node, string){
				"dir": func(n *yaml.Node, path string) {
					if v, ok := r.str(n, path); ok {
						s.Static.Dir = v
					}
				},
			})
		},
		// The static middleware is named here; Ferry serves static.dir
		// whenever it is set, so the list itself maps to nothing else.
		"middleware": func(n *yaml.Node, path string) {
			if n.Kind != yaml.SequenceNode {
				return
			}
			for _, m := range n.Content {
				if m.Value != "static" {
					r.ignored = append(r.ignored, path+"."+m.Value)
				}
			}
		},
	})
}

// rrLevel maps RoadRunner's zap levels onto slog's.
func rrLevel(v string) string {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "debug":
		return "debug"
	case "warn", "warning":
		return "warn"
	case "error", "dpanic", "panic", "fatal":
		return "error"
	}
	return "info"
}

// LoadAny reads path as a ferry.yaml or, when IsRoadRunnerFile says so, as a
// RoadRunner configuration; ignored lists what the latter left out.
func LoadAny(path string) (cfg *Config, ignored []string, rr bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, false, fmt.Errorf("config: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	f.Close()
	if err != nil {
		return nil, nil, false, fmt.Errorf("config: %s: %w", path, err)
	}
	if len(data) > MaxFileSize {
		return nil, nil, false, fmt.Errorf("config: %s: file is larger than %d bytes; is this really a config file?", path, MaxFileSize)
	}
	if !IsRoadRunnerFile(path, bytes.TrimSpace(data)) {
		cfg, err = parse(data, path, baseDir(path))
		return cfg, nil, false, err
	}
	cfg, ignored, err = parseRoadRunner(data, path, baseDir(path))
	return cfg, ignored, true, err
}
