package main

import (
	"testing"
	"time"
)

func TestPercentileIsNearestRank(t *testing.T) {
	var lat []time.Duration
	for i := 100; i >= 1; i-- {
		lat = append(lat, time.Duration(i)*time.Millisecond)
	}
	s := summarize(lat)
	want := Summary{N: 100, Min: 1, Mean: 50.5, P50: 50, P90: 90, P99: 99, P999: 100, Max: 100}
	if *s != want {
		t.Fatalf("summary of 1..100 ms = %+v, want %+v", *s, want)
	}
	one := summarize([]time.Duration{3 * time.Millisecond})
	if one.P50 != 3 || one.P99 != 3 || one.Max != 3 {
		t.Fatalf("one sample: %+v", *one)
	}
	if summarize(nil) != nil {
		t.Fatal("no sample must give no summary")
	}
}

func TestParseClass(t *testing.T) {
	cl, err := parseClass("slow:5:/?us=200000&x=a:b")
	if err != nil || cl != (Class{Name: "slow", Weight: 5, Path: "/?us=200000&x=a:b"}) {
		t.Fatalf("parseClass = %+v, %v", cl, err)
	}
	for _, bad := range []string{"fast", "fast:0:/", "fast:x:/", ":1:/", "fast:1:nopath"} {
		if _, err := parseClass(bad); err == nil {
			t.Errorf("parseClass(%q) accepted", bad)
		}
	}
}

func TestOnlyLoopbackTargets(t *testing.T) {
	for _, ok := range []string{"http://127.0.0.1:80", "http://localhost:8080/", "http://[::1]:1"} {
		if _, err := loopbackHost(ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"http://10.0.0.1:80", "https://127.0.0.1:443", "http://example.com:80", "127.0.0.1:80"} {
		if _, err := loopbackHost(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
