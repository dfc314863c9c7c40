package config

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/ferry-php/ferry/internal/watch"
)

var accessLogFormats = []string{"json", "combined"}

// observe checks the keys of the access log, drain and the admin's TCP
// listeners.
func (k *checker) observe(s *ServerConfig, a *AdminConfig) {
	al := &s.AccessLog
	k.oneOf("server.access_log.format", al.Format, accessLogFormats)
	switch {
	case al.Path == "":
		k.err("server.access_log.path", "must be stderr or a file path")
	case al.Path != "stderr" && al.Enabled:
		if dir := filepath.Dir(al.Path); dir != "." {
			k.dir("server.access_log.path", dir)
		}
	}
	tr := &s.Tracing
	if u, err := url.Parse(tr.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		k.err("server.tracing.endpoint", "must be an http:// or https:// URL such as http://127.0.0.1:4318/v1/traces, got %q", tr.Endpoint)
	}
	if tr.SampleRatio < 0 || tr.SampleRatio > 1 {
		k.err("server.tracing.sample_ratio", "must be from 0 to 1, got %g", tr.SampleRatio)
	}
	if tr.ServiceName == "" {
		k.err("server.tracing.service_name", "must not be empty")
	}
	k.nonNegDur("server.drain_delay", s.DrainDelay)
	for i, g := range s.Watch {
		k.glob(fmt.Sprintf("server.watch[%d]", i), g)
	}
	if a.MetricsAddress != "" {
		k.address("admin.metrics_address", a.MetricsAddress)
	}
	if a.HealthAddress != "" {
		k.address("admin.health_address", a.HealthAddress)
	}
}

// glob checks a server.watch pattern: each segment must be a valid
// filepath.Match pattern or "**", and the directory it is rooted in must exist.
func (k *checker) glob(path, g string) {
	if g == "" {
		k.err(path, "must not be empty")
		return
	}
	for _, seg := range strings.Split(filepath.ToSlash(g), "/") {
		if _, err := filepath.Match(seg, ""); err != nil && seg != "**" {
			k.err(path, "%q: bad pattern segment %q", g, seg)
			return
		}
	}
	k.dir(path, watch.Root(filepath.ToSlash(filepath.Clean(g))))
}
