package crawl

import (
	"math"
	"slices"
	"strings"
	"unicode"
)

// stopWords carry no topic: a question's other words decide.
var stopWords = map[string]bool{
	"a": true, "an": true, "and": true, "the": true, "of": true, "to": true, "in": true, "on": true,
	"for": true, "with": true, "how": true, "what": true, "is": true, "are": true, "do": true,
	"does": true, "i": true, "my": true, "or": true, "by": true, "can": true, "from": true,
	"which": true, "when": true, "where": true, "why": true, "it": true, "be": true, "at": true,
}

// words splits text into lower-case runs of letters and digits, each cut
// to its stem.
func words(text string) []string {
	ws := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
	for i, w := range ws {
		ws[i] = stem(w)
	}
	return ws
}

// stem takes the plural and verb endings off an English word, lightly,
// and then a final e, so that "retries" finds "retry", "rotating" and
// "rotates" find "rotate" and "timeouts" "timeout". It is not a full
// stemmer: matches also takes a word that begins with a query word.
func stem(w string) string {
	switch n := len(w); {
	case n > 4 && strings.HasSuffix(w, "ies"):
		w = w[:n-3] + "y"
	case n > 5 && strings.HasSuffix(w, "ing"):
		w = w[:n-3]
	case n > 4 && strings.HasSuffix(w, "ed"):
		w = w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		w = w[:n-1]
	}
	if len(w) > 4 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}

// queryWords are the words of a question that can tell pages apart.
func queryWords(q string) []string {
	var out []string
	for _, w := range words(q) {
		if !stopWords[w] && w != "" && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// matches reports whether a text word stands for query word q: the same
// word, or, for words long enough to carry a stem, one that begins with it
// ("retry" in "retrying", "configure" in "configured").
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

// ranker scores links and pages against a question. Its word weights come
// from the pages read so far: a question word most pages hold (the
// product's name, on every page of its docs) says little about where the
// answer is; one few pages hold says much.
type ranker struct {
	query []string
	// pages is how many pages were read; df how many of them hold each
	// query word.
	pages int
	df    map[string]int
}

func newRanker(query string) *ranker {
	qs := queryWords(query)
	if len(qs) == 0 {
		return nil
	}
	return &ranker{query: qs, df: map[string]int{}}
}

// weightsWith are each query word's weight and their sum, with the page
// being rated (which holds the query words present) counted among the
// pages seen.
func (r *ranker) weightsWith(present []string) ([]float64, float64) {
	w := make([]float64, len(r.query))
	var sum float64
	pages := r.pages + 1
	for i, q := range r.query {
		df := r.df[q]
		if slices.Contains(present, q) {
			df++
		}
		w[i] = math.Log(1 + float64(pages+1)/float64(df+1))
		sum += w[i]
	}
	return w, sum
}

// seen counts a page read, by the query words it holds; present is
// what pageWords found.
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
	a, p, c := words(anchor), words(path), words(context)
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
