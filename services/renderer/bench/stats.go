package bench

import (
	"math"
	"slices"
	"time"
)

// summary is one way of rendering's figures.
type summary struct {
	Renders   int
	Wall      time.Duration
	PerMinute float64
	P50, P95  time.Duration
}

// summarize reads latencies, one per render, of renders that together took
// wall.
func summarize(latencies []time.Duration, wall time.Duration) summary {
	s := slices.Clone(latencies)
	slices.Sort(s)
	sum := summary{Renders: len(s), Wall: wall, P50: percentile(s, 50), P95: percentile(s, 95)}
	if wall > 0 {
		sum.PerMinute = float64(len(s)) / wall.Minutes()
	}
	return sum
}

// percentile returns the nearest-rank p-th percentile of sorted: the
// smallest sample that at least p percent of the samples do not exceed.
// Unlike interpolation it always names a render that happened.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	// p*n before the division keeps whole ranks exact in floating point.
	rank := int(math.Ceil(p * float64(len(sorted)) / 100))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
