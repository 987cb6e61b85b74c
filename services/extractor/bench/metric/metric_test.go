package metric

import (
	"math"
	"slices"
	"testing"
)

func TestTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"punctuation splits", "It's 3.5 o'clock, a_b!", []string{"It", "s", "3", "5", "o", "clock", "a_b"}},
		{"unicode letters and numbers", "Ünïcode 日本語 ½ ١٢", []string{"Ünïcode", "日本語", "½", "١٢"}},
		// Python's \w does not match combining marks.
		{"combining marks split", "e\u0301t", []string{"e", "t"}},
		{"empty", "  ", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Tokens(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("Tokens(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestCompare(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		truth, pred string
		tp, fp, fn  float64
		exact       bool
	}{
		// Truth a b c d e: shingles abcd, bcde. Prediction a b c d x:
		// abcd, bcdx. TP 1, FP 1, FN 1.
		{"one word differs", "a b c d e", "a b c d x", 1.0 / 3, 1.0 / 3, 1.0 / 3, false},
		{"identical up to punctuation", "a, b. c d!", "a b c d", 1, 0, 0, true},
		// Truth has 2 shingles, the prediction adds 3 more of its own
		// (c d e f, d e f g, e f g h): TP 2, FP 3.
		{"extra text", "a b c d e", "a b c d e f g h", 2.0 / 5, 3.0 / 5, 0, false},
		// Repeated shingles count as a multiset: truth x y z w twice gives
		// xyzw 2, yzwx, zwxy and wxyz 1 each; prediction once gives xyzw 1.
		{"multiset", "x y z w x y z w", "x y z w", 1.0 / 5, 0, 4.0 / 5, false},
		// Fewer than four tokens make one short shingle.
		{"short texts", "a b", "a b", 1, 0, 0, true},
		{"nothing predicted", "a b c d", "", 0, 0, 1, false},
		{"both empty", "", "", 0, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := Compare(tt.truth, tt.pred)
			if !near(p.TP, tt.tp) || !near(p.FP, tt.fp) || !near(p.FN, tt.fn) || p.Exact != tt.exact {
				t.Errorf("Compare = %+v, want TP %v FP %v FN %v exact %v", p, tt.tp, tt.fp, tt.fn, tt.exact)
			}
		})
	}
}

func TestAggregate(t *testing.T) {
	t.Parallel()
	pages := []Page{
		Compare("a b c d e", "a b c d x"),       // P 1/2, R 1/2
		Compare("a b c d e", "a b c d e f g h"), // P 2/5, R 1
		Compare("a b c d", ""),                  // no P, R 0
		Compare("a b", "a b"),                   // P 1, R 1, exact
		Compare("", ""),                         // counted for accuracy only
	}
	got := Aggregate(pages)
	p := (0.5 + 0.4 + 1) / 3
	r := (0.5 + 1 + 0 + 1) / 4
	want := Score{F1: 2 * p * r / (p + r), Precision: p, Recall: r, Accuracy: 2.0 / 5}
	if !near(got.F1, want.F1) || !near(got.Precision, want.Precision) || !near(got.Recall, want.Recall) || !near(got.Accuracy, want.Accuracy) {
		t.Errorf("Aggregate = %+v, want %+v", got, want)
	}
}
