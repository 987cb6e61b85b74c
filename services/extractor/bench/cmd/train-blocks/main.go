// Command train-blocks trains the extractor's block model on a corpus with
// ground truth (the WCXB development split), cross-validates it, and
// writes the model the extractor embeds.
//
// A block is labelled content when most of its word trigrams (bigram or
// word, for shorter blocks) occur in the page's ground truth. Only blocks
// the rules keep are learned from and rated: the model drops, it never
// adds. Pages are split into folds by host, so a fold's model has never
// seen the site it is scored on; the drop threshold of each page type (as
// the extractor classifies it) is the one with the best out-of-fold word
// F1 over the pages of that type.
package main

import (
	"context"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"distill.dev/services/extractor/bench/harness"
	"distill.dev/services/extractor/bench/metric"
	"distill.dev/services/extractor/extract"
	"distill.dev/services/extractor/readable"
)

// page is one page of the corpus with what training needs of it.
type page struct {
	p        harness.Page
	kind     readable.PageType // as the extractor classifies it
	fold     int
	examples []readable.Example
	texts    []string  // each example's text
	kept     []bool    // each example stays whatever the model says
	probs    []float32 // each example's out-of-fold rating
}

// keepTolerance is the mean word F1 a higher threshold must gain to be
// chosen over a lower one.
const keepTolerance = 0.002

// grid are the thresholds tried for each page type; 0 drops nothing, and
// the extractor then skips the model for pages of that type.
var grid = []float32{0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6}

func main() {
	var o options
	flag.StringVar(&o.corpus, "corpus", "", "WCXB split `dir` (or repository, read as its dev split)")
	flag.StringVar(&o.out, "out", "", "write the model trained on every page to `file`")
	flag.IntVar(&o.folds, "folds", 4, "cross-validation folds, pages split by host (at least 2)")
	flag.BoolVar(&o.extract, "extract", true, "score the cross-validated models by extracting every page again, as the benchmark does (slower); false scores the kept blocks' text only")
	flag.UintVar(&o.cfg.Bits, "bits", 16, "hash width: 2^bits weights")
	flag.IntVar(&o.cfg.Epochs, "epochs", 4, "passes over the examples")
	flag.Float64Var(&o.cfg.L1, "l1", 1, "L1 regularisation")
	flag.Float64Var(&o.cfg.L2, "l2", 1, "L2 regularisation")
	flag.Float64Var(&o.cfg.Alpha, "alpha", 0.1, "FTRL learning rate")
	flag.Parse()
	o.cfg.Beta, o.cfg.Seed = 1, 1
	if err := run(context.Background(), o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "train-blocks:", err)
		os.Exit(1)
	}
}

type options struct {
	corpus, out string
	folds       int
	extract     bool
	cfg         readable.TrainConfig
}

// run trains and cross-validates the block model as o says, printing its
// figures to w, and writes the model to o.out when set.
func run(ctx context.Context, o options, w io.Writer) error {
	if o.folds < 2 {
		return fmt.Errorf("-folds %d: need at least 2", o.folds)
	}
	if o.cfg.Bits < 8 || o.cfg.Bits > 24 {
		return fmt.Errorf("-bits %d: want 8 to 24", o.cfg.Bits)
	}
	pages, err := loadPages(ctx, o, w)
	if err != nil {
		return err
	}
	models := crossValidate(pages, o)
	global, perType := chooseThresholds(pages)
	fmt.Fprintf(w, "\nthresholds by page type as classified (out of fold, on the kept blocks' text): default %.2f", global)
	for _, t := range sortedTypes(perType) {
		fmt.Fprintf(w, ", %s %.2f", t, perType[t])
	}
	fmt.Fprintln(w)
	blockTable(w, pages, global, perType)
	if o.extract {
		extractTable(ctx, w, pages, models, global, perType)
	}
	if o.out == "" {
		return nil
	}
	m := readable.TrainBlockModel(examplesOf(pages, -1), o.cfg)
	m.Threshold, m.Thresholds = global, perType
	b, err := m.MarshalBinary()
	if err != nil {
		return err
	}
	if err := os.WriteFile(o.out, b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nwrote %s (%d bytes): trained on all %d pages\n", o.out, len(b), len(pages))
	return nil
}

// loadPages reads the corpus at o.corpus and labels the blocks the rules
// keep on each page, saying on w how many there are.
func loadPages(ctx context.Context, o options, w io.Writer) ([]page, error) {
	c, err := harness.LoadCorpus(o.corpus)
	if err != nil {
		return nil, err
	}
	if c.Layout != harness.WCXB {
		return nil, fmt.Errorf("%s: want a WCXB split, whose pages carry their type", c.Dir)
	}
	pages := make([]page, len(c.Pages))
	total := 0
	for i, p := range c.Pages {
		u, _ := url.Parse(p.URL)
		samples, kind, err := extract.BlockSamples(ctx, p.HTML, u)
		if err != nil {
			return nil, fmt.Errorf("page %s: %w", p.ID, err)
		}
		ex, texts, kept := label(samples, p.Truth)
		pages[i] = page{p: p, kind: kind.Type, fold: foldOf(u, o.folds), examples: ex, texts: texts, kept: kept}
		total += len(ex)
	}
	fmt.Fprintf(w, "corpus %s: %d pages, %d kept blocks to learn from, %d folds by host\n", c.Dir, len(pages), total, o.folds)
	return pages, nil
}

// crossValidate trains one model per fold on the other folds' pages and
// rates the blocks of the fold's pages with it (each page's probs).
func crossValidate(pages []page, o options) []*readable.BlockModel {
	models := make([]*readable.BlockModel, o.folds)
	for k := range models {
		models[k] = readable.TrainBlockModel(examplesOf(pages, k), o.cfg)
		for i := range pages {
			p := &pages[i]
			if p.fold != k {
				continue
			}
			p.probs = make([]float32, len(p.examples))
			for j, ex := range p.examples {
				p.probs[j] = models[k].Prob(ex.Features)
			}
		}
	}
	return models
}

// blockTable prints the word F1 of the kept blocks' text: all of them,
// those labelled content, and those the out-of-fold model keeps.
func blockTable(w io.Writer, pages []page, global float32, perType map[readable.PageType]float32) {
	columns := []string{"rules", "labels", "model"}
	scores := make([][]float64, len(columns))
	for s := range scores {
		scores[s] = make([]float64, len(pages))
	}
	for i, p := range pages {
		scores[0][i] = blockF1(p, func(int) bool { return true })
		scores[1][i] = blockF1(p, func(j int) bool { return p.examples[j].Content })
		th := thresholdFor(p.kind, global, perType)
		scores[2][i] = blockF1(p, func(j int) bool { return p.kept[j] || p.probs[j] >= th })
	}
	fmt.Fprintln(w, "\nword F1 of the kept blocks' text: all of them (rules), those labelled content (labels: the bound of dropping), those the out-of-fold model keeps (model)")
	table(w, pages, columns, scores)
}

// extractTable extracts every page again, with the rules alone and with
// the model of the other folds given the chosen thresholds, and prints the
// word F1 of distill's text output.
func extractTable(ctx context.Context, w io.Writer, pages []page, models []*readable.BlockModel, global float32, perType map[readable.PageType]float32) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	rules := harness.DistillWith(extract.New(logger, extract.WithBlockModel(nil)))
	columns := []string{"rules", "model"}
	scores := [][]float64{make([]float64, len(pages)), make([]float64, len(pages))}
	for k, m := range models {
		m.Threshold, m.Thresholds = global, perType
		withModel := harness.DistillWith(extract.New(logger, extract.WithBlockModel(m)))
		for i, p := range pages {
			if p.fold == k {
				scores[0][i] = extractF1(ctx, rules, p.p)
				scores[1][i] = extractF1(ctx, withModel, p.p)
			}
		}
	}
	fmt.Fprintln(w, "\nword F1 of distill's text output, out of fold: the rules alone, and with the model of the other folds")
	table(w, pages, columns, scores)
}

// foldOf puts every page of one host in the same fold.
func foldOf(u *url.URL, folds int) int {
	if u == nil {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(strings.TrimPrefix(u.Hostname(), "www.")))
	return int(h.Sum32() % uint32(folds))
}

// label turns the blocks the rules keep into examples, each weighing its
// share of the page's kept words, so every page counts alike, as pages do
// in the benchmark's mean.
func label(samples []readable.Sample, truth string) ([]readable.Example, []string, []bool) {
	tt := metric.WordTokens(truth)
	grams := map[string]bool{}
	for n := 1; n <= 3; n++ {
		for i := 0; i+n <= len(tt); i++ {
			grams[strings.Join(tt[i:i+n], " ")] = true
		}
	}
	var examples []readable.Example
	var texts []string
	var kept []bool
	var sizes []int
	words := 0
	for _, s := range samples {
		if !s.Kept {
			continue
		}
		bt := metric.WordTokens(s.Text)
		if len(bt) == 0 {
			continue
		}
		n := min(len(bt), 3)
		hits, all := 0, 0
		for i := 0; i+n <= len(bt); i++ {
			all++
			if grams[strings.Join(bt[i:i+n], " ")] {
				hits++
			}
		}
		examples = append(examples, readable.Example{Features: s.Features, Content: hits*2 >= all})
		texts = append(texts, s.Text)
		kept = append(kept, s.Protected)
		sizes = append(sizes, len(bt))
		words += len(bt)
	}
	for i := range examples {
		examples[i].Weight = float32(sizes[i]) / float32(words) * 20
	}
	return examples, texts, kept
}

// examplesOf gathers the examples of every page outside fold skip.
func examplesOf(pages []page, skip int) []readable.Example {
	var all []readable.Example
	for _, p := range pages {
		if p.fold != skip {
			all = append(all, p.examples...)
		}
	}
	return all
}

// blockF1 is the word F1 of the text of p's kept blocks that keep selects.
func blockF1(p page, keep func(i int) bool) float64 {
	var b strings.Builder
	for i, t := range p.texts {
		if keep(i) {
			b.WriteString(t)
			b.WriteByte('\n')
		}
	}
	return metric.CompareWords(p.p.Truth, b.String()).F1
}

// chooseThresholds picks, from grid, the threshold with the best mean
// out-of-fold F1 over all pages, and for each classified type over its
// pages, preferring the lowest of those that score about the same.
func chooseThresholds(pages []page) (float32, map[readable.PageType]float32) {
	sums := map[readable.PageType][]float64{}
	all := make([]float64, len(grid))
	for _, p := range pages {
		if sums[p.kind] == nil {
			sums[p.kind] = make([]float64, len(grid))
		}
		for g, th := range grid {
			f := blockF1(p, func(j int) bool { return p.kept[j] || p.probs[j] >= th })
			sums[p.kind][g] += f
			all[g] += f
		}
	}
	// The lowest threshold within keepTolerance of the best mean wins:
	// when dropping more gains next to nothing out of fold, a page keeps
	// its text, since a dropped paragraph costs a reader more than a
	// kept line of furniture.
	best := func(s []float64, n int) float32 {
		top := slices.Max(s)
		for g := range s {
			if s[g] >= top-keepTolerance*float64(n) {
				return grid[g]
			}
		}
		return grid[0]
	}
	counts := map[readable.PageType]int{}
	for _, p := range pages {
		counts[p.kind]++
	}
	perType := map[readable.PageType]float32{}
	for t, s := range sums {
		perType[t] = best(s, counts[t])
	}
	return best(all, len(pages)), perType
}

func thresholdFor(t readable.PageType, global float32, perType map[readable.PageType]float32) float32 {
	if v, ok := perType[t]; ok {
		return v
	}
	return global
}

func sortedTypes(m map[readable.PageType]float32) []readable.PageType {
	var ts []readable.PageType
	for t := range m {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return ts
}

// table prints the mean of each column of scores per page type (the
// corpus's types) and over all pages.
func table(w io.Writer, pages []page, columns []string, scores [][]float64) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "type\tpages\t%s\t\n", strings.Join(columns, "\t"))
	for _, typ := range append(harness.PageTypes(), "all") {
		n := 0
		sums := make([]float64, len(scores))
		for i, p := range pages {
			if typ != "all" && p.p.Type != typ {
				continue
			}
			n++
			for s := range scores {
				sums[s] += scores[s][i]
			}
		}
		if n == 0 {
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t", typ, n)
		for s := range sums {
			fmt.Fprintf(tw, "%.3f\t", sums[s]/float64(n))
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}

func extractF1(ctx context.Context, ex harness.Extractor, p harness.Page) float64 {
	text, err := ex.Extract(ctx, p)
	if err != nil {
		return 0
	}
	return metric.CompareWords(p.Truth, text).F1
}
