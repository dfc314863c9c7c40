// Command ferry runs PHP applications on a pool of long-lived workers.
package main

import (
	"fmt"
	"os"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

const usage = `ferry: run PHP applications on long-lived workers

Usage:
  ferry serve   [-c ferry.yaml] [--leak-watch]
                                  start the HTTP server and the worker pool
                                  (--leak-watch: pool.leak_watch, for development)
  ferry reload  [-c ferry.yaml]   reread the server's config file and replace every
                                  worker gracefully (no request fails)
  ferry workers [-c ferry.yaml]   list workers: pid, state, jobs, RSS, uptime
  ferry leaks   [-c ferry.yaml] [--json]
                                  what the leak watch found: state requests leave behind
  ferry version                   print the version

Without -c, ferry.yaml in the current directory is used when present, else the
defaults (the hello example on 127.0.0.1:8080). Relative paths in the file are
relative to its directory. See docs/config.md.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "reload":
		err = reload(os.Args[2:])
	case "workers":
		err = workers(os.Args[2:])
	case "leaks":
		err = leaksCmd(os.Args[2:])
	case "version", "-v", "--version":
		fmt.Println("ferry", version)
	case "help", "-h", "--help":
		fmt.Print(usage)
	default:
		fmt.Fprintf(os.Stderr, "ferry: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ferry:", err)
		os.Exit(1)
	}
}
