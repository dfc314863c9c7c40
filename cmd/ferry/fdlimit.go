package main

import (
	"log/slog"
	"syscall"

	"github.com/ferry-php/ferry/internal/config"
)

// connectionBudget is server.max_connections as the descriptor limit allows
// it. Connections the limit cannot hold would make accept fail (the front
// waits that out) and, worse, take the descriptors a worker respawn, a
// spooled body or a static file needs: so the budget leaves those their
// share and is lowered, with a warning, when max_connections does not fit.
//
// The soft limit is already the hard one here: Go raises it at start (and
// gives children the original back, since PHP's select() breaks on
// descriptors above 1024). So raising the hard limit (LimitNOFILE= under
// systemd, ulimit -Hn) is what makes room.
func connectionBudget(cfg *config.Config, log *slog.Logger) int {
	want := cfg.Server.MaxConnections
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
		return want
	}
	// Each worker holds a relay (up to two pipes) and its stderr; a reload
	// runs two generations at once; listeners, logs, the admin socket and
	// files being served take the rest.
	reserve := 64 + 2*4*cfg.Pool.NumWorkers
	fit := max(int(rl.Cur)-reserve, 1)
	if want != 0 && want <= fit {
		return want
	}
	if want == 0 {
		return fit // "no limit" is the descriptor limit's
	}
	log.Warn("server.max_connections does not fit under the file descriptor limit: lowered so that workers and files keep theirs; raise the limit (LimitNOFILE= with systemd, ulimit -n) to allow more",
		"max_connections", want, "lowered_to", fit, "nofile_soft", rl.Cur, "nofile_hard", rl.Max, "reserved", reserve)
	return fit
}
