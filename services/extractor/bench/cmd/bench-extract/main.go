// Command bench-extract scores distill against go-trafilatura and
// go-readability on a corpus with ground truth.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"

	"distill.dev/services/extractor/bench/harness"
)

func main() {
	var cfg harness.Config
	var only string
	flag.StringVar(&cfg.Corpus, "corpus", "../../../../shared/bench/scrapinghub",
		"corpus `dir`: html/<id>.html and ground-truth.json, or a WCXB split (html/<id>.html.gz, ground-truth/<id>.json) or repository (its dev split)")
	flag.StringVar(&cfg.OutDir, "out", "../../../bench-out", "`dir` for the predictions")
	flag.StringVar(&only, "only", "", "comma-separated extractors to run (distill, go-trafilatura, go-readability, and distill-rules: distill without its block model); empty runs the first three")
	flag.StringVar(&cfg.Type, "type", "", "score only the pages of this page `type` (article, forum, product, collection, listing, documentation, service, other)")
	flag.IntVar(&cfg.Worst, "worst", 0, "list each extractor's `n` worst pages of each page type")
	flag.IntVar(&cfg.Rounds, "rounds", 3, "timed passes per extractor, alternating; the fastest counts")
	flag.BoolVar(&cfg.Confusion, "confusion", false, "print true x predicted page types for the extractors that report them (distill, from diagnostics.page_type)")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to `file`")
	flag.Parse()
	if only != "" {
		cfg.Only = strings.Split(only, ",")
	}

	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench-extract:", err)
			os.Exit(1)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "bench-extract:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := harness.Run(ctx, cfg, logger, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench-extract:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
}
