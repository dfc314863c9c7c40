package main

import (
	"math"
	"slices"
	"time"
)

// Summary is a latency distribution in milliseconds.
type Summary struct {
	N    int     `json:"n"`
	Min  float64 `json:"min"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p99.9"`
	Max  float64 `json:"max"`
}

// summarize sorts lat in place; nil when there is no sample, so that an empty class
// shows as null rather than as a latency of zero.
func summarize(lat []time.Duration) *Summary {
	if len(lat) == 0 {
		return nil
	}
	slices.Sort(lat)
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	return &Summary{
		N:    len(lat),
		Min:  ms(lat[0]),
		Mean: ms(sum) / float64(len(lat)),
		P50:  ms(percentile(lat, 50)),
		P90:  ms(percentile(lat, 90)),
		P99:  ms(percentile(lat, 99)),
		P999: ms(percentile(lat, 99.9)),
		Max:  ms(lat[len(lat)-1]),
	}
}

// percentile is the nearest-rank percentile of sorted: the smallest sample that at
// least p percent of the samples do not exceed. It is always a measured value.
func percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

func ms(d time.Duration) float64 {
	return float64(d) / float64(time.Millisecond)
}
