// Package harness runs extractors over a corpus with ground truth, on one
// core, and reports both benchmarks' figures, overall and per page type,
// and their speed side by side.
package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"distill.dev/services/extractor/bench/metric"
	"distill.dev/services/extractor/extract"
)

// Config says what to run.
type Config struct {
	Corpus string
	OutDir string
	// Only names the extractors to run; empty runs all.
	Only []string
	// Type keeps only the pages of one type; empty keeps all.
	Type string
	// Worst is how many of each extractor's lowest-scoring pages to list.
	Worst int
	// Rounds is how many timed passes each extractor makes; on each
	// stretch of pages the fastest counts (see timeStretches).
	Rounds int
	// Confusion prints, for each extractor that reports page types, the
	// true type of each page against the type it took the page for.
	Confusion bool
}

// Result is one extractor's run.
type Result struct {
	Name string
	// Words is WCXB's word-level score, Score scrapinghub's shingle one.
	Words metric.WordScore
	Score metric.Score
	// PagesPerSec is measured on one core, over the timed pass only.
	PagesPerSec float64
	Errors      int
	// WordPages and Pages are the pages' comparisons, in corpus order.
	WordPages   []metric.WordPage
	Pages       []metric.Page
	Predictions map[string]string
	// Predicted holds the page type the extractor reported for each page,
	// when a confusion matrix was asked for and it reports types.
	Predicted map[string]string
	// Failed holds the pages whose extraction returned an error.
	Failed map[string]error
}

// Run benchmarks the extractors on cfg.Corpus, writes each one's
// predictions to cfg.OutDir and prints the table to w.
func Run(ctx context.Context, cfg Config, logger *slog.Logger, w io.Writer) error {
	corpus, err := LoadCorpus(cfg.Corpus)
	if err != nil {
		return err
	}
	if len(corpus.Pages) == 0 {
		return fmt.Errorf("corpus %s has no pages", cfg.Corpus)
	}
	if cfg.Type != "" {
		corpus.Pages, err = ofType(corpus.Pages, cfg.Type)
		if err != nil {
			return err
		}
	}
	pages := corpus.Pages
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return fmt.Errorf("output dir: %w", err)
	}

	// One core, one thread: the figures compare single-core throughput,
	// and the collector competes for the same core as the extractor.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	exs, err := selected(cfg.Only, logger)
	if err != nil {
		return err
	}
	results := make([]Result, len(exs))
	for i, ex := range exs {
		res, err := warmUp(ctx, ex, pages, cfg.Confusion)
		if err != nil {
			return err
		}
		if err := writePredictions(cfg.OutDir, pages, res); err != nil {
			return err
		}
		results[i] = res
	}
	// The floor is timed alongside, in the same rounds, so load from
	// elsewhere falls on it as on the extractors.
	timed := append(slices.Clone(exs), ParseWalk())
	spent, err := timeStretches(ctx, timed, pages, max(cfg.Rounds, 1))
	if err != nil {
		return err
	}
	for i := range results {
		results[i].PagesPerSec = float64(len(pages)) / spent[i].Seconds()
	}
	floor := float64(len(pages)) / spent[len(exs)].Seconds()
	report(w, cfg, corpus, results, floor)
	return nil
}

// ofType keeps the pages of type typ, in order.
func ofType(pages []Page, typ string) ([]Page, error) {
	var out []Page
	seen := map[string]bool{}
	for _, p := range pages {
		seen[p.Type] = true
		if p.Type == typ {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		var types []string
		for _, t := range pageTypes {
			if seen[t] {
				types = append(types, t)
			}
		}
		if len(types) == 0 {
			return nil, fmt.Errorf("no pages of type %q: the corpus has no page types", typ)
		}
		return nil, fmt.Errorf("no pages of type %q; the corpus has %s", typ, strings.Join(types, ", "))
	}
	return out, nil
}

func selected(only []string, logger *slog.Logger) ([]Extractor, error) {
	all := []Extractor{Distill(logger), Trafilatura(), Readability()}
	// distill-rules is distill without its block model, for -only: the
	// model's gain and cost, side by side.
	rules := DistillWith(extract.New(logger, extract.WithBlockModel(nil)))
	rules.Name = "distill-rules"
	if len(only) == 0 {
		return all, nil
	}
	var out []Extractor
	for _, name := range only {
		if name == rules.Name {
			out = append(out, rules)
			continue
		}
		i := slices.IndexFunc(all, func(ex Extractor) bool { return ex.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("no extractor %q: want distill, distill-rules, go-trafilatura or go-readability", name)
		}
		out = append(out, all[i])
	}
	return out, nil
}

// warmUp runs ex over every page once, untimed, so caches, lazily
// compiled regexps and the heap are settled before timing, and scores
// what it extracted. With typed, an extractor that reports page types
// reports them too.
func warmUp(ctx context.Context, ex Extractor, pages []Page, typed bool) (Result, error) {
	res := Result{Name: ex.Name, Predictions: make(map[string]string, len(pages)), Failed: map[string]error{}}
	extract := ex.Extract
	if typed && ex.Typed != nil {
		res.Predicted = make(map[string]string, len(pages))
		extract = func(ctx context.Context, p Page) (string, error) {
			text, typ, err := ex.Typed(ctx, p)
			res.Predicted[p.ID] = typ
			return text, err
		}
	}
	for _, p := range pages {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		text, err := extract(ctx, p)
		if err != nil {
			// A failed page scores as an empty prediction, as it would for
			// a user.
			res.Errors++
			res.Failed[p.ID] = err
			text = ""
		}
		res.Predictions[p.ID] = text
	}
	res.Pages = make([]metric.Page, len(pages))
	res.WordPages = make([]metric.WordPage, len(pages))
	for i, p := range pages {
		res.Pages[i] = metric.Compare(p.Truth, res.Predictions[p.ID])
		res.WordPages[i] = metric.CompareWords(p.Truth, res.Predictions[p.ID])
	}
	res.Score = metric.Aggregate(res.Pages)
	res.Words = metric.AggregateWords(res.WordPages)
	return res, nil
}

// stretchPages is how many pages one timed stretch covers.
const stretchPages = 100

// timeStretches returns the time each extractor takes over pages: the
// pages are cut into stretches of stretchPages, the extractors take turns
// on each stretch, rounds times over, and an extractor's time is the sum
// of its fastest round on each stretch. Load from elsewhere on the
// machine comes in bursts of seconds; taking turns stretch by stretch
// spreads a burst over all the extractors, and the fastest round of each
// stretch drops it from every figure alike, where a whole pass per turn
// would charge it to whichever extractor it fell on.
func timeStretches(ctx context.Context, exs []Extractor, pages []Page, rounds int) ([]time.Duration, error) {
	stretches := (len(pages) + stretchPages - 1) / stretchPages
	best := make([][]time.Duration, len(exs))
	for i := range best {
		best[i] = make([]time.Duration, stretches)
	}
	for range rounds {
		for s := range stretches {
			stretch := pages[s*stretchPages : min((s+1)*stretchPages, len(pages))]
			for i, ex := range exs {
				elapsed, err := timedPass(ctx, ex, stretch)
				if err != nil {
					return nil, err
				}
				if best[i][s] == 0 || elapsed < best[i][s] {
					best[i][s] = elapsed
				}
			}
		}
	}
	spent := make([]time.Duration, len(exs))
	for i := range best {
		for _, d := range best[i] {
			spent[i] += d
		}
	}
	return spent, nil
}

// timedPass runs ex over pages and returns the time spent inside the
// extraction calls, parsing included, after collecting the garbage of
// what ran before.
func timedPass(ctx context.Context, ex Extractor, pages []Page) (time.Duration, error) {
	runtime.GC()
	var elapsed time.Duration
	for _, p := range pages {
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		start := time.Now()
		_, _ = ex.Extract(ctx, p)
		elapsed += time.Since(start)
	}
	return elapsed, nil
}

// pageRecord is one page of an extractor's run as written beside its
// predictions.
type pageRecord struct {
	ID   string `json:"id"`
	URL  string `json:"url,omitempty"`
	Type string `json:"type,omitempty"`
	// PredictedType is the type the extractor took the page for, when
	// asked (-confusion) and it says.
	PredictedType string  `json:"predicted_type,omitempty"`
	WordF1        float64 `json:"word_f1"`
	WordPrecision float64 `json:"word_precision"`
	WordRecall    float64 `json:"word_recall"`
	ShingleF1     float64 `json:"shingle_f1"`
	// The token counts tell a page with nothing extracted, or nothing to
	// extract, from a poor extraction.
	TruthWords      int    `json:"truth_words"`
	PredictionWords int    `json:"prediction_words"`
	Error           string `json:"error,omitempty"`
}

// writePredictions writes <name>.json as {id: text}, the form both
// benchmarks' own scorers read, and <name>.pages.json with each page's
// type and scores, for sorting and filtering a run.
func writePredictions(dir string, pages []Page, res Result) error {
	records := make([]pageRecord, len(pages))
	for i, p := range pages {
		w := res.WordPages[i]
		records[i] = pageRecord{
			ID: p.ID, URL: p.URL, Type: p.Type, PredictedType: res.Predicted[p.ID],
			WordF1: w.F1, WordPrecision: w.Precision, WordRecall: w.Recall,
			ShingleF1:       res.Pages[i].F1(),
			TruthWords:      len(metric.WordTokens(p.Truth)),
			PredictionWords: len(metric.WordTokens(res.Predictions[p.ID])),
		}
		if err := res.Failed[p.ID]; err != nil {
			records[i].Error = err.Error()
		}
	}
	for name, v := range map[string]any{res.Name + ".json": res.Predictions, res.Name + ".pages.json": records} {
		b, err := json.MarshalIndent(v, "", " ")
		if err != nil {
			return fmt.Errorf("predictions of %s: %w", res.Name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return fmt.Errorf("predictions of %s: %w", res.Name, err)
		}
	}
	return nil
}
