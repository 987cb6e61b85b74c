package bench

import (
	"testing"
	"time"
)

// ladder is 1ms, 2ms, ... n ms.
func ladder(n int) []time.Duration {
	s := make([]time.Duration, n)
	for i := range s {
		s[i] = time.Duration(i+1) * time.Millisecond
	}
	return s
}

func TestPercentile(t *testing.T) {
	tests := []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one sample is every percentile", ladder(1), 95, time.Millisecond},
		{"median of ten is the fifth", ladder(10), 50, 5 * time.Millisecond},
		{"median of an odd count is the middle", ladder(5), 50, 3 * time.Millisecond},
		{"p95 of ten is the largest", ladder(10), 95, 10 * time.Millisecond},
		{"p95 of a hundred is the 95th", ladder(100), 95, 95 * time.Millisecond},
		{"p95 of twenty is the 19th", ladder(20), 95, 19 * time.Millisecond},
		{"p95 of 200 is the 190th", ladder(200), 95, 190 * time.Millisecond},
		{"p100 is the largest", ladder(7), 100, 7 * time.Millisecond},
		{"p0 is the smallest", ladder(7), 0, time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.sorted, tt.p); got != tt.want {
				t.Errorf("percentile(%d samples, %v) = %v, want %v", len(tt.sorted), tt.p, got, tt.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	// Out of order, as renders finish; summarize must sort a copy.
	lat := []time.Duration{40 * time.Millisecond, 10 * time.Millisecond, 30 * time.Millisecond, 20 * time.Millisecond}
	s := summarize(lat, 2*time.Second)
	if s.Renders != 4 || s.P50 != 20*time.Millisecond || s.P95 != 40*time.Millisecond {
		t.Errorf("summarize = %+v, want 4 renders, p50 20ms, p95 40ms", s)
	}
	if s.PerMinute != 120 {
		t.Errorf("4 renders in 2s = %v per minute, want 120", s.PerMinute)
	}
	if lat[0] != 40*time.Millisecond {
		t.Errorf("summarize reordered its input: %v", lat)
	}
}

func TestCheckDOM(t *testing.T) {
	// The shell as served must fail the check, or the check proves nothing
	// about the app having run.
	if err := checkDOM([]byte(shell)); err == nil {
		t.Error("checkDOM accepted the unrendered shell")
	}
	rendered := `<html><body><div id="app"><article><p>` + marker + `</p></article><div id="ready"></div></div></body></html>`
	if err := checkDOM([]byte(rendered)); err != nil {
		t.Errorf("checkDOM rejected a rendered page: %v", err)
	}
	noReady := `<html><body><div id="app"><article><p>` + marker + `</p></article></div></body></html>`
	if err := checkDOM([]byte(noReady)); err == nil {
		t.Error("checkDOM accepted a page without #ready")
	}
}
