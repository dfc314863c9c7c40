package config

// direct checks server.mode and what server.mode: direct rules out. In
// direct mode the PHP workers accept the HTTP/1.1 connections of
// server.address themselves (ext/ferry's event loop), so whatever the front
// would do on that address cannot happen there. Each refusal names the key
// and why, rather than leaving a setting that silently does nothing.
//
// Every pool.relay kind works: the listening socket is the workers' fd 3,
// given before the relay's own descriptors (pipes then are 4 and 5), so no
// relay kind is in its way. pool.boot: fork works too (the zygote inherits
// the socket, and so does every worker it forks).
func (k *checker) direct(c *Config) {
	s, p := &c.Server, &c.Pool
	k.oneOf("server.mode", s.Mode, []string{ModeFront, ModeDirect})
	if !s.Direct() {
		return
	}
	if p.Protocol != ProtocolFerry {
		k.at([]string{"pool.protocol", "server.mode"},
			"server.mode: direct needs Ferry's own workers (pool.protocol: ferry, with ext/ferry), got %q: RoadRunner workers stay in server.mode: front", p.Protocol)
	}
	if s.HTTP2.H2C {
		k.at([]string{"server.http2.h2c", "server.mode"},
			"h2c is served on server.address, which in server.mode: direct the PHP workers serve in HTTP/1.1: turn it off, or serve HTTP/2 on server.tls.address")
	}
	if s.TLS.Redirect {
		k.at([]string{"server.tls.redirect", "server.mode"},
			"the redirect is answered on server.address, which in server.mode: direct the PHP workers serve: redirect in the proxy in front, or use server.mode: front")
	}
	if s.Static.Dir != "" && s.TLS.Address == "" {
		k.at([]string{"server.static.dir", "server.mode"},
			"static files are served by the front, and in server.mode: direct the front serves only server.tls.address, which is not set: serve them from the proxy in front, or use server.mode: front")
	}
	if p.ReforkAfter > 0 {
		k.at([]string{"pool.refork_after", "server.mode"},
			"a direct-mode worker holds client connections, which a mold must not hand down to the workers forked from it: leave pool.refork_after at 0")
	}
	if p.IdleTTL > 0 {
		k.at([]string{"pool.idle_ttl", "server.mode"},
			"in server.mode: direct the server does not see the requests a worker serves itself, so it cannot tell an idle worker from a busy one: use pool.ttl or pool.max_jobs")
	}
}
