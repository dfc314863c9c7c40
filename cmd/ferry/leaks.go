package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/ferry-php/ferry/internal/leaks"
)

// leaksCmd prints what the running server's leak watch has found
// (pool.leak_watch): `ferry leaks [-c ferry.yaml] [--json]`.
func leaksCmd(args []string) error {
	asJSON, rest := jsonFlag(args)
	c, err := adminClient(rest, "leaks")
	if err != nil {
		return err
	}
	resp, err := c.Get("http://ferry/leaks")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("leaks: %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	var fs []leaks.Finding
	if err := json.NewDecoder(resp.Body).Decode(&fs); err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(fs)
	}
	_, err = fmt.Print(leaks.Text(fs))
	return err
}

// jsonFlag takes --json (or -json) out of a verb's arguments; the rest go to
// the flag set that reads -c.
func jsonFlag(args []string) (bool, []string) {
	asJSON := false
	rest := make([]string, 0, len(args))
	for _, a := range args {
		if a == "--json" || a == "-json" {
			asJSON = true
			continue
		}
		rest = append(rest, a)
	}
	return asJSON, rest
}
