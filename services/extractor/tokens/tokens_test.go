package tokens

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCount(t *testing.T) {
	t.Parallel()
	// The figures are tiktoken's o200k_base counts; the reference test
	// below checks each against the tokenizer package as well.
	tests := []struct {
		name string
		in   string
		want int64
	}{
		{"empty", "", 0},
		{"two words", "hello world", 2},
		{"punctuation", "Hello, world!", 4},
		{"common word whole", "simple", 1},
		{"long word in pieces", "internationalization", 2},
		{"digits in threes", "1234567", 3},
		{"paragraph break", "a\n\nb", 3},
		{"double space", "a  b", 3},
		{"html tag", `<a href="x">`, 5},
		{"ellipsis", "...", 1},
		{"cjk", "日本語", 2},
		{"cyrillic", "привет", 2},
		{"accented latin", "café", 2},
		{"combining mark joins its word", "cafe\u0301", 3},
		{"em dash joins the next word", "a—b", 3},
		{"emoji", "😀", 1},
		{"control byte", "a\x00b", 3},
		{"contraction", "don't", 1},
		{"upper-case contraction", "DON'T", 2},
		{"camel case", "HTMLParser's", 3},
		{"sentence", "The 3 quick foxes jumped over 1000 lazy dogs.", 14},
		{"tab joins the word after it", "\t\tindent", 3},
		{"truncation marker", "[… truncated: output exceeded 500 tokens]", 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Count(tt.in); got != tt.want {
				t.Errorf("Count(%q) = %d, want %d", tt.in, got, tt.want)
			}
			if ref := referenceCount(t, tt.in); ref != tt.want {
				t.Errorf("reference count of %q = %d, want %d", tt.in, ref, tt.want)
			}
		})
	}
}

func TestCountInvalidUTF8(t *testing.T) {
	t.Parallel()
	// Each maximal invalid subsequence is one U+FFFD: "a", "��", "b".
	if got := Count("a\xff\xfeb"); got != 3 {
		t.Errorf("Count = %d, want 3", got)
	}
	// An overlong lead and its continuation byte are one subsequence each.
	if got, want := Count("x\xe0\x80y"), Count("x\uFFFD\uFFFDy"); got != want {
		t.Errorf("Count = %d, want %d", got, want)
	}
}

func TestCountBreaksAroundSpaces(t *testing.T) {
	t.Parallel()
	// tiktoken takes a whitespace run up to its last line break as one
	// pre-token, and "\n \n" is a single token of o200k_base. The
	// tokenizer package splits at the first break and counts 4.
	const in = "a\n \n b"
	if got := ourPieces(in); !slices.Equal(got, []string{"a", "\n \n", " b"}) {
		t.Errorf("pieces = %q", got)
	}
	if got := Count(in); got != 3 {
		t.Errorf("Count = %d, want 3", got)
	}
}

// corpus returns the fixture pages and their golden Markdown, and random
// strings built from runes of every class the split pattern tells apart.
func corpus(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, glob := range []string{
		"../extract/testdata/*.html", "../actions/testdata/*.html", "../tables/testdata/*.html",
		"../extract/testdata/golden/*.md",
	} {
		files, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
	}
	if len(out) < 8 {
		t.Fatalf("found %d fixture files", len(out))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		out = append(out, randomText(rng, 1+rng.IntN(60)))
	}
	return out
}

// atoms are the building blocks of random text: letters of every case
// category, marks, numbers, whitespace of every kind, punctuation,
// contractions and invalid bytes.
var atoms = []string{
	"a", "z", "A", "Z", "hello", "World", "HTML", "é", "É", "ß", "ǅ", "ʰ", "ſ",
	"日", "本", "あ", "カ", "한", "ا", "ب", "ж", "Ж", "Ω", "\u0301", "\u0308", "\u093f",
	"0", "7", "123", "½", "²", "Ⅻ", "٣",
	" ", "  ", "\t", "\n", "\r\n", "\r", "\n\n", "\u00a0", "\u3000", "\u2028", "\u0085", "\v", "\f",
	".", ",", "'", "\"", "/", "//", "<", ">", "</", "=\"", "(", ")", "…", "—", "€", "😀", "\u200d",
	"'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'LL", "'ſ", "'x",
	"\xff", "\xe0\x80", "\xc3", "\x00",
}

func randomText(rng *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(atoms[rng.IntN(len(atoms))])
	}
	return b.String()
}

func TestSplitMatchesReference(t *testing.T) {
	t.Parallel()
	for _, s := range corpus(t) {
		s = validUTF8(s)
		if got, want := ourPieces(s), referencePieces(t, s); !slices.Equal(got, want) {
			t.Fatalf("split of %q:\n got  %q\n want %q", s, got, want)
		}
	}
}

func TestCountMatchesReference(t *testing.T) {
	t.Parallel()
	compared := 0
	for _, s := range corpus(t) {
		if !comparable(s) {
			continue
		}
		compared++
		if got, want := Count(s), referenceCount(t, s); got != want {
			t.Fatalf("Count(%q) = %d, reference %d", s, got, want)
		}
	}
	if compared < 1000 {
		t.Errorf("only %d strings compared", compared)
	}
}

func TestCacheAgreesWithVocabulary(t *testing.T) {
	t.Parallel()
	// Texts from cachedFrom bytes up are counted through a pieceCache.
	rng := rand.New(rand.NewPCG(5, 6))
	var b strings.Builder
	for _, s := range corpus(t) {
		b.WriteString(s)
	}
	for b.Len() < 4*cachedFrom {
		b.WriteString(randomText(rng, 100))
	}
	text := validUTF8(b.String())
	enc := o200k()
	var want int64
	for _, piece := range ourPieces(text) {
		want += int64(enc.pieceTokens(piece))
	}
	if got := Count(text); got != want {
		t.Errorf("Count = %d, pieces sum to %d", got, want)
	}
}

func TestMergeHeapAgreesWithScan(t *testing.T) {
	t.Parallel()
	enc := o200k()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 500 {
		piece := randomText(rng, 20+rng.IntN(80))
		if got, want := enc.mergeHeap(piece), enc.mergeScan(piece); got != want {
			t.Fatalf("merge of %q: heap %d, scan %d", piece, got, want)
		}
	}
}

func TestLongPieceScaled(t *testing.T) {
	t.Parallel()
	// A run of one letter is a single pre-token, counted from its first
	// maxPiece bytes.
	part := Count(strings.Repeat("a", maxPiece))
	if got := Count(strings.Repeat("a", 4*maxPiece)); got != 4*part {
		t.Errorf("Count = %d, want %d", got, 4*part)
	}
	if got := Count(strings.Repeat("a", 4*maxPiece+1)); got != 4*part+1 {
		t.Errorf("Count = %d, want %d: a part of a token rounds up", got, 4*part+1)
	}
}

func FuzzCount(f *testing.F) {
	for _, s := range []string{"hello world", "a\n \n b", "don't", "DON'T", "e\u0301\u0301x", "\t\tx", "日本語の文章", "1234567", "x\xe0\x80y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		t.Parallel()
		if len(s) > maxPiece {
			return
		}
		got := Count(s)
		valid := validUTF8(s)
		if !utf8.ValidString(valid) {
			t.Fatalf("validUTF8(%q) = %q", s, valid)
		}
		if p, want := ourPieces(valid), referencePieces(t, valid); !slices.Equal(p, want) {
			t.Fatalf("split of %q:\n got  %q\n want %q", valid, p, want)
		}
		if comparable(s) {
			if want := referenceCount(t, s); got != want {
				t.Fatalf("Count(%q) = %d, reference %d", s, got, want)
			}
		}
	})
}

func TestTruncate(t *testing.T) {
	t.Parallel()
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
		{"between words", "one two three four five", 3, "one two three", true},
		{"trailing whitespace trimmed", "alpha beta   \n\n\ngamma delta", 3, "alpha beta", true},
		{"punctuation stays with its word", "one, two, three, four", 4, "one, two,", true},
		// "internationalization" is 2 tokens: it cannot be cut mid-word.
		{"first word too long", "internationalization rules", 1, "", true},
		{"unspaced script cut between runes", "日本語の文章を書きます", 3, "日本語の", true},
		{"line breaks are word boundaries", "first line\nsecond line\nthird", 4, "first line\nsecond", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
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
	t.Parallel()
	text := strings.Repeat("Lorem ipsum dolor sit amet, consectetur adipiscing elit.\n\n"+
		"- item with `code` and https://example.com/a/very/long/path?query=1\n"+
		"日本語の文章を書きます。Ещё немного текста.\n", 30)
	total := Count(text)
	for budget := int64(1); budget <= total; budget += 5 {
		got, cut := Truncate(text, budget)
		if !cut {
			t.Fatalf("budget %d: not cut", budget)
		}
		if n := Count(got); n > budget {
			t.Fatalf("budget %d: result has %d tokens", budget, n)
		}
		if !strings.HasPrefix(text, got) {
			t.Fatalf("budget %d: result is not a prefix", budget)
		}
		if rest := text[len(got):]; got != "" && !wordBoundary(text, len(got)) {
			t.Fatalf("budget %d: cut mid-word: ...%q | %q...", budget, got[max(0, len(got)-20):], rest[:min(20, len(rest))])
		}
		// Every word of the text is shorter than 10 tokens.
		if got == "" && budget >= 10 {
			t.Fatalf("budget %d: nothing kept", budget)
		}
	}
}
