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
	asJSON := false
	rest := make([]string, 0, len(args))
	for _, a := range args {
		if a == "--json" || a == "-json" {
			asJSON = true
			continue
		}
		rest = append(rest, a)
	}
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

// writeLeakMetrics counts the distinct findings by kind.
func writeLeakMetrics(w io.Writer, s *leaks.Store) {
	kinds, dropped := s.Kinds()
	fmt.Fprintln(w, "# TYPE ferry_leak_findings_total counter")
	for _, k := range kinds {
		fmt.Fprintf(w, "ferry_leak_findings_total{kind=%q} %d\n", k.Kind, k.Count)
	}
	if dropped > 0 {
		fmt.Fprintln(w, "# TYPE ferry_leak_findings_dropped_total counter")
		fmt.Fprintf(w, "ferry_leak_findings_dropped_total %d\n", dropped)
	}
}
