package mapsite

import (
	"math"
	"net/url"
	"slices"
	"strings"
	"unicode"
)

// stopWords carry no topic; a query's other words decide.
var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "the": true, "of": true, "to": true, "in": true, "on": true,
	"for": true, "with": true, "how": true, "what": true, "is": true, "are": true, "do": true,
	"does": true, "i": true, "my": true, "or": true, "by": true, "can": true, "from": true,
}

// words splits text into lower-case runs of letters and digits.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
}

func queryWords(q string) []string {
	var out []string
	for _, w := range words(q) {
		if !stopWords[w] && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

func pathWords(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	return words(u.Path)
}

// Rank orders urls by how well their paths answer query. A query word
// that is a whole word of the path ("install" in /docs/install) counts
// before one that is only part of a path word (/installation); both weigh
// more the fewer URLs have them, so a word every URL shares decides
// nothing. URLs with whole matches come first, then by their partial
// matches; ties, and URLs that match nothing, keep their order.
func Rank(urls []string, query string) []string {
	qs := queryWords(query)
	if len(qs) == 0 {
		return urls
	}
	type scored struct {
		url            string
		whole, partial float64
	}
	paths := make([][]string, len(urls))
	df := make(map[string]int, len(qs))
	for i, u := range urls {
		paths[i] = pathWords(u)
		for _, q := range qs {
			if slices.ContainsFunc(paths[i], func(w string) bool { return strings.Contains(w, q) }) {
				df[q]++
			}
		}
	}
	n := float64(len(urls))
	out := make([]scored, len(urls))
	for i, u := range urls {
		s := scored{url: u}
		for _, q := range qs {
			if df[q] == 0 {
				continue
			}
			weight := math.Log(1 + n/float64(df[q]))
			switch {
			case slices.Contains(paths[i], q):
				s.whole += weight
			case slices.ContainsFunc(paths[i], func(w string) bool { return strings.Contains(w, q) }):
				s.partial += weight
			}
		}
		out[i] = s
	}
	slices.SortStableFunc(out, func(a, b scored) int {
		switch {
		case a.whole != b.whole:
			return cmpDesc(a.whole, b.whole)
		default:
			return cmpDesc(a.partial, b.partial)
		}
	})
	ranked := make([]string, len(out))
	for i, s := range out {
		ranked[i] = s.url
	}
	return ranked
}

func cmpDesc(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}
