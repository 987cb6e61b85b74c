package harness

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"

	"distill.dev/services/extractor/bench/metric"
)

// report prints the overall table, the per-type tables, the speed ratios
// of the first extractor to the others and to the parse-and-walk floor
// (floor pages/s), where the predictions are, and each extractor's worst
// pages per type.
func report(w io.Writer, cfg Config, corpus Corpus, results []Result, floor float64) {
	pages := corpus.Pages
	filter := ""
	if cfg.Type != "" {
		filter = fmt.Sprintf(" of type %s", cfg.Type)
	}
	fmt.Fprintf(w, "corpus %s (%s layout): %d pages%s; one core, sequential, after a warm-up pass; pages/s from the fastest of %d timed rounds on each stretch of %d pages, the extractors taking turns stretch by stretch\n",
		corpus.Dir, corpus.Layout, len(pages), filter, max(cfg.Rounds, 1), stretchPages)
	fmt.Fprintf(w, "word: WCXB's metric, bag of lowercased \\w+ tokens, P, R and F1 averaged per page; shingle: scrapinghub's, 4-token shingles, F1 of the averaged P and R\n\n")

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "extractor\tword F1\tword P\tword R\tshingle F1\tshingle P\tshingle R\taccuracy\tpages/s\terrors\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.1f\t%d\t\n",
			r.Name, r.Words.F1, r.Words.Precision, r.Words.Recall,
			r.Score.F1, r.Score.Precision, r.Score.Recall, r.Score.Accuracy, r.PagesPerSec, r.Errors)
	}
	tw.Flush()

	groups := byType(pages)
	fmt.Fprintln(w, "\nword F1 by page type")
	typeTable(w, groups, results, func(r Result, idx []int) float64 {
		ps := make([]metric.WordPage, len(idx))
		for i, j := range idx {
			ps[i] = r.WordPages[j]
		}
		return metric.AggregateWords(ps).F1
	})
	fmt.Fprintln(w, "\nshingle F1 by page type")
	typeTable(w, groups, results, func(r Result, idx []int) float64 {
		ps := make([]metric.Page, len(idx))
		for i, j := range idx {
			ps[i] = r.Pages[j]
		}
		return metric.Aggregate(ps).F1
	})

	fmt.Fprintln(w)
	for _, r := range results[1:] {
		fmt.Fprintf(w, "speed %s/%s: %.2fx\n", results[0].Name, r.Name, results[0].PagesPerSec/r.PagesPerSec)
	}
	fmt.Fprintf(w, "parse+walk (x/net/html parse and one walk of every node, the floor): %.1f pages/s; time %s/parse+walk: %.2fx\n",
		floor, results[0].Name, floor/results[0].PagesPerSec)

	fmt.Fprintf(w, "\npredictions ({id: text}) in %s/<extractor>.json, each page's type and scores in <extractor>.pages.json; cross-check:\n", cfg.OutDir)
	pred := filepath.Join(cfg.OutDir, results[0].Name+".json")
	if corpus.Layout == WCXB {
		fmt.Fprintf(w, "  python3 evaluate.py --split %s --results %s --per-type   (in the WCXB repository)\n", filepath.Base(corpus.Dir), pred)
		if cfg.Type != "" {
			fmt.Fprintf(w, "  (it scores the pages of the other types, absent here, as empty)\n")
		}
	} else {
		scorer := filepath.Join(filepath.Dir(filepath.Clean(corpus.Dir)), "score.py")
		if _, err := os.Stat(scorer); err != nil {
			scorer = "score.py"
		}
		fmt.Fprintf(w, "  python3 %s %s %s\n", scorer, filepath.Join(corpus.Dir, "ground-truth.json"), pred)
	}

	for _, r := range results {
		worst(w, cfg.Worst, corpus, groups, r)
	}
	if cfg.Confusion {
		for _, r := range results {
			confusion(w, pages, r)
		}
	}
}

// confusion prints the pages' true types (rows) against the types r took
// them for (columns), with each row's share taken right, or says that r
// reports no types.
func confusion(w io.Writer, pages []Page, r Result) {
	fmt.Fprintf(w, "\n%s: page types, true (rows) x predicted (columns)\n", r.Name)
	if r.Predicted == nil {
		fmt.Fprintln(w, "  (reports no page types)")
		return
	}
	const unknown = "-"
	cols := slices.Clone(pageTypes)
	counts := map[[2]string]int{}
	var rows []string
	for _, p := range pages {
		truth, pred := p.Type, r.Predicted[p.ID]
		if truth == "" {
			truth = unknown
		}
		if pred == "" {
			pred = unknown
		}
		if !slices.Contains(cols, pred) {
			cols = append(cols, pred)
		}
		if !slices.Contains(rows, truth) {
			rows = append(rows, truth)
		}
		counts[[2]string{truth, pred}]++
	}
	order := func(t string) int {
		if i := slices.Index(pageTypes, t); i >= 0 {
			return i
		}
		return len(pageTypes)
	}
	slices.SortStableFunc(rows, func(a, b string) int { return order(a) - order(b) })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "true\\pred\t")
	for _, c := range cols {
		fmt.Fprintf(tw, "%s\t", c)
	}
	fmt.Fprintln(tw, "pages\tright\t")
	right, total := 0, 0
	for _, t := range rows {
		fmt.Fprintf(tw, "%s\t", t)
		n := 0
		for _, c := range cols {
			k := counts[[2]string{t, c}]
			n += k
			fmt.Fprintf(tw, "%d\t", k)
		}
		if t == unknown {
			// An untyped corpus's pages are counted, not scored.
			fmt.Fprintf(tw, "%d\t-\t\n", n)
			continue
		}
		k := counts[[2]string{t, t}]
		right += k
		total += n
		fmt.Fprintf(tw, "%d\t%.3f\t\n", n, float64(k)/float64(n))
	}
	if total > 0 {
		fmt.Fprintf(tw, "all\t")
		for range cols {
			fmt.Fprint(tw, "\t")
		}
		fmt.Fprintf(tw, "%d\t%.3f\t\n", total, float64(right)/float64(total))
	}
	tw.Flush()
}

// typeGroup is the pages of one type, by index into the corpus.
type typeGroup struct {
	Type  string
	Pages []int
}

// byType groups the pages by type in pageTypes order and ends with all
// of them; an untyped corpus is the one group "all".
func byType(pages []Page) []typeGroup {
	var groups []typeGroup
	for _, t := range pageTypes {
		var idx []int
		for i, p := range pages {
			if p.Type == t {
				idx = append(idx, i)
			}
		}
		if len(idx) > 0 {
			groups = append(groups, typeGroup{Type: t, Pages: idx})
		}
	}
	all := make([]int, len(pages))
	for i := range all {
		all[i] = i
	}
	return append(groups, typeGroup{Type: "all", Pages: all})
}

func typeTable(w io.Writer, groups []typeGroup, results []Result, score func(Result, []int) float64) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "type\tpages\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t", r.Name)
	}
	fmt.Fprintln(tw)
	for _, g := range groups {
		fmt.Fprintf(tw, "%s\t%d\t", g.Type, len(g.Pages))
		for _, r := range results {
			fmt.Fprintf(tw, "%.3f\t", score(r, g.Pages))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

// worst lists, for each page type, the n pages where r scored lowest by
// the corpus's own metric: word F1 on WCXB, the page's shingle F1
// otherwise.
func worst(w io.Writer, n int, corpus Corpus, groups []typeGroup, r Result) {
	if n <= 0 {
		return
	}
	key := func(i int) float64 { return r.Pages[i].F1() }
	by := "shingle F1"
	if corpus.Layout == WCXB {
		key = func(i int) float64 { return r.WordPages[i].F1 }
		by = "word F1"
	}
	fmt.Fprintf(w, "\n%s: worst pages per type by %s (word F1, word P, word R, shingle F1, id, url)\n", r.Name, by)
	for _, g := range groups {
		if g.Type == "all" && len(groups) > 1 {
			continue
		}
		idx := slices.Clone(g.Pages)
		slices.SortStableFunc(idx, func(a, b int) int {
			switch ka, kb := key(a), key(b); {
			case ka < kb:
				return -1
			case ka > kb:
				return 1
			}
			return 0
		})
		fmt.Fprintf(w, "  %s\n", g.Type)
		for _, i := range idx[:min(n, len(idx))] {
			wp, p := r.WordPages[i], corpus.Pages[i]
			note := ""
			switch {
			case len(metric.WordTokens(p.Truth)) == 0:
				note = " (no truth: only an empty prediction scores)"
			case len(metric.WordTokens(r.Predictions[p.ID])) == 0:
				note = " (nothing extracted)"
			}
			fmt.Fprintf(w, "    %.3f %.3f %.3f %.3f %s %s%s\n", wp.F1, wp.Precision, wp.Recall, r.Pages[i].F1(), p.ID, p.URL, note)
		}
	}
}
