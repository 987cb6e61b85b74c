package mapsite

import (
	"cmp"
	"net/url"
	"slices"
	"strings"

	"distill.dev/services/platform/relevance"
)

// term is a query word as written and its stem (relevance.Stem).
type term struct{ word, stem string }

// queryTerms are the words of q that can tell URLs apart: the relevance
// package's question words, each kept with its spelling as well.
func queryTerms(q string) []term {
	var out []term
	for _, w := range relevance.Split(q) {
		s := relevance.Stem(w)
		if relevance.StopWord(s) || slices.ContainsFunc(out, func(t term) bool { return t.stem == s }) {
			continue
		}
		out = append(out, term{word: w, stem: s})
	}
	return out
}

// urlPath is the words of a URL's path as written, and their stems.
type urlPath struct{ words, stems []string }

func pathOf(raw string) urlPath {
	u, err := url.Parse(raw)
	if err != nil {
		return urlPath{}
	}
	p := urlPath{words: relevance.Split(u.Path)}
	for _, w := range p.words {
		p.stems = append(p.stems, relevance.Stem(w))
	}
	return p
}

// whole reports whether one of the path's words is t as written.
func (p urlPath) whole(t term) bool {
	return slices.Contains(p.words, t.word)
}

// holds reports whether one of the path's words holds t, as written or
// stemmed: /installation holds "install", /retries "retry".
func (p urlPath) holds(t term) bool {
	for i, w := range p.words {
		if strings.Contains(w, t.word) || strings.Contains(p.stems[i], t.stem) {
			return true
		}
	}
	return false
}

// Rank orders urls by how well their paths answer query. A query word
// that is a whole word of the path ("install" in /docs/install) counts
// before one that is only part of a path word, or matches it only once
// both are stemmed (/installation, /installing); both weigh more the fewer
// URLs hold them (relevance.IDF), so a word every URL shares decides
// little. URLs with whole matches come first, then by their partial
// matches; ties, and URLs that match nothing, keep their order. Query
// words are split, stemmed and rid of stop words as the relevance package
// does for every ranking distill makes.
func Rank(urls []string, query string) []string {
	ts := queryTerms(query)
	if len(ts) == 0 {
		return urls
	}
	paths := make([]urlPath, len(urls))
	df := make([]int, len(ts))
	for i, u := range urls {
		paths[i] = pathOf(u)
		for j, t := range ts {
			if paths[i].holds(t) {
				df[j]++
			}
		}
	}
	type scored struct {
		url            string
		whole, partial float64
	}
	out := make([]scored, len(urls))
	for i, u := range urls {
		out[i].url = u
		for j, t := range ts {
			switch w := relevance.IDF(len(urls), df[j]); {
			case paths[i].whole(t):
				out[i].whole += w
			case paths[i].holds(t):
				out[i].partial += w
			}
		}
	}
	slices.SortStableFunc(out, func(a, b scored) int {
		return cmp.Or(cmp.Compare(b.whole, a.whole), cmp.Compare(b.partial, a.partial))
	})
	ranked := make([]string, len(out))
	for i, s := range out {
		ranked[i] = s.url
	}
	return ranked
}
