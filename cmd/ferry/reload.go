package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/ferry-php/ferry/internal/config"
	"github.com/ferry-php/ferry/internal/pool"
)

// reloader is what SIGHUP, `ferry reload` (POST /reload) and server.watch
// do. As nginx and `caddy reload` do, it reads the config file again and
// checks it; an invalid file changes nothing. What the workers are made of
// (command, environment, PHP flags, their number and limits) is applied by
// starting the new generation with it. The rest (listeners, the front's
// limits, the log) is set up once at start: a change there is named as
// needing a restart and the running value stays.
type reloader struct {
	path      string         // the file serve read; "": the built-in defaults, nothing to read
	leakWatch bool           // serve --leak-watch, which the file does not say
	running   *config.Config // what serve started with: the keys a reload cannot change
	p         *pool.Pool
	fr        *fronts
	log       *slog.Logger
}

// reload returns the keys that changed in the file and need a restart, and
// an error when nothing was reloaded: the file is invalid, or the new
// workers did not boot (the old ones then keep serving).
func (r *reloader) reload(ctx context.Context) ([]string, error) {
	r.fr.reload()
	if r.path == "" {
		return nil, r.p.Reload(ctx)
	}
	next, err := r.read()
	if err != nil {
		r.log.Error("reload refused: the config file is invalid; nothing changed", "file", r.path, "error", err)
		return nil, fmt.Errorf("nothing reloaded, the running configuration stays: %w", err)
	}
	merged, restart := liveChanges(r.running, next)
	for _, k := range restart {
		r.log.Warn("reload: this key changed in the config file and needs a restart; the running value stays", "key", k)
	}
	return restart, r.p.ReloadWith(ctx, poolOptions(merged, r.log).Settings())
}

func (r *reloader) read() (*config.Config, error) {
	next, err := loadConfigFile("reload", r.path)
	if err != nil {
		return nil, err
	}
	if r.leakWatch {
		next.Pool.LeakWatch = true
	}
	if _, err := resolveExtension(next); err != nil {
		return nil, err
	}
	return next, nil
}

// liveChanges is the running config with the keys a reload applies taken
// from next, and the keys where next differs from it otherwise: those need a
// restart. The live keys are those that only shape a worker (its argv,
// environment and working directory, its lifetime limits) and the number of
// workers, elastic bounds included; what the pool shares between generations (relay, protocol, queue,
// pipelining, Fiber mode, frame size) stays, as does everything outside pool.
func liveChanges(running, next *config.Config) (*config.Config, []string) {
	m := *running
	p, n := &m.Pool, &next.Pool
	p.Command, p.Dir, p.Env, p.PHP = n.Command, n.Dir, n.Env, n.PHP
	p.NumWorkers, p.MaxJobs, p.TTL, p.IdleTTL, p.MaxMemory, p.ExecTTL, p.DestroyTimeout =
		n.NumWorkers, n.MaxJobs, n.TTL, n.IdleTTL, n.MaxMemory, n.ExecTTL, n.DestroyTimeout
	p.MaxWorkers, p.ScaleUpAfter, p.ScaleDownAfter = n.MaxWorkers, n.ScaleUpAfter, n.ScaleDownAfter
	p.FiberReuse, p.FiberIO, p.Boot, p.ReforkAfter = n.FiberReuse, n.FiberIO, n.Boot, n.ReforkAfter
	p.LeakWatch, p.LeakWatchEvery, p.LeakWatchWarmup, p.LeakWatchReplay =
		n.LeakWatch, n.LeakWatchEvery, n.LeakWatchWarmup, n.LeakWatchReplay
	m.SetExtensionFile(next.ExtensionFile())
	restart := config.Changed(&m, next)
	// The front applies these two to $_COOKIE itself, with the value it
	// started with; the workers get the new one.
	for _, name := range []string{"max_input_vars", "max_input_nesting_level"} {
		if iniInt(running.Pool.PHP.Ini, name) != iniInt(n.PHP.Ini, name) {
			restart = append(restart, "pool.php.ini."+name)
		}
	}
	return &m, restart
}
