// Command train-blocks trains the extractor's block model on a corpus with
// ground truth (the WCXB development split), reports its cross-validated
// word F1 per page type beside the rules alone, and writes the model the
// extractor embeds.
//
// A block is labelled content when most of its word trigrams (bigram or
// word, for shorter blocks) occur in the page's ground truth. Only blocks
// the rules keep are learned from and rated: the model drops, it never
// adds.
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
	"strconv"
	"strings"
	"text/tabwriter"

	"distill.dev/services/extractor/bench/harness"
	"distill.dev/services/extractor/bench/metric"
	"distill.dev/services/extractor/extract"
	"distill.dev/services/extractor/readable"
)

type page struct {
	p        harness.Page
	fold     int
	examples []readable.Example
	texts    []string // each example's text
}

func main() {
	corpus := flag.String("corpus", "", "WCXB split `dir` (or repository, read as its dev split)")
	out := flag.String("out", "", "write the model trained on every page to `file`")
	folds := flag.Int("folds", 4, "cross-validation folds, pages split by host; 0 skips cross-validation")
	bits := flag.Uint("bits", 18, "hash width: 2^bits weights")
	epochs := flag.Int("epochs", 4, "passes over the examples")
	l1 := flag.Float64("l1", 1, "L1 regularisation")
	l2 := flag.Float64("l2", 1, "L2 regularisation")
	alpha := flag.Float64("alpha", 0.1, "FTRL learning rate")
	thresholds := flag.String("thresholds", "0.3,0.4,0.5", "drop thresholds to cross-validate; the best one is written")
	proxy := flag.Bool("proxy", false, "cross-validate on the kept blocks' text alone, without extracting again (fast, approximate), with the labels as an oracle")
	trees := flag.Int("trees", 0, "boosted trees on the dense features")
	depth := flag.Int("depth", 4, "levels of each tree")
	rate := flag.Float64("rate", 0.1, "shrinkage of each tree")
	flag.Parse()
	if err := run(*corpus, *out, *proxy, *folds, readable.TrainConfig{
		Bits: *bits, Epochs: *epochs, Alpha: *alpha, Beta: 1, L1: *l1, L2: *l2, Seed: 1,
		Boost: readable.BoostConfig{Trees: *trees, Depth: *depth, Rate: *rate, Lambda: 1, MinHess: 0.5, Bins: 64},
	}, *thresholds, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "train-blocks:", err)
		os.Exit(1)
	}
}

func run(dir, out string, proxy bool, folds int, cfg readable.TrainConfig, thresholdList string, w io.Writer) error {
	var thresholds []float32
	for _, s := range strings.Split(thresholdList, ",") {
		t, err := strconv.ParseFloat(strings.TrimSpace(s), 32)
		if err != nil || t <= 0 || t >= 1 {
			return fmt.Errorf("-thresholds: %q is not a number between 0 and 1", s)
		}
		thresholds = append(thresholds, float32(t))
	}
	c, err := harness.LoadCorpus(dir)
	if err != nil {
		return err
	}
	ctx := context.Background()
	pages := make([]page, len(c.Pages))
	total := 0
	for i, p := range c.Pages {
		u, _ := url.Parse(p.URL)
		samples, _, err := extract.BlockSamples(ctx, p.HTML, u)
		if err != nil {
			return fmt.Errorf("page %s: %w", p.ID, err)
		}
		ex, texts := label(samples, p.Truth)
		pages[i] = page{p: p, fold: foldOf(u, folds), examples: ex, texts: texts}
		total += len(pages[i].examples)
	}
	fmt.Fprintf(w, "corpus %s: %d pages, %d kept blocks to learn from\n", c.Dir, len(pages), total)

	best := thresholds[0]
	if proxy && folds > 1 {
		proxyValidate(w, pages, folds, cfg, thresholds)
		return nil
	}
	if folds > 1 {
		best = crossValidate(ctx, w, pages, folds, cfg, thresholds)
	}
	if out == "" {
		return nil
	}
	cfg.Threshold = best
	m := readable.TrainBlockModel(examplesOf(pages, -1), cfg)
	b, err := m.MarshalBinary()
	if err != nil {
		return err
	}
	if err := os.WriteFile(out, b, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(w, "wrote %s: %d bytes, threshold %.2f\n", out, len(b), best)
	return nil
}

// foldOf puts every page of one host in the same fold, so a fold's model
// never saw the site it is scored on.
func foldOf(u *url.URL, folds int) int {
	if folds < 2 || u == nil {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(strings.TrimPrefix(u.Hostname(), "www.")))
	return int(h.Sum32() % uint32(folds))
}

// label turns the blocks the rules keep into examples, each weighing its
// share of the page's kept words, so every page counts alike, as pages do
// in the benchmark's mean.
// allBlocks learns from every block, not only the kept ones.
var allBlocks = os.Getenv("ALLBLOCKS") != ""

const keptFeature = 0x6b657074

func label(samples []readable.Sample, truth string) ([]readable.Example, []string) {
	tt := metric.WordTokens(truth)
	grams := map[string]bool{}
	for n := 1; n <= 3; n++ {
		for i := 0; i+n <= len(tt); i++ {
			grams[strings.Join(tt[i:i+n], " ")] = true
		}
	}
	var examples []readable.Example
	var texts []string
	words := 0
	var sizes []int
	for _, s := range samples {
		if !s.Kept && !allBlocks {
			continue
		}
		feats := s.Features
		if s.Kept {
			feats = append(feats[:len(feats):len(feats)], keptFeature)
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
		examples = append(examples, readable.Example{Features: feats, Dense: s.Dense, Content: hits*2 >= all})
		sizes = append(sizes, len(bt))
		texts = append(texts, s.Text)
		words += len(bt)
	}
	for i := range examples {
		examples[i].Weight = float32(sizes[i]) / float32(words) * 20
	}
	return examples, texts
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

// crossValidate scores, page by page, the rules alone and the rules with
// a model trained on the other folds at each threshold, prints word F1 per
// page type, and returns the threshold with the best mean.
func crossValidate(ctx context.Context, w io.Writer, pages []page, folds int, cfg readable.TrainConfig, thresholds []float32) float32 {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	rules := extract.New(logger, extract.WithBlockModel(nil))
	// scores[0] is the rules alone, scores[1+i] thresholds[i].
	scores := make([][]float64, 1+len(thresholds))
	for i := range scores {
		scores[i] = make([]float64, len(pages))
	}
	for k := range folds {
		cfg.Threshold = thresholds[0]
		m := readable.TrainBlockModel(examplesOf(pages, k), cfg)
		for i, p := range pages {
			if p.fold != k {
				continue
			}
			scores[0][i] = f1(ctx, rules, p.p)
			for t, th := range thresholds {
				m.Threshold = th
				e := extract.New(logger, extract.WithBlockModel(m))
				scores[1+t][i] = f1(ctx, e, p.p)
			}
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "type\tpages\trules\t")
	for _, th := range thresholds {
		fmt.Fprintf(tw, "cv@%.2f\t", th)
	}
	fmt.Fprintln(tw)
	types := append(slices.Clone(harness.PageTypes), "all")
	bestMean, best := -1.0, thresholds[0]
	for _, typ := range types {
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
			if typ == "all" && s > 0 && sums[s]/float64(n) > bestMean {
				bestMean, best = sums[s]/float64(n), thresholds[s-1]
			}
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	fmt.Fprintf(w, "word F1, out of fold (%d folds by host); best threshold %.2f\n", folds, best)
	return best
}

func f1(ctx context.Context, e *extract.Extractor, p harness.Page) float64 {
	text, err := harness.DistillWith(e).Extract(ctx, p)
	if err != nil {
		return 0
	}
	return metric.CompareWords(p.Truth, text).F1
}

// proxyValidate is crossValidate scored on the kept blocks' own text, with
// the labels themselves as a bound.
func proxyValidate(w io.Writer, pages []page, folds int, cfg readable.TrainConfig, thresholds []float32) {
	scores := make([][]float64, 2+len(thresholds))
	for i := range scores {
		scores[i] = make([]float64, len(pages))
	}
	join := func(p page, keep func(i int) bool) string {
		var b strings.Builder
		for i, t := range p.texts {
			if keep(i) {
				b.WriteString(t)
				b.WriteByte('\n')
			}
		}
		return b.String()
	}
	for k := range folds {
		m := readable.TrainBlockModel(examplesOf(pages, k), cfg)
		for i, p := range pages {
			if p.fold != k {
				continue
			}
			scores[0][i] = metric.CompareWords(p.p.Truth, join(p, func(int) bool { return true })).F1
			scores[1][i] = metric.CompareWords(p.p.Truth, join(p, func(j int) bool { return p.examples[j].Content })).F1
			probs := make([]float32, len(p.examples))
			for j, ex := range p.examples {
				probs[j] = m.Prob(ex.Features, ex.Dense)
			}
			for t, th := range thresholds {
				scores[2+t][i] = metric.CompareWords(p.p.Truth, join(p, func(j int) bool { return probs[j] >= th })).F1
			}
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "type\tpages\tkept\toracle\t")
	for _, th := range thresholds {
		fmt.Fprintf(tw, "cv@%.2f\t", th)
	}
	fmt.Fprintln(tw)
	for _, typ := range append(slices.Clone(harness.PageTypes), "all") {
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
