// Package metric scores extracted text against ground truth with two
// benchmarks' own metrics. The scrapinghub article-extraction-benchmark's
// (Compare, Aggregate): tokens are the matches of \w+, each page is
// compared as multisets of 4-token shingles, and precision and recall are
// averaged over pages before F1 is taken. WCXB's (CompareWords,
// AggregateWords): lowercased \w+ tokens compared as bags of words, F1
// averaged over pages.
package metric

import (
	"strings"
	"unicode"
)

// shingleSize is the benchmark's n-gram length.
const shingleSize = 4

// Tokens returns the matches of Python's Unicode \w+ in s, case kept.
func Tokens(s string) []string {
	var out []string
	start := -1
	for i, r := range s {
		if isWord(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, s[start:i])
			start = -1
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// isWord matches Python's \w on str patterns: what str.isalnum() accepts
// (letters and characters with a numeric value) and the underscore.
// Combining marks are not word characters there, so they are not here.
func isWord(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r)
}

// shingles counts the 4-token shingles of toks. A text shorter than a
// shingle is one shingle of all its tokens, as in the benchmark.
func shingles(toks []string) map[string]int {
	out := make(map[string]int, len(toks))
	if len(toks) == 0 {
		return out
	}
	// \x00 never occurs in a token, so joined keys cannot collide.
	for i := range max(1, len(toks)-shingleSize+1) {
		out[strings.Join(toks[i:min(i+shingleSize, len(toks))], "\x00")]++
	}
	return out
}

// Page is one page's comparison, TP, FP and FN normalised to sum to 1
// (all zero when both texts are empty).
type Page struct {
	TP, FP, FN float64
	// Exact reports whether the two texts have the same tokens.
	Exact bool
}

// F1 is the page's own F1, for ranking pages; the benchmark's F1 is not
// the mean of these.
func (p Page) F1() float64 {
	if p.TP+p.FP+p.FN == 0 {
		return 0
	}
	return 2 * p.TP / (2*p.TP + p.FP + p.FN)
}

// precision and recall follow the benchmark: a page with nothing extra and
// nothing missing scores 1 for both.
func (p Page) precision() float64 {
	switch {
	case p.FP == 0 && p.FN == 0:
		return 1
	case p.TP == 0 && p.FP == 0:
		return 0
	}
	return p.TP / (p.TP + p.FP)
}

func (p Page) recall() float64 {
	switch {
	case p.FP == 0 && p.FN == 0:
		return 1
	case p.TP == 0 && p.FN == 0:
		return 0
	}
	return p.TP / (p.TP + p.FN)
}

// Compare scores a prediction against the truth.
func Compare(truth, pred string) Page {
	tt, pt := Tokens(truth), Tokens(pred)
	a, b := shingles(tt), shingles(pt)
	var tp, fp, fn int
	for k, x := range a {
		y := b[k]
		tp += min(x, y)
		fn += max(0, x-y)
	}
	for k, y := range b {
		fp += max(0, y-a[k])
	}
	p := Page{Exact: equal(tt, pt)}
	if s := float64(tp + fp + fn); s > 0 {
		p.TP, p.FP, p.FN = float64(tp)/s, float64(fp)/s, float64(fn)/s
	}
	return p
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Score is a corpus's figures.
type Score struct {
	F1, Precision, Recall, Accuracy float64
}

// Aggregate combines page comparisons: precision is the mean over pages
// that predicted something or matched, recall the mean over pages whose
// truth has text, F1 the harmonic mean of the two means.
func Aggregate(pages []Page) Score {
	var s Score
	var pSum, rSum float64
	var pN, rN, exact int
	for _, p := range pages {
		if p.TP+p.FP > 0 {
			pSum += p.precision()
			pN++
		}
		if p.TP+p.FN > 0 {
			rSum += p.recall()
			rN++
		}
		if p.Exact {
			exact++
		}
	}
	if pN > 0 {
		s.Precision = pSum / float64(pN)
	}
	if rN > 0 {
		s.Recall = rSum / float64(rN)
	}
	if s.Precision+s.Recall > 0 {
		s.F1 = 2 * s.Precision * s.Recall / (s.Precision + s.Recall)
	}
	if len(pages) > 0 {
		s.Accuracy = float64(exact) / float64(len(pages))
	}
	return s
}
