// Command loadgen is the load generator of the bench harness's mixed scenario. It keeps
// N keep-alive connections to one loopback server, each sending requests back to back,
// picks every request's class (a path with a weight) with a seeded random generator,
// and prints JSON with requests per second and latency percentiles per class, which
// wrk cannot report. Standard library only; it stops by itself after -d.
//
//	loadgen -url http://127.0.0.1:8080 -c 50 -d 5s -class fast:95:/?us=1000 -class slow:5:/?us=200000
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Class is one kind of request in the mix.
type Class struct {
	Name   string
	Weight int
	Path   string
}

type classFlags []Class

func (c *classFlags) String() string {
	parts := make([]string, len(*c))
	for i, cl := range *c {
		parts[i] = fmt.Sprintf("%s:%d:%s", cl.Name, cl.Weight, cl.Path)
	}
	return strings.Join(parts, " ")
}

func (c *classFlags) Set(v string) error {
	cl, err := parseClass(v)
	if err != nil {
		return err
	}
	for _, have := range *c {
		if have.Name == cl.Name {
			return fmt.Errorf("class %q given twice", cl.Name)
		}
	}
	*c = append(*c, cl)
	return nil
}

// parseClass reads NAME:WEIGHT:PATH; the path may itself hold colons.
func parseClass(v string) (Class, error) {
	parts := strings.SplitN(v, ":", 3)
	if len(parts) != 3 {
		return Class{}, fmt.Errorf("class %q: want NAME:WEIGHT:PATH", v)
	}
	w, err := strconv.Atoi(parts[1])
	if err != nil || w < 1 {
		return Class{}, fmt.Errorf("class %q: weight must be a positive integer", v)
	}
	if parts[0] == "" || !strings.HasPrefix(parts[2], "/") {
		return Class{}, fmt.Errorf("class %q: want a name and a path starting with /", v)
	}
	return Class{Name: parts[0], Weight: w, Path: parts[2]}, nil
}

// loopbackHost returns host:port of an http:// URL on a loopback address; anything
// else is refused, since the harness must never load a remote machine.
func loopbackHost(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	if u.Scheme != "http" || u.Port() == "" {
		return "", fmt.Errorf("-url %q: want http://HOST:PORT", raw)
	}
	ip := net.ParseIP(u.Hostname())
	if u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", fmt.Errorf("-url %q: only loopback addresses are allowed", raw)
	}
	return u.Host, nil
}

func main() {
	var classes classFlags
	target := flag.String("url", "", "server, http://127.0.0.1:PORT (loopback only)")
	conns := flag.Int("c", 50, "connections, each sending one request at a time")
	duration := flag.Duration("d", 5*time.Second, "how long to send requests")
	timeout := flag.Duration("timeout", 10*time.Second, "a request not answered by then counts as timed out")
	seed := flag.Uint64("seed", 1, "seed of the class choice; connection i uses the stream (seed, i)")
	out := flag.String("o", "", "write the JSON here instead of stdout")
	flag.Var(&classes, "class", "NAME:WEIGHT:PATH, repeatable; requests are drawn by weight")
	flag.Parse()

	host, err := loopbackHost(*target)
	if err == nil && len(classes) == 0 {
		err = errors.New("at least one -class is needed")
	}
	if err == nil && (*conns < 1 || *duration <= 0 || *timeout <= 0) {
		err = errors.New("-c, -d and -timeout must be positive")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(2)
	}
	res := run(Config{Host: host, Conns: *conns, Duration: *duration, Timeout: *timeout, Seed: *seed,
		Classes: classes})
	res.URL = *target
	data, err := json.MarshalIndent(res, "", "  ")
	if err == nil {
		data = append(data, '\n')
		if *out != "" {
			err = os.WriteFile(*out, data, 0o644)
		} else {
			_, err = os.Stdout.Write(data)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}
