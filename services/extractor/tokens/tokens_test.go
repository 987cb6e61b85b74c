package tokens

import (
	"strings"
	"testing"
)

func TestCount(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int64
	}{
		{"empty", "", 0},
		{"short word", "hello", 1},
		{"two words", "hello world", 2},
		{"punctuation", "Hello, world!", 4},
		{"six letters stay whole", "simple", 1},
		{"seven letters split", "content", 2},
		{"long word split every four", "internationalization", 5},
		{"digits in threes", "1234567", 3},
		{"paragraph break", "a\n\nb", 3},
		{"double space", "a  b", 3},
		{"html tag", `<a href="x">`, 6},
		{"punctuation run in pairs", "...", 2},
		{"cjk per rune", "日本語", 3},
		{"cyrillic per three letters", "привет", 2},
		{"accented latin is a word", "café", 1},
		{"combining mark joins word", "cafe\u0301", 1},
		{"em dash", "a—b", 3},
		{"emoji", "😀", 1},
		{"control bytes are space", "a\x00b", 2},
		{"mixed sentence", "The 3 quick foxes jumped over 1000 lazy dogs.", 11},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Count(tt.in); got != tt.want {
				t.Errorf("Count(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestCountInvalidUTF8(t *testing.T) {
	// Invalid bytes decode as U+FFFD, a symbol: one token each.
	if got := Count("a\xff\xfeb"); got != 4 {
		t.Errorf("Count = %d, want 4", got)
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		max     int64
		want    string
		wantCut bool
	}{
		{"within budget", "one two", 2, "one two", false},
		{"empty", "", 5, "", false},
		{"zero budget", "one", 0, "", true},
		{
			name:    "paragraph boundary",
			in:      "one two three\n\nfour five six\n\nseven eight",
			max:     7,
			want:    "one two three\n\nfour five six",
			wantCut: true,
		},
		{
			name:    "line boundary",
			in:      "one two three\nfour five six\nseven eight",
			max:     8,
			want:    "one two three\nfour five six",
			wantCut: true,
		},
		{
			name:    "word boundary when the paragraph would waste budget",
			in:      "aa bb\n\ncc dd ee ff gg hh ii jj",
			max:     8,
			want:    "aa bb\n\ncc dd ee ff gg",
			wantCut: true,
		},
		{
			name:    "single long word cut inside",
			in:      "internationalization",
			max:     2,
			want:    "internatio",
			wantCut: true,
		},
		{
			name:    "cjk cut inside a run of runes",
			in:      "日本語の文章",
			max:     4,
			want:    "日本語の",
			wantCut: true,
		},
		{
			name:    "trailing whitespace trimmed",
			in:      "alpha beta   \n\n\ngamma delta epsilon",
			max:     3,
			want:    "alpha beta",
			wantCut: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, cut := Truncate(tt.in, tt.max)
			if got != tt.want || cut != tt.wantCut {
				t.Errorf("Truncate(%q, %d) = %q, %v; want %q, %v", tt.in, tt.max, got, cut, tt.want, tt.wantCut)
			}
			if n := Count(got); n > tt.max && tt.max > 0 {
				t.Errorf("result has %d tokens, over the budget of %d", n, tt.max)
			}
		})
	}
}

func TestTruncateAlwaysWithinBudget(t *testing.T) {
	text := strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit.\n\n"+
		"- item with `code` and https://example.com/a/very/long/path?query=1\n", 50)
	for max := int64(1); max <= Count(text); max += 7 {
		got, cut := Truncate(text, max)
		if !cut {
			t.Fatalf("max %d: not cut", max)
		}
		if n := Count(got); n > max {
			t.Fatalf("max %d: result has %d tokens", max, n)
		}
		if !strings.HasPrefix(text, got) {
			t.Fatalf("max %d: result is not a prefix", max)
		}
	}
}
