package metric

import (
	"strings"
	"unicode"
)

// WordTokens returns the tokens the WCXB benchmark compares: the matches
// of Python's Unicode \w+ in the text after Python's str.lower().
func WordTokens(s string) []string {
	return Tokens(pyLower(s))
}

// pyLower is Python's str.lower(): the simple lowercase mapping of each
// character but for the two places where Python applies Unicode's full
// mapping instead. Both change tokens: İ becomes i and a combining dot,
// which \w does not match, and a capital sigma ending a word becomes ς.
func pyLower(s string) string {
	if !needsSpecialLower(s) {
		return strings.ToLower(s)
	}
	rs := []rune(s)
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i, r := range rs {
		switch r {
		case 'İ':
			b.WriteString("i\u0307")
		case 'Σ':
			if finalSigma(rs, i) {
				b.WriteRune('ς')
			} else {
				b.WriteRune('σ')
			}
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

func needsSpecialLower(s string) bool {
	return strings.ContainsRune(s, 'İ') || strings.ContainsRune(s, 'Σ')
}

// finalSigma is Unicode's Final_Sigma condition for rs[i], as Python
// tests it: a cased letter comes before (skipping case-ignorable
// characters) and none comes after.
func finalSigma(rs []rune, i int) bool {
	j := i - 1
	for j >= 0 && caseIgnorable(rs[j]) {
		j--
	}
	if j < 0 || !cased(rs[j]) {
		return false
	}
	j = i + 1
	for j < len(rs) && caseIgnorable(rs[j]) {
		j++
	}
	return j == len(rs) || !cased(rs[j])
}

// cased is Unicode's Cased property: Lowercase, Uppercase or titlecase.
func cased(r rune) bool {
	return unicode.In(r, unicode.Lu, unicode.Ll, unicode.Lt, unicode.Other_Lowercase, unicode.Other_Uppercase)
}

// caseIgnorable is Unicode's Case_Ignorable property: marks, format
// characters, modifiers, and the apostrophes, periods and colons that
// may sit inside a word.
func caseIgnorable(r rune) bool {
	switch r {
	case '\'', '.', ':', '\u00B7', '\u0387', '\u055F', '\u05F4', '\u2018', '\u2019', '\u2024', '\u2027',
		'\uFE13', '\uFE52', '\uFE55', '\uFF07', '\uFF0E', '\uFF1A':
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk)
}

// WordPage is one page's word-level comparison.
type WordPage struct {
	Precision, Recall, F1 float64
}

// CompareWords scores a prediction against the truth as the WCXB benchmark
// does: tokens are bags, overlap counts each token at most as often as it
// occurs in both, and precision and recall divide it by the prediction's
// and the truth's token counts. An empty truth is matched only by an
// empty prediction.
func CompareWords(truth, pred string) WordPage {
	tt, pt := WordTokens(truth), WordTokens(pred)
	switch {
	case len(tt) == 0 && len(pt) == 0:
		return WordPage{Precision: 1, Recall: 1, F1: 1}
	case len(tt) == 0 || len(pt) == 0:
		return WordPage{}
	}
	counts := make(map[string]int, len(tt))
	for _, t := range tt {
		counts[t]++
	}
	overlap := 0
	for _, t := range pt {
		if counts[t] > 0 {
			counts[t]--
			overlap++
		}
	}
	p := WordPage{
		Precision: float64(overlap) / float64(len(pt)),
		Recall:    float64(overlap) / float64(len(tt)),
	}
	if overlap > 0 {
		p.F1 = 2 * p.Precision * p.Recall / (p.Precision + p.Recall)
	}
	return p
}

// WordScore is a corpus's word-level figures: each the mean over pages.
type WordScore struct {
	F1, Precision, Recall float64
}

// AggregateWords averages page comparisons; unlike the shingle metric,
// the benchmark's F1 is the mean of the pages' F1, not the harmonic mean
// of the means.
func AggregateWords(pages []WordPage) WordScore {
	var s WordScore
	if len(pages) == 0 {
		return s
	}
	for _, p := range pages {
		s.F1 += p.F1
		s.Precision += p.Precision
		s.Recall += p.Recall
	}
	n := float64(len(pages))
	s.F1 /= n
	s.Precision /= n
	s.Recall /= n
	return s
}
