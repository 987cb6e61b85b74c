// Package fetch measures what the NATS fan-out costs a batch: the same
// loopback pages distilled through the job queue, as `distill fetch` does
// for several URLs, and by calling the pipeline directly with the same
// concurrency.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/pprof"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"distill.dev/gateway/app"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/pipeline"
)

// Config chooses the workload.
type Config struct {
	// Count is how many distinct pages a round distills.
	Count int
	// Concurrency is the batch concurrency, the in-process workers, and the
	// direct loop's goroutines alike.
	Concurrency int
	// Rounds is how many measured rounds each mode runs after a warm-up.
	Rounds int
	// CPUProfile, when set, is where a CPU profile of the measured rounds
	// is written.
	CPUProfile string
}

// mode is one way of distilling a round's URLs.
type mode struct {
	name string
	run  func(ctx context.Context, urls []string) (failed int, firstErr string, err error)
}

// Run serves the pages, runs a warm-up round and cfg.Rounds measured rounds
// of each mode, alternating them so drift in the machine's state falls on
// both, and writes the figures to out.
func Run(ctx context.Context, cfg Config, logger *slog.Logger, out io.Writer) error {
	if cfg.Count < 1 || cfg.Concurrency < 1 || cfg.Rounds < 1 {
		return errors.New("count, concurrency and rounds must be at least 1")
	}
	srv, avgSize := Serve(cfg.Count, 0)
	defer srv.Close()

	a, err := app.Open(ctx, logger, app.Config{UserAgentVersion: "bench-fetch", Workers: cfg.Concurrency, AllowLocal: true})
	if err != nil {
		return err
	}
	defer func() { _ = a.Close() }()
	modes := modes(a, cfg.Concurrency)

	fmt.Fprintf(out, "bench-fetch: %d pages (avg %.1f KiB) on %s, concurrency %d, %d rounds after a warm-up\n\n",
		cfg.Count, float64(avgSize)/1024, srv.URL, cfg.Concurrency, cfg.Rounds)
	fmt.Fprintf(out, "%-8s %-8s %9s %9s %13s\n", "round", "mode", "seconds", "URLs/s", "CPU ms/URL")
	var t totals
	for round := 0; round <= cfg.Rounds; round++ {
		wall, cpu, err := runRound(ctx, out, modes, srv.URL, cfg.Count, round)
		if err != nil {
			return err
		}
		if round == 0 {
			if cfg.CPUProfile != "" {
				stop, err := startProfile(cfg.CPUProfile)
				if err != nil {
					return err
				}
				defer stop()
			}
			continue
		}
		t.add(cfg.Count, wall, cpu)
	}
	t.write(out)
	return nil
}

// modes are the two ways a round is distilled, fan-out first: a batch over
// the queue, and the pipeline called from concurrency goroutines, with the
// same options.
func modes(a *app.System, concurrency int) []mode {
	conc := int32(concurrency)
	opts := &distillv1.FetchOptions{
		AllowLocal: true,
		Js:         distillv1.JsMode_JS_MODE_OFF,
		NoCache:    true,
		// One loopback host stands for many real ones: the per-host limit
		// would otherwise measure itself, not the queue.
		PerHostConcurrency: &conc,
		Concurrency:        &conc,
	}
	return []mode{
		{"fan-out", func(ctx context.Context, urls []string) (int, string, error) {
			return fanOut(ctx, a, urls, opts)
		}},
		{"direct", func(ctx context.Context, urls []string) (int, string, error) {
			return direct(ctx, a, urls, opts, concurrency)
		}},
	}
}

// runRound distills count pages of base with each mode in turn, writes a
// line for each, and returns their wall and CPU times in the modes' order.
// Round 0 is the warm-up. A failed URL fails the run.
func runRound(ctx context.Context, out io.Writer, modes []mode, base string, count, round int) (wall, cpu [2]time.Duration, err error) {
	for k, m := range modes {
		// Fresh URLs each round and mode keep any cache or connection
		// reuse keyed on the URL from favouring one side.
		urls := make([]string, count)
		for i := range urls {
			urls[i] = fmt.Sprintf("%s/articles/%d?round=%d&mode=%s", base, i, round, m.name)
		}
		startCPU, start := cpuTime(), time.Now()
		failed, firstErr, err := m.run(ctx, urls)
		wall[k], cpu[k] = time.Since(start), cpuTime()-startCPU
		if err != nil {
			return wall, cpu, fmt.Errorf("%s round %d: %w", m.name, round, err)
		}
		if failed > 0 {
			return wall, cpu, fmt.Errorf("%s round %d: %d of %d URLs failed, first: %s", m.name, round, failed, len(urls), firstErr)
		}
		label := "warm-up"
		if round > 0 {
			label = fmt.Sprint(round)
		}
		fmt.Fprintf(out, "%-8s %-8s %9.3f %9.1f %13.3f\n", label, m.name, wall[k].Seconds(),
			float64(len(urls))/wall[k].Seconds(), float64(cpu[k].Microseconds())/1000/float64(len(urls)))
	}
	return wall, cpu, nil
}

// totals gathers the measured rounds' figures, whose medians the summary
// reports.
type totals struct {
	wallRatios, cpuRatios, fanRates, directRates []float64
}

// add records one measured round of count pages, fan-out's times first.
func (t *totals) add(count int, wall, cpu [2]time.Duration) {
	t.fanRates = append(t.fanRates, float64(count)/wall[0].Seconds())
	t.directRates = append(t.directRates, float64(count)/wall[1].Seconds())
	// Each round's modes ran back to back, so their ratio cancels most
	// of what a shared machine's load does to both.
	t.wallRatios = append(t.wallRatios, wall[0].Seconds()/wall[1].Seconds())
	if cpu[1] > 0 {
		t.cpuRatios = append(t.cpuRatios, cpu[0].Seconds()/cpu[1].Seconds())
	}
}

// write writes the summary: the median rates and fan-out's overhead.
func (t *totals) write(out io.Writer) {
	fmt.Fprintf(out, "\nmedian URLs/s: fan-out %.1f, direct %.1f\n", median(t.fanRates), median(t.directRates))
	fmt.Fprintf(out, "fan-out overhead, median of per-round ratios (goal under 15%%): wall time %+.1f%%", (median(t.wallRatios)-1)*100)
	if len(t.cpuRatios) > 0 {
		fmt.Fprintf(out, ", CPU time %+.1f%%", (median(t.cpuRatios)-1)*100)
	}
	fmt.Fprintln(out)
}

func startProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// fanOut distills urls as one batch over the embedded JetStream queue.
func fanOut(ctx context.Context, a *app.System, urls []string, opts *distillv1.FetchOptions) (int, string, error) {
	failed := 0
	firstErr := ""
	err := a.Batch(ctx, urls, opts, func(r *internalv1.FetchJobResult) {
		if e := r.GetError(); e != nil {
			if failed == 0 {
				firstErr = r.GetUrl() + ": " + e.GetMessage()
			}
			failed++
		}
	})
	return failed, firstErr, err
}

// direct distills urls by calling the pipeline from concurrency goroutines.
func direct(ctx context.Context, a *app.System, urls []string, opts *distillv1.FetchOptions, concurrency int) (int, string, error) {
	var next, failed atomic.Int64
	var once sync.Once
	firstErr := ""
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(urls) || ctx.Err() != nil {
					return
				}
				if _, err := a.Do(ctx, pipeline.Request{URL: urls[i], Options: opts}); err != nil {
					once.Do(func() { firstErr = urls[i] + ": " + err.Error() })
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return int(failed.Load()), firstErr, ctx.Err()
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
