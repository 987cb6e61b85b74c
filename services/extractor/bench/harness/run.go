// Package harness runs extractors over a corpus with ground truth, on one
// core, and reports the benchmark's figures and their speed side by side.
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
	"time"

	"distill.dev/services/extractor/bench/metric"
)

// Config says what to run.
type Config struct {
	Corpus string
	OutDir string
	// Only names the extractors to run; empty runs all.
	Only []string
	// Worst is how many of each extractor's lowest-scoring pages to list.
	Worst int
	// Rounds is how many timed passes each extractor makes; the fastest
	// counts. Rounds alternate between the extractors, so a burst of load
	// from elsewhere on the machine does not fall on one of them only.
	Rounds int
}

// Result is one extractor's run.
type Result struct {
	Name  string
	Score metric.Score
	// PagesPerSec is measured on one core, over the timed pass only.
	PagesPerSec float64
	Errors      int
	Pages       []metric.Page
	Predictions map[string]string
}

// Run benchmarks the extractors on cfg.Corpus, writes each one's
// predictions to cfg.OutDir and prints the table to w.
func Run(ctx context.Context, cfg Config, logger *slog.Logger, w io.Writer) error {
	pages, err := LoadCorpus(cfg.Corpus)
	if err != nil {
		return err
	}
	if len(pages) == 0 {
		return fmt.Errorf("corpus %s has no pages", cfg.Corpus)
	}
	if err := os.MkdirAll(cfg.OutDir, 0o755); err != nil {
		return fmt.Errorf("output dir: %w", err)
	}

	// One core, one thread: the figures compare single-core throughput,
	// and the collector competes for the same core as the extractor.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	exs := selected(cfg.Only, logger)
	results := make([]Result, len(exs))
	for i, ex := range exs {
		res, err := warmUp(ctx, ex, pages)
		if err != nil {
			return err
		}
		if err := writePredictions(cfg.OutDir, res); err != nil {
			return err
		}
		results[i] = res
	}
	best := make([]time.Duration, len(exs))
	for range max(cfg.Rounds, 1) {
		for i, ex := range exs {
			elapsed, err := timedPass(ctx, ex, pages)
			if err != nil {
				return err
			}
			if best[i] == 0 || elapsed < best[i] {
				best[i] = elapsed
			}
		}
	}
	for i := range results {
		results[i].PagesPerSec = float64(len(pages)) / best[i].Seconds()
	}
	report(w, cfg, pages, results)
	return nil
}

func selected(only []string, logger *slog.Logger) []Extractor {
	all := []Extractor{Distill(logger), Trafilatura(), Readability()}
	if len(only) == 0 {
		return all
	}
	var out []Extractor
	for _, ex := range all {
		for _, name := range only {
			if ex.Name == name {
				out = append(out, ex)
			}
		}
	}
	return out
}

// warmUp runs ex over every page once, untimed, so caches, lazily
// compiled regexps and the heap are settled before timing, and scores
// what it extracted.
func warmUp(ctx context.Context, ex Extractor, pages []Page) (Result, error) {
	res := Result{Name: ex.Name, Predictions: make(map[string]string, len(pages))}
	for _, p := range pages {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		text, err := ex.Extract(ctx, p)
		if err != nil {
			// A failed page scores as an empty prediction, as it would for
			// a user.
			res.Errors++
			text = ""
		}
		res.Predictions[p.ID] = text
	}
	res.Pages = make([]metric.Page, len(pages))
	for i, p := range pages {
		res.Pages[i] = metric.Compare(p.Truth, res.Predictions[p.ID])
	}
	res.Score = metric.Aggregate(res.Pages)
	return res, nil
}

// timedPass runs ex over every page and returns the time spent inside
// the extraction calls, parsing included.
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

func writePredictions(dir string, res Result) error {
	b, err := json.MarshalIndent(res.Predictions, "", " ")
	if err != nil {
		return fmt.Errorf("predictions of %s: %w", res.Name, err)
	}
	path := filepath.Join(dir, res.Name+".json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("predictions of %s: %w", res.Name, err)
	}
	return nil
}
