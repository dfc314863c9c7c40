package config

import (
	"strings"
	"testing"
)

// FuzzParse checks that no input makes Parse panic or return both a config
// and an error, and that every error is located (starts with the source).
// Run longer with: go test -fuzz=FuzzParse -fuzztime=60s ./internal/config/
func FuzzParse(f *testing.F) {
	seeds := []string{
		"",
		"server:\n  address: 127.0.0.1:8080\n",
		"pool:\n  command: php w.php\n  env: {A: ${HOME:-x}}\n",
		"pool:\n  max_jobs: -3\n  ttl: 5\n",
		"a: &a {<<: *a}\n",
		"server: &s {static: *s}\n",
		"pool:\n  php:\n    ini: {<<: [{a: 1}, {b: 2}]}\n",
		"- [\n",
		"server: {max_body_size: 99999999999999999999TiB}\n",
		"log: {level: ${X:-${Y}}}\n",
		"? [a]\n: b\n",
		"!!binary aGVsbG8=\n",
		"a: 1\n---\nb: 2\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data, "fuzz.yaml")
		if (c == nil) == (err == nil) {
			t.Fatalf("Parse returned config %v and error %v", c != nil, err)
		}
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, "fuzz.yaml") {
					t.Fatalf("error line without source: %q", line)
				}
			}
		}
	})
}

// The .rr.yaml reader holds to the same contract: a config or an error whose
// every line names the file.
func FuzzParseRoadRunner(f *testing.F) {
	for _, s := range []string{
		"version: \"3\"\nserver:\n  command: php worker.php\nhttp:\n  address: 127.0.0.1:8080\n  pool: {num_workers: 2}\n",
		"version: \"3\"\nserver: {command: [php, w.php], relay: pipes}\nrpc: {listen: tcp://127.0.0.1:6001}\nkv: {}\n",
		"version: \"2.7\"\n",
		"version: \"3\"\nhttp: {pool: {supervisor: {max_worker_memory: -1}}}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, _, err := ParseRoadRunner(data, ".rr.yaml")
		if (c == nil) == (err == nil) {
			t.Fatalf("ParseRoadRunner returned config %v and error %v", c != nil, err)
		}
		if err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				if !strings.HasPrefix(line, ".rr.yaml") {
					t.Fatalf("error line without source: %q", line)
				}
			}
		}
	})
}
