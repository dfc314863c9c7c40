package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/ferry-php/ferry/internal/config"
)

// defaultConfigPath is ferry.yaml when present, else RoadRunner's .rr.yaml,
// so that a RoadRunner project serves with `ferry serve` as it did with
// `rr serve`; "" means the built-in defaults.
func defaultConfigPath() string {
	for _, p := range []string{"ferry.yaml", ".rr.yaml"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// loadConfigFile reads a ferry.yaml or a RoadRunner configuration. What the
// latter holds that Ferry does not map is named on one line, never dropped
// silently; only serve says it, reload and workers just need the admin socket.
func loadConfigFile(cmd, path string) (*config.Config, error) {
	cfg, ignored, rr, err := config.LoadAny(path)
	if err != nil {
		return nil, err
	}
	if rr && cmd == "serve" {
		fmt.Fprintf(os.Stderr, "ferry: %s read as a RoadRunner configuration (docs/roadrunner.md)\n", path)
		if len(ignored) > 0 {
			fmt.Fprintf(os.Stderr, "ferry: %s: ignored: %s\n", path, strings.Join(ignored, ", "))
		}
	}
	return cfg, nil
}
