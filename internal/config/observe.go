package config

import "path/filepath"

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
	k.nonNegDur("server.drain_delay", s.DrainDelay)
	if a.MetricsAddress != "" {
		k.address("admin.metrics_address", a.MetricsAddress)
	}
	if a.HealthAddress != "" {
		k.address("admin.health_address", a.HealthAddress)
	}
}
