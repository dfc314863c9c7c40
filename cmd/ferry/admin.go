package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strings"
	"time"

	"github.com/ferry-php/ferry/internal/pool"
)

// The admin API is HTTP on a unix socket with mode 0600: only the user running
// ferry (or root) can reload it or list its workers.
func startAdmin(path string, p *pool.Pool, o *ops, rl *reloader) (*http.Server, error) {
	if path == "" {
		return nil, nil
	}
	if err := removeStaleSocket(path); err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("admin socket: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /workers", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(p.Workers())
	})
	mux.HandleFunc("GET /workers/retired", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(p.Stats().Retired)
	})
	mux.HandleFunc("POST /reload", func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		restart, err := rl.reload(r.Context())
		var b strings.Builder
		for _, k := range restart {
			fmt.Fprintf(&b, "%s%s changed in the config file and needs a restart: the running value stays\n", warningPrefix, k)
		}
		if err != nil {
			http.Error(w, b.String()+err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(&b, "reloaded %d workers in %s\n", p.Size(), time.Since(start).Round(time.Millisecond))
		io.WriteString(w, b.String())
	})
	mux.HandleFunc("GET /leaks", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(p.Leaks().List())
	})
	o.register(mux)
	// Profiling stays on the private socket: `curl --unix-socket ferry.sock http://f/debug/pprof/profile`.
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		srv.Serve(ln)
		os.Remove(path)
	}()
	return srv, nil
}

// removeStaleSocket clears the way for the admin socket: only a socket that
// nobody listens on any more is removed. Any other file at that path is the
// user's, and a mistyped admin.socket must not delete it.
func removeStaleSocket(path string) error {
	st, err := os.Lstat(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("admin socket: %w", err)
	}
	if st.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("admin socket %s: a file that is not a socket is in the way (%s); remove it or set admin.socket elsewhere", path, st.Mode().Type())
	}
	if c, err := net.Dial("unix", path); err == nil {
		c.Close()
		return fmt.Errorf("admin socket %s is in use: is another ferry running here?", path)
	}
	return os.Remove(path)
}

func adminClient(args []string, name string) (*http.Client, error) {
	cfg, file, err := loadConfigPath(name, args)
	if err != nil {
		return nil, err
	}
	path := cfg.Admin.Socket
	if path == "" {
		return nil, fmt.Errorf("admin.socket is disabled in the config")
	}
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, "unix", path)
			if err != nil {
				return nil, unreachable(path, file, err)
			}
			return c, nil
		},
	}}, nil
}

// unreachable explains a failed dial. Without a config file in the current
// directory the built-in socket path was tried, which is never the app's when
// ferry is run from its checkout (`bin/ferry reload` as the docs wrote it):
// the cure is -c, and the bare dial error did not say so.
func unreachable(path, file string, err error) error {
	if file != "" {
		return fmt.Errorf("cannot reach ferry at %s, the admin.socket of %s (is `ferry serve` running with this config?): %w", path, file, err)
	}
	wd, _ := os.Getwd()
	return fmt.Errorf("cannot reach ferry at %s: no ferry.yaml (nor .rr.yaml) in %s, so the built-in admin socket was tried; "+
		"pass the file ferry serve was started with, -c /path/to/ferry.yaml: %w", path, wd, err)
}

func reload(args []string) error {
	c, err := adminClient(args, "reload")
	if err != nil {
		return fmt.Errorf("nothing reloaded: %w", err)
	}
	resp, err := c.Post("http://ferry/reload", "text/plain", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	// Warnings go to stderr, the outcome to stdout.
	var out strings.Builder
	for _, line := range strings.SplitAfter(string(body), "\n") {
		if strings.HasPrefix(line, warningPrefix) {
			fmt.Fprint(os.Stderr, "ferry: "+line)
		} else {
			out.WriteString(line)
		}
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("reload failed: %s", strings.TrimSpace(out.String()))
	}
	fmt.Print(out.String())
	return nil
}

// warningPrefix starts each line of a reload's answer that names a key
// needing a restart.
const warningPrefix = "warning: "
