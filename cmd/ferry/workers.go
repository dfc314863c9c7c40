package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ferry-php/ferry/internal/pool"
)

// workerList is what `ferry workers --json` prints.
type workerList struct {
	Workers []pool.Info    `json:"workers"`
	Retired []pool.Retired `json:"retired"` // the latest to exit, oldest first
}

// workers lists the live workers and the latest retired ones:
// `ferry workers [-c ferry.yaml] [--json]`.
func workers(args []string) error {
	asJSON, rest := jsonFlag(args)
	c, err := adminClient(rest, "workers")
	if err != nil {
		return err
	}
	var l workerList
	if err := getJSON(c, "/workers", &l.Workers); err != nil {
		return err
	}
	if err := getJSON(c, "/workers/retired", &l.Retired); err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(l)
	}
	return printWorkers(os.Stdout, l, time.Now())
}

func getJSON(c *http.Client, path string, v any) error {
	resp, err := c.Get("http://ferry" + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return fmt.Errorf("%s: %s: %s", path, resp.Status, strings.TrimSpace(string(body)))
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// printWorkers writes the tables. CPU% is the worker's average since it
// started, over one core.
func printWorkers(w io.Writer, l workerList, now time.Time) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PID\tSTATE\tJOBS\tIN FLIGHT\tCPU%\tRSS\tPSS\tUSS\tUPTIME\tREASON")
	for _, x := range l.Workers {
		up := now.Sub(x.Started)
		cpu := 0.0
		if up > 0 {
			cpu = 100 * x.CPU / up.Seconds()
		}
		reason := x.Reason
		if reason == "" {
			reason = "-"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%.1f\t%s\t%s\t%s\t%s\t%s\n", x.PID, x.State, x.Jobs, x.InFlight,
			cpu, mib(x.RSS), mib(x.PSS), mib(x.USS), up.Round(time.Second), reason)
	}
	if len(l.Retired) > 0 {
		fmt.Fprintln(tw, "\nRETIRED\tREASON\tJOBS\tLIVED\tENDED")
		for i := len(l.Retired) - 1; i >= 0; i-- { // newest first
			r := l.Retired[i]
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s ago\n", r.PID, r.Reason, r.Jobs,
				r.Ended.Sub(r.Started).Round(time.Millisecond), now.Sub(r.Ended).Round(time.Second))
		}
	}
	return tw.Flush()
}

// mib shows a memory figure; "-" for one /proc did not give (PSS and USS
// need smaps_rollup, Linux 4.14).
func mib(n uint64) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
