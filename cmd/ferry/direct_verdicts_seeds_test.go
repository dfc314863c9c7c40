package main

import (
	"bytes"
	"encoding/json"
	"os"
	"testing"
)

const httpFuzzSeeds = "../../ext/ferry/fuzz/http_seeds.json"

// The HTTP parser's fuzzer (ext/ferry/fuzz.sh) starts from the differential table's
// requests, kept beside it as JSON: this keeps the two the same. FERRY_UPDATE_SEEDS=1
// rewrites the file from the table.
func TestDirectVerdictCasesAreTheFuzzSeeds(t *testing.T) {
	var raws []string
	for _, c := range directVerdictCases() {
		if len(c.raw) <= 8192 { // fuzz.sh's -max_len
			raws = append(raws, c.raw)
		}
	}
	want, err := json.MarshalIndent(raws, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if os.Getenv("FERRY_UPDATE_SEEDS") == "1" {
		if err := os.WriteFile(httpFuzzSeeds, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(httpFuzzSeeds)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s is not the table of direct_verdicts_cases_test.go (%v): run this test with FERRY_UPDATE_SEEDS=1", httpFuzzSeeds, err)
	}
}
