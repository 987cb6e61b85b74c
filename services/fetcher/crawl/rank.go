package crawl

import (
	"slices"
	"strings"

	"distill.dev/services/platform/relevance"
)

// matches reports whether a text word stands for query word q: the same
// word, or, for words long enough to carry a stem, one that begins with it
// ("retry" in "retryable", "timeout" in "timeoutms"). The stemmer takes
// the common endings off; this meets the words it leaves longer.
func matches(w, q string) bool {
	return w == q || len(q) >= 4 && strings.HasPrefix(w, q)
}

// has reports whether any of ws stands for q.
func has(ws []string, q string) bool {
	return slices.ContainsFunc(ws, func(w string) bool { return matches(w, q) })
}

func count(ws []string, q string) int {
	n := 0
	for _, w := range ws {
		if matches(w, q) {
			n++
		}
	}
	return n
}

// ranker scores links and pages against a question. Words are split,
// stemmed and weighed as the relevance package does (the extractor's
// --query and the site map rank by it too); a question's are its
// relevance.QueryWords. Their weights come from the pages read so far: a
// question word most pages hold (the product's name, on every page of its
// docs) says little about where the answer is; one few pages hold says
// much.
type ranker struct {
	query []string
	// pages is how many pages were read; df how many of them hold each
	// query word.
	pages int
	df    map[string]int
}

func newRanker(query string) *ranker {
	qs := relevance.QueryWords(query)
	if len(qs) == 0 {
		return nil
	}
	return &ranker{query: qs, df: map[string]int{}}
}

// weightsWith are each query word's weight (its relevance.IDF) and their
// sum, with the page being rated (which holds the query words present)
// counted among the pages seen.
func (r *ranker) weightsWith(present []string) ([]float64, float64) {
	w := make([]float64, len(r.query))
	var sum float64
	pages := r.pages + 1
	for i, q := range r.query {
		df := r.df[q]
		if slices.Contains(present, q) {
			df++
		}
		w[i] = relevance.IDF(pages, df)
		sum += w[i]
	}
	return w, sum
}

// seen counts a page read, by the query words it holds; present is
// what present found in the page's words.
func (r *ranker) seen(present []string) {
	r.pages++
	for _, q := range present {
		r.df[q]++
	}
}

// present lists the query words a page's words hold.
func (r *ranker) present(ws []string) []string {
	var out []string
	for _, q := range r.query {
		if has(ws, q) {
			out = append(out, q)
		}
	}
	return out
}

// relevance rates how well a page answers the question, 0 to 1: each
// query word counts by its weight, fully when the title holds it or the
// text holds it twice, half when the text holds it once. The page itself
// (present: its query words) counts among the pages seen, so a word it
// shares with every page read so far weighs as little there as on them.
func (r *ranker) relevance(title, text, present []string) float64 {
	w, sum := r.weightsWith(present)
	if sum == 0 {
		return 0
	}
	var got float64
	for i, q := range r.query {
		m := min(1, float64(count(text, q))/2)
		if has(title, q) {
			m = 1
		}
		got += w[i] * m
	}
	return got / sum
}

// Where a query word is found says how much a link promises: in the
// words the link is shown with most, in its path less, in the paragraph
// around it least.
const (
	anchorWeight  = 3
	pathWeight    = 2
	contextWeight = 1
	// parentShare is how much of a link's score is its page's relevance:
	// a relevant page tends to link to others, even in words the
	// question does not use.
	parentShare = 0.3
)

// link scores a link 0 to 1 from its anchor text, its URL path, the
// paragraph it stands in and the relevance of the page it is on.
func (r *ranker) link(anchor, path, context string, parent float64, present []string) float64 {
	w, sum := r.weightsWith(present)
	if sum == 0 {
		return parentShare * parent
	}
	a, p, c := relevance.Words(anchor), relevance.Words(path), relevance.Words(context)
	var got float64
	for i, q := range r.query {
		var m float64
		if has(a, q) {
			m += anchorWeight
		}
		if has(p, q) {
			m += pathWeight
		}
		if has(c, q) {
			m += contextWeight
		}
		got += w[i] * m
	}
	own := got / (sum * (anchorWeight + pathWeight + contextWeight))
	return (1-parentShare)*own + parentShare*parent
}

// maxContext bounds the paragraph a link is judged by: a page of one long
// paragraph would otherwise lend every link all its words.
const maxContext = 600

// contexts maps each link target of a page's Markdown (as written there)
// to the paragraph it stands in. Text output has no link targets: links
// are then found by their anchor text (see contextOf).
func paragraphs(content string) []string {
	var out []string
	for p := range strings.SplitSeq(content, "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// contextOf is the paragraph of content that holds the link to href, or
// failing that its anchor text, cut to maxContext characters around it.
func contextOf(paras []string, href, anchor string) string {
	for _, p := range paras {
		if i := strings.Index(p, "]("+href); i >= 0 {
			return around(p, i)
		}
	}
	if strings.TrimSpace(anchor) == "" {
		return ""
	}
	for _, p := range paras {
		if i := strings.Index(p, anchor); i >= 0 {
			return around(p, i)
		}
	}
	return ""
}

func around(p string, i int) string {
	if len(p) <= maxContext {
		return p
	}
	from := max(0, i-maxContext/2)
	to := min(len(p), from+maxContext)
	return p[from:to]
}

// answered tracks --stop-when-answered: a page rated at least
// answeredAt, followed by answeredAfter pages rated no higher, means the
// best answer the crawl will find is in hand.
type answered struct {
	best  float64
	since int
}

const (
	answeredAt    = 0.8
	answeredAfter = 8
)

// page counts one page's relevance; it returns true once the crawl may
// stop.
func (a *answered) page(rel float64) bool {
	switch {
	case rel >= answeredAt && rel > a.best:
		a.best, a.since = rel, 0
	case a.best >= answeredAt:
		a.since++
	}
	return a.best >= answeredAt && a.since >= answeredAfter
}
