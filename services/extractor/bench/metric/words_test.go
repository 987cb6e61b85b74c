package metric

import (
	"slices"
	"testing"
)

func TestWordTokens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"lowercased, punctuation splits", "Hello, WORLD! 3.14 isn't", []string{"hello", "world", "3", "14", "isn", "t"}},
		{"underscores are word characters", "snake_case __init__ a-b", []string{"snake_case", "__init__", "a", "b"}},
		{"letters and numbers of any script", "Café Straße 日本語 ½ ١٢ Ⅻ", []string{"café", "straße", "日本語", "½", "١٢", "ⅻ"}},
		// Python's \w matches no combining mark, spacing or not, so
		// Devanagari vowel signs and the virama split a word.
		{"combining marks split", "e\u0301t हिन्दी", []string{"e", "t", "ह", "न", "द"}},
		// str.lower() turns İ into i and a combining dot.
		{"dotted capital I splits", "İstanbul", []string{"i", "stanbul"}},
		// A capital sigma ending a word lowers to ς, elsewhere to σ; an
		// apostrophe between letters keeps the word going, a combining
		// mark after the sigma does not.
		{"final sigma", "ΟΔΟΣ Οδός ΣΑΣ. Σ ΑΣ'Β ΑΣ\u0301", []string{"οδος", "οδός", "σας", "σ", "ασ", "β", "ας"}},
		{"only punctuation", " -- ... !", nil},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := WordTokens(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("WordTokens(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCompareWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		truth, pred string
		want        WordPage
	}{
		{"identical up to case and punctuation", "The cat, sat.", "the CAT sat", WordPage{1, 1, 1}},
		// Truth: the 2, cat, and, hat (5 tokens). Prediction: the 3, cat
		// (4 tokens). Overlap: the 2 + cat 1 = 3. P 3/4, R 3/5,
		// F1 = 2·(3/4)(3/5)/(3/4+3/5) = 0.9/1.35 = 2/3.
		{"repeated words count as a multiset", "the cat and the hat", "the the the cat", WordPage{3.0 / 4, 3.0 / 5, 2.0 / 3}},
		// Truth: apple 2. Prediction: apple 1. P 1, R 1/2, F1 2/3.
		{"missing repetition", "Apple apple", "APPLE", WordPage{1, 1.0 / 2, 2.0 / 3}},
		// Order does not matter to a bag of words.
		{"order ignored", "a b c", "c b a", WordPage{1, 1, 1}},
		{"no overlap", "a b", "c d", WordPage{0, 0, 0}},
		{"nothing predicted", "a b", "", WordPage{0, 0, 0}},
		{"prediction of punctuation only", "a b", " ... ", WordPage{0, 0, 0}},
		{"empty truth, empty prediction", "", "", WordPage{1, 1, 1}},
		{"truth without tokens, empty prediction", " -- ", "", WordPage{1, 1, 1}},
		{"empty truth, something predicted", "", "menu", WordPage{0, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := CompareWords(tt.truth, tt.pred)
			if !near(got.Precision, tt.want.Precision) || !near(got.Recall, tt.want.Recall) || !near(got.F1, tt.want.F1) {
				t.Errorf("CompareWords(%q, %q) = %+v, want %+v", tt.truth, tt.pred, got, tt.want)
			}
		})
	}
}

func TestAggregateWords(t *testing.T) {
	t.Parallel()
	pages := []WordPage{
		CompareWords("", ""), // 1, 1, 1
		CompareWords("the cat and the hat", "the the the cat"), // 3/4, 3/5, 2/3
		CompareWords("a b", ""),                                // 0, 0, 0
	}
	got := AggregateWords(pages)
	// Means over the three pages, F1 included: (1 + 2/3 + 0)/3 = 5/9,
	// not the harmonic mean of the mean precision and recall.
	want := WordScore{F1: 5.0 / 9, Precision: 1.75 / 3, Recall: 1.6 / 3}
	if !near(got.F1, want.F1) || !near(got.Precision, want.Precision) || !near(got.Recall, want.Recall) {
		t.Errorf("AggregateWords = %+v, want %+v", got, want)
	}
	if got := AggregateWords(nil); got != (WordScore{}) {
		t.Errorf("AggregateWords(nil) = %+v, want zero", got)
	}
}
