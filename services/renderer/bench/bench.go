// Package bench measures the headless renderer on a client-side app
// served over loopback: distill's warm browser, one incognito context per
// render, against what one does without a renderer service, a fresh
// `chromium --dump-dom` per page. Both must return the article the app
// builds, or the run fails.
package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
)

// Config chooses the workload.
type Config struct {
	// Renders is how many renders the distill pool is timed on.
	Renders int
	// DumpRenders is how many chromium --dump-dom renders are timed; each
	// is a cold start, so fewer keep the run short.
	DumpRenders int
	// Concurrency is the pool's page limit and the number of Chromium
	// processes run at once alike.
	Concurrency int
	// WarmUp is how many renders each way runs, untimed, first.
	WarmUp int
	// Chromium is the browser binary both ways run.
	Chromium string
	// ActionRenders is how many renders of the actions workload (half the
	// infinite feed, half the "load more" list) each way is timed on; 0
	// skips it.
	ActionRenders int
	// BlockRenders is how many renders of the media page are timed with
	// and without --block; 0 skips it.
	BlockRenders int
}

// Run serves the app, measures the pool and then chromium --dump-dom, and
// writes the figures side by side to out.
func Run(ctx context.Context, cfg Config, logger *slog.Logger, out io.Writer) error {
	if cfg.Renders < 1 || cfg.DumpRenders < 1 || cfg.Concurrency < 1 || cfg.WarmUp < 0 || cfg.ActionRenders < 0 || cfg.BlockRenders < 0 {
		return errors.New("renders, dump-renders and concurrency must be at least 1, warm-up, actions and block at least 0")
	}
	// Checked here because rod downloads a browser when it has none.
	if _, err := os.Stat(cfg.Chromium); err != nil {
		return fmt.Errorf("chromium not found at %s (set -chromium or DISTILL_CHROMIUM): %w", cfg.Chromium, err)
	}
	counted := &served{}
	srv, shellSize, apiSize, err := serve(counted)
	if err != nil {
		return err
	}
	defer srv.Close()

	fmt.Fprintf(out, "bench-render: app shell (%.1f KiB) filling #app from fetch() of %.1f KiB JSON, on %s\n",
		float64(shellSize)/1024, float64(apiSize)/1024, srv.URL)
	fmt.Fprintf(out, "%s, concurrency %d, %d CPUs, %d untimed warm-up renders each way\n\n",
		cfg.Chromium, cfg.Concurrency, runtime.NumCPU(), cfg.WarmUp)
	fmt.Fprintf(out, "%-22s %8s %9s %12s %9s %9s\n", "", "renders", "seconds", "renders/min", "p50 ms", "p95 ms")
	row := func(name string, s summary) {
		fmt.Fprintf(out, "%-22s %8d %9.2f %12.1f %9.0f %9.0f\n", name, s.Renders, s.Wall.Seconds(), s.PerMinute, ms(s.P50), ms(s.P95))
	}

	pool, err := measurePool(ctx, cfg, logger, srv.URL)
	if err != nil {
		return err
	}
	row("distill pool (warm)", pool)
	dump, err := measureDumpDOM(ctx, cfg, srv.URL)
	if err != nil {
		return err
	}
	row("chromium --dump-dom", dump)

	fmt.Fprintf(out, "\npool / dump-dom throughput: %.2fx\n", pool.PerMinute/dump.PerMinute)
	fmt.Fprintf(out, "dump-dom / pool latency:    p50 %.2fx, p95 %.2fx\n", ms(dump.P50)/ms(pool.P50), ms(dump.P95)/ms(pool.P95))

	if cfg.ActionRenders > 0 {
		if err := runActions(ctx, cfg, logger, srv.URL, out); err != nil {
			return err
		}
	}
	if cfg.BlockRenders > 0 {
		return runBlock(ctx, cfg, logger, srv.URL, counted, out)
	}
	return nil
}

// runActions measures the actions workload both ways and writes the rows.
func runActions(ctx context.Context, cfg Config, logger *slog.Logger, base string, out io.Writer) error {
	fmt.Fprintf(out, "\nactions: an infinite feed (%d items, --scroll) and a \"load more\" list (%d items, click repeat), alternately\n", feedItems, listItems)
	fmt.Fprintf(out, "%-22s %8s %9s %12s %9s %9s %8s\n", "", "renders", "seconds", "renders/min", "p50 ms", "p95 ms", "items")
	row := func(name string, s actionsResult) {
		fmt.Fprintf(out, "%-22s %8d %9.2f %12.1f %9.0f %9.0f %8d\n", name, s.Renders, s.Wall.Seconds(), s.PerMinute, ms(s.P50), ms(s.P95), s.Items)
	}
	pool, err := measureActionsPool(ctx, cfg, logger, base)
	if err != nil {
		return fmt.Errorf("actions: %w", err)
	}
	row("distill steps (warm)", pool)
	peer, err := measureActionsRod(ctx, cfg, base)
	if err != nil {
		return fmt.Errorf("actions: %w", err)
	}
	row("go-rod, fresh browser", peer)
	fmt.Fprintf(out, "distill / go-rod throughput: %.2fx\n", pool.PerMinute/peer.PerMinute)
	return nil
}

// runBlock measures the media page with and without --block and writes
// what blocking saved.
func runBlock(ctx context.Context, cfg Config, logger *slog.Logger, base string, counted *served, out io.Writer) error {
	fmt.Fprintf(out, "\nblock: the app shell with %d images, a web font and a video\n", mediaImages)
	fmt.Fprintf(out, "%-28s %8s %12s %9s %9s %12s\n", "", "renders", "renders/min", "p50 ms", "p95 ms", "KiB/render")
	row := func(name string, s blockResult) {
		fmt.Fprintf(out, "%-28s %8d %12.1f %9.0f %9.0f %12.1f\n", name, s.Renders, s.PerMinute, ms(s.P50), ms(s.P95), s.BytesPerRender/1024)
	}
	plain, err := measureBlock(ctx, cfg, logger, base, counted, nil)
	if err != nil {
		return fmt.Errorf("block: %w", err)
	}
	row("distill pool", plain)
	blocked, err := measureBlock(ctx, cfg, logger, base, counted, []string{"images", "fonts", "media"})
	if err != nil {
		return fmt.Errorf("block: %w", err)
	}
	row("--block images,fonts,media", blocked)
	fmt.Fprintf(out, "saved per render: %.1f KiB (%.0f%%), p50 %.0f ms\n",
		(plain.BytesPerRender-blocked.BytesPerRender)/1024, 100*(1-blocked.BytesPerRender/plain.BytesPerRender), ms(plain.P50)-ms(blocked.P50))
	return nil
}
