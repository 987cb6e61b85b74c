// Package query keeps the part of a page that answers a question. Each
// paragraph, list, table, code block and quote is scored against the
// question with BM25 over the page's own blocks (a word that few blocks
// use weighs more), plus a bonus where question words stand next to each
// other in the question's order and one where they stand close together;
// the best blocks are kept under their headings, in page order, within a
// token budget.
package query

import (
	"math"
	"slices"
	"strings"

	"distill.dev/services/extractor/blocks"
	"distill.dev/services/extractor/tokens"
)

// DefaultBudget is the token budget of the kept blocks when the caller
// sets none.
const DefaultBudget = 4000

// keepRatio is how close to the best block's score another block must come
// to be kept: below it a block shares a word with the question but is not
// about it.
const keepRatio = 0.4

// BM25's usual constants: how fast repeats of a word stop counting, and how
// much a long block is discounted.
const (
	k1 = 1.2
	b  = 0.75
	// headingWeight is how much a word of a block's headings counts,
	// against one of its own text.
	headingWeight = 0.5
)

// Result is what Select kept.
type Result struct {
	// Markdown is the kept blocks under their headings, or the page
	// unchanged when nothing matched.
	Markdown string
	// Relevance is the page's relevance to the question, 0 to 1; see
	// Relevance.
	Relevance float64
	// Kept is how many blocks were kept, of Scored that share a word
	// with the question; 0 when the page came back unchanged.
	Kept, Scored int
}

// Select keeps the blocks of md that answer question, within budget
// tokens (DefaultBudget when budget <= 0). When no block shares a word
// with the question, md comes back unchanged.
func Select(md, question string, budget int64) Result {
	if budget <= 0 {
		budget = DefaultBudget
	}
	bs := blocks.Parse(md)
	s := score(bs, question)
	res := Result{Markdown: md, Relevance: s.relevance()}
	var ranked []int
	for i, sc := range s.scores {
		if sc > 0 {
			ranked = append(ranked, i)
		}
	}
	res.Scored = len(ranked)
	if len(ranked) == 0 {
		return res
	}
	slices.SortStableFunc(ranked, func(x, y int) int {
		switch {
		case s.scores[x] > s.scores[y]:
			return -1
		case s.scores[x] < s.scores[y]:
			return 1
		}
		return 0
	})
	best := s.scores[ranked[0]]
	// The best block is always kept; the budget's truncation cuts it if
	// it alone is too long. The others join while they fit, by an
	// estimate (the block, its headings and a separator each) that is
	// never below what the block adds, so the page is rendered and
	// counted once rather than once per candidate.
	keep := map[int]bool{ranked[0]: true}
	used := tokens.Count(render(bs, keep))
	for _, i := range ranked[1:] {
		if s.scores[i] < keepRatio*best || used >= budget {
			break
		}
		cost := tokens.Count(bs[i].Text) + 2
		for _, h := range bs[i].Path {
			cost += tokens.Count(h) + 4
		}
		if used+cost > budget {
			continue
		}
		keep[i] = true
		used += cost
	}
	res.Markdown = render(bs, keep)
	res.Kept = len(keep)
	return res
}

// Relevance says how well md answers question, from 0 (no block shares a
// word with it) to 1 (one block holds every word of the question, in its
// order and close together). It is the best block's share of the
// question's weight, where a question word the page never uses weighs as
// much as the page's rarest, so pages can be compared by it.
func Relevance(md, question string) float64 {
	return score(blocks.Parse(md), question).relevance()
}

// render writes the kept blocks in page order, each under the headings in
// effect above it, every heading once.
func render(bs []blocks.Block, keep map[int]bool) string {
	var out []string
	var stack []int // heading blocks in effect
	written := map[int]bool{}
	for i, b := range bs {
		if b.Kind == blocks.Heading {
			for len(stack) > 0 && bs[stack[len(stack)-1]].Level >= b.Level {
				stack = stack[:len(stack)-1]
			}
			stack = append(stack, i)
			continue
		}
		if !keep[i] {
			continue
		}
		for _, h := range stack {
			if !written[h] {
				written[h] = true
				out = append(out, bs[h].Text)
			}
		}
		out = append(out, b.Text)
	}
	return strings.Join(out, "\n\n")
}

// scored is a page's blocks scored against a question.
type scored struct {
	// terms are the question's words, deduplicated, in order; weight is
	// each one's idf.
	terms  []string
	weight map[string]float64
	scores []float64
	// best is the highest block's coverage of the question, 0 to 1.
	best float64
}

func (s scored) relevance() float64 {
	return math.Round(s.best*1000) / 1000
}

// questionTerms are the question's words less stop words. A question of
// stop words alone has none: every page shares "the" with it, and none is
// about it.
func questionTerms(question string) []string {
	var terms []string
	for _, w := range words(question) {
		if !stopWords[w] && !slices.Contains(terms, w) {
			terms = append(terms, w)
		}
	}
	return terms
}

func scorable(k blocks.Kind) bool {
	return k != blocks.Heading && k != blocks.Rule
}

func score(bs []blocks.Block, question string) scored {
	s := scored{terms: questionTerms(question), weight: map[string]float64{}, scores: make([]float64, len(bs))}
	if len(s.terms) == 0 {
		return s
	}
	docs, df, n, total := countTerms(bs, s.terms)
	if n == 0 {
		return s
	}
	avg := float64(total) / float64(n)
	weightSum := s.setWeights(df, n)
	for i, d := range docs {
		if d != nil {
			s.scoreDoc(i, d, avg, weightSum)
		}
	}
	return s
}

// termDoc is one scorable block's words and how often each question term
// stands in its text (tf) and in its headings (htf).
type termDoc struct {
	words   []string
	tf, htf map[string]int
}

// countTerms counts the question's terms in each scorable block: docs has
// a nil entry for a block that is not scored, df is how many blocks use
// each term, n how many blocks are scored and total their words.
func countTerms(bs []blocks.Block, terms []string) (docs []*termDoc, df map[string]int, n, total int) {
	docs = make([]*termDoc, len(bs))
	df = map[string]int{}
	isTerm := map[string]bool{}
	for _, t := range terms {
		isTerm[t] = true
	}
	for i, b := range bs {
		if !scorable(b.Kind) {
			continue
		}
		d := &termDoc{words: words(b.Text), tf: map[string]int{}, htf: map[string]int{}}
		for _, w := range d.words {
			if isTerm[w] {
				d.tf[w]++
			}
		}
		for _, h := range b.Path {
			for _, w := range words(h) {
				if isTerm[w] {
					d.htf[w]++
				}
			}
		}
		// A word counts as used by a block whose headings hold it too:
		// the page's title heads every block and tells none apart.
		for _, t := range terms {
			if d.tf[t] > 0 || d.htf[t] > 0 {
				df[t]++
			}
		}
		docs[i] = d
		n++
		total += len(d.words)
	}
	return docs, df, n, total
}

// setWeights gives each term its idf over the n scored blocks and returns
// the weights' sum.
func (s *scored) setWeights(df map[string]int, n int) float64 {
	// A word no block uses weighs as much as one used once or less, so a
	// question the page answers only in part scores below one it answers
	// whole.
	var weightSum float64
	for _, t := range s.terms {
		s.weight[t] = math.Log(1 + (float64(n)-float64(df[t])+0.5)/(float64(df[t])+0.5))
		weightSum += s.weight[t]
	}
	return weightSum
}

// scoreDoc scores block i, whose terms are d, into s.scores and raises
// s.best to the block's coverage of the question; avg is the scored
// blocks' mean length in words.
func (s *scored) scoreDoc(i int, d *termDoc, avg, weightSum float64) {
	var sc, covered float64
	for _, t := range s.terms {
		tf := float64(d.tf[t]) + headingWeight*float64(d.htf[t])
		if tf == 0 {
			continue
		}
		sc += s.weight[t] * tf * (k1 + 1) / (tf + k1*(1-b+b*float64(len(d.words))/max(avg, 1)))
		if d.tf[t] > 0 {
			covered += s.weight[t]
		} else {
			covered += headingWeight * s.weight[t]
		}
	}
	if sc == 0 {
		return
	}
	phrase, near := closeness(d.words, s.terms)
	// Both bonuses scale with the words' weight, so a run of common
	// words earns little.
	sc += covered * (0.5*phrase + 0.5*near)
	s.scores[i] = sc
	if weightSum > 0 {
		c := covered / weightSum * (0.75 + 0.125*phrase + 0.125*near)
		if len(s.terms) == 1 {
			c = covered / weightSum
		}
		s.best = max(s.best, min(c, 1))
	}
}

// closeness measures how the question's terms sit in a block's words:
// phrase is the share of the question's adjacent term pairs that stand
// next to each other in the block in the same order, near the number of
// distinct terms matched over the shortest span of words holding them
// all (1 when they are consecutive). Both are 0 for fewer than two terms.
func closeness(ws, terms []string) (phrase, near float64) {
	if len(terms) < 2 {
		return 0, 0
	}
	idx := map[string]int{}
	for i, t := range terms {
		idx[t] = i
	}
	pairs := map[int]bool{}
	for i := 1; i < len(ws); i++ {
		a, okA := idx[ws[i-1]]
		b, okB := idx[ws[i]]
		if okA && okB && b == a+1 {
			pairs[a] = true
		}
	}
	phrase = float64(len(pairs)) / float64(len(terms)-1)

	// The shortest window holding every distinct term the block has.
	present := map[int]bool{}
	for _, w := range ws {
		if i, ok := idx[w]; ok {
			present[i] = true
		}
	}
	if len(present) < 2 {
		return phrase, 0
	}
	count := map[int]int{}
	have, bestSpan := 0, len(ws)+1
	left := 0
	for right, w := range ws {
		if i, ok := idx[w]; ok {
			if count[i] == 0 {
				have++
			}
			count[i]++
		}
		for have == len(present) {
			if span := right - left + 1; span < bestSpan {
				bestSpan = span
			}
			if i, ok := idx[ws[left]]; ok {
				count[i]--
				if count[i] == 0 {
					have--
				}
			}
			left++
		}
	}
	near = float64(len(present)) / float64(bestSpan)
	return phrase, near
}
