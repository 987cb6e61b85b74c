package harness

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"
)

// report prints the figures table, the speed ratios of the first
// extractor to the others, and each extractor's worst pages.
func report(w io.Writer, cfg Config, pages []Page, results []Result) {
	fmt.Fprintf(w, "corpus %s: %d pages; one core, sequential, after a warm-up pass; pages/s of the fastest of %d timed passes\n\n",
		cfg.Corpus, len(pages), max(cfg.Rounds, 1))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "extractor\tF1\tprecision\trecall\taccuracy\tpages/s\terrors\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.1f\t%d\t\n",
			r.Name, r.Score.F1, r.Score.Precision, r.Score.Recall, r.Score.Accuracy, r.PagesPerSec, r.Errors)
	}
	tw.Flush()

	if len(results) > 1 {
		fmt.Fprintln(w)
		for _, r := range results[1:] {
			fmt.Fprintf(w, "speed %s/%s: %.2fx\n", results[0].Name, r.Name, results[0].PagesPerSec/r.PagesPerSec)
		}
	}
	scorer := filepath.Join(filepath.Dir(filepath.Clean(cfg.Corpus)), "score.py")
	if _, err := os.Stat(scorer); err != nil {
		scorer = "score.py"
	}
	fmt.Fprintf(w, "\npredictions ({id: text}) in %s/<extractor>.json; cross-check:\n", cfg.OutDir)
	fmt.Fprintf(w, "  python3 %s %s %s\n",
		scorer, filepath.Join(cfg.Corpus, "ground-truth.json"), filepath.Join(cfg.OutDir, results[0].Name+".json"))

	for _, r := range results {
		worst(w, cfg.Worst, pages, r)
	}
}

// worst lists the n pages where r scored lowest, by their own F1.
func worst(w io.Writer, n int, pages []Page, r Result) {
	if n <= 0 {
		return
	}
	idx := make([]int, len(pages))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		fa, fb := r.Pages[a].F1(), r.Pages[b].F1()
		switch {
		case fa < fb:
			return -1
		case fa > fb:
			return 1
		}
		return 0
	})
	fmt.Fprintf(w, "\n%s: worst pages (F1 TP FP FN id)\n", r.Name)
	for _, i := range idx[:min(n, len(idx))] {
		p := r.Pages[i]
		fmt.Fprintf(w, "  %.3f %.2f %.2f %.2f %s\n", p.F1(), p.TP, p.FP, p.FN, pages[i].ID)
	}
}
