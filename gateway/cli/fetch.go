package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"distill.dev/gateway/app"
	"distill.dev/gateway/output"
	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/extract"
	"distill.dev/services/platform/envflag"
)

// outputFlags choose what is extracted and how it is printed; fetch and
// extract share them.
type outputFlags struct {
	format, profile    *enumFlag
	selector           string
	stats, diagnostics bool
	maxOutputTokens    int64
	links, linksAll    bool
	tables             bool
	actions            bool
	maxActions         int32
}

func (f *outputFlags) register(fs *pflag.FlagSet) {
	f.format = newEnum("markdown", "markdown", "text", "json")
	f.profile = newEnum("article", "article", "full", "metadata")
	fs.Var(f.format, "format", "output format: markdown, text or json")
	fs.StringVar(&f.selector, "selector", "", "extract the elements matching this CSS selector instead of running a profile")
	fs.Var(f.profile, "profile", "content selection: article (main content), full (whole page) or metadata; ignored with --selector")
	fs.BoolVar(&f.stats, "stats", false, "print token-savings stats to stderr (inside the JSON with --format json)")
	fs.BoolVar(&f.diagnostics, "diagnostics", false, "print extraction-quality diagnostics to stderr; with --format json, include them in the JSON")
	fs.Int64Var(&f.maxOutputTokens, "max-output-tokens", 0, "truncate the Markdown or text output to this many tokens (0 = no limit)")
	fs.BoolVar(&f.links, "links", false, "extract the main content's links as structured data")
	fs.BoolVar(&f.linksAll, "links-all", false, "extract every link of the page, for crawling")
	fs.BoolVar(&f.tables, "tables", false, "extract tables as structured data")
	fs.BoolVar(&f.actions, "actions", false, "extract the operable action tree (links, forms, buttons, downloads)")
	fs.Int32Var(&f.maxActions, "max-actions", 0, "cap each action category, form fields and select options at this many entries (0 = no cap)")
}

func (f *outputFlags) apply(fs *pflag.FlagSet, o *distillv1.FetchOptions) {
	o.Format = formats[f.format.value]
	o.Selector = f.selector
	o.Profile = profiles[f.profile.value]
	o.Stats = f.stats
	o.Diagnostics = f.diagnostics
	o.ExtractLinks = f.links
	o.LinksFull = f.linksAll
	o.ExtractTables = f.tables
	o.ExtractActions = f.actions
	setIfChanged(fs, "max-output-tokens", &o.MaxOutputTokens, &f.maxOutputTokens)
	// 0 means no cap, as for the other limits; negative values are left for
	// validation to refuse.
	if fs.Changed("max-actions") && f.maxActions != 0 {
		o.MaxActions = &f.maxActions
	}
}

// fetchFlags are the `distill fetch` flags, named as in the public surface.
type fetchFlags struct {
	outputFlags
	js                 *enumFlag
	timeout            int32
	maxBytes           int64
	concurrency        int32
	allowLocal         bool
	maxRetries         int32
	perHostConcurrency int32
	rateLimit          float64
	respectRobots      bool
	noCache            bool
	cacheTTL           int64
	jsWait             int32
	jsWaitFor          string
}

func (f *fetchFlags) register(fs *pflag.FlagSet) {
	f.outputFlags.register(fs)
	f.js = newEnum("auto", "off", "auto", "always")
	fs.Int32Var(&f.timeout, "timeout", fetchopts.DefaultTimeoutSecs, "request timeout in seconds")
	fs.Int64Var(&f.maxBytes, "max-bytes", fetchopts.DefaultMaxBytes, "cap on the decoded response body, in bytes")
	fs.Int32Var(&f.concurrency, "concurrency", fetchopts.DefaultConcurrency, "max concurrent requests of a multi-URL batch")
	fs.Var(f.js, "js", "headless JavaScript rendering fallback: off, auto or always")
	fs.Int32Var(&f.jsWait, "js-wait", 0, "headless render: wait budget in milliseconds for the page to settle")
	fs.StringVar(&f.jsWaitFor, "js-wait-for", "", "headless render: wait until this CSS selector appears (a clear timeout error if it never does)")
	fs.BoolVar(&f.allowLocal, "allow-local", false, "permit loopback targets (loopback only; private ranges stay refused)")
	fs.Int32Var(&f.maxRetries, "max-retries", fetchopts.DefaultMaxRetries, "retry transient failures (connect errors, timeouts, 429, 5xx)")
	fs.Int32Var(&f.perHostConcurrency, "per-host-concurrency", fetchopts.DefaultPerHostConcurrency, "max simultaneous requests per host (0 = unlimited)")
	fs.Float64Var(&f.rateLimit, "rate-limit", 0, "per-host rate limit in requests per second (0 = off)")
	fs.BoolVar(&f.respectRobots, "respect-robots", false, "obey each site's robots.txt (RFC 9309) and its Crawl-delay; a disallowed URL fails")
	fs.BoolVar(&f.noCache, "no-cache", false, "neither read nor write the on-disk fetch cache")
	fs.Int64Var(&f.cacheTTL, "cache-ttl", fetchopts.DefaultCacheTTLSecs, "cache freshness window in seconds (0 = always refetch)")
}

// options turns the flags into FetchOptions. Flags left at their default are
// left unset, so the defaults live in one place (fetchopts).
func (f *fetchFlags) options(fs *pflag.FlagSet) *distillv1.FetchOptions {
	o := &distillv1.FetchOptions{
		Js:         jsModes[f.js.value],
		AllowLocal: f.allowLocal,
		RateLimit:  f.rateLimit,
		NoCache:    f.noCache,
		JsWaitFor:  f.jsWaitFor,
	}
	f.outputFlags.apply(fs, o)
	o.RespectRobots = f.respectRobots
	setIfChanged(fs, "timeout", &o.TimeoutSecs, &f.timeout)
	setIfChanged(fs, "max-bytes", &o.MaxBytes, &f.maxBytes)
	setIfChanged(fs, "concurrency", &o.Concurrency, &f.concurrency)
	setIfChanged(fs, "max-retries", &o.MaxRetries, &f.maxRetries)
	setIfChanged(fs, "per-host-concurrency", &o.PerHostConcurrency, &f.perHostConcurrency)
	setIfChanged(fs, "cache-ttl", &o.CacheTtl, &f.cacheTTL)
	setIfChanged(fs, "js-wait", &o.JsWait, &f.jsWait)
	return o
}

// setIfChanged points *dst at v when the flag was given on the command
// line, so a flag left alone leaves its option unset and its default to
// fetchopts.
func setIfChanged[T any](fs *pflag.FlagSet, name string, dst **T, v *T) {
	if fs.Changed(name) {
		*dst = v
	}
}

var (
	formats = map[string]distillv1.Format{
		"markdown": distillv1.Format_FORMAT_MARKDOWN,
		"text":     distillv1.Format_FORMAT_TEXT,
		"json":     distillv1.Format_FORMAT_JSON,
	}
	profiles = map[string]distillv1.Profile{
		"article":  distillv1.Profile_PROFILE_ARTICLE,
		"full":     distillv1.Profile_PROFILE_FULL,
		"metadata": distillv1.Profile_PROFILE_METADATA,
	}
	jsModes = map[string]distillv1.JsMode{
		"off":    distillv1.JsMode_JS_MODE_OFF,
		"auto":   distillv1.JsMode_JS_MODE_AUTO,
		"always": distillv1.JsMode_JS_MODE_ALWAYS,
	}
)

func newFetchCmd(g *globals) *cobra.Command {
	f := &fetchFlags{}
	var server string
	cmd := &cobra.Command{
		Use:   "fetch <url>...",
		Short: "Fetch pages and print them distilled",
		Long: "Fetch one or more pages and print them as Markdown, text or JSON.\n\n" +
			"Several URLs are fetched concurrently as a batch and printed in input order:\n" +
			"Markdown and text under a '==> URL <==' header each, JSON as an array of\n" +
			"{url, ok, result | error}. The exit code is 0 when every URL succeeded and 1\n" +
			"otherwise, with one line per failure on stderr.",
		Example: "  distill fetch https://example.com/\n" +
			"  distill fetch --format json --stats https://example.com/a https://example.com/b",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, urls []string) error {
			opts := f.options(cmd.Flags())
			if err := fetchopts.Validate(opts); err != nil {
				return usageError{err}
			}
			// A selector that cannot run is refused before anything is
			// fetched.
			if err := extract.CheckSelector(opts.GetSelector()); err != nil {
				return usageError{err}
			}
			return runFetch(cmd, g, server, urls, opts)
		},
	}
	f.register(cmd.Flags())
	cmd.Flags().StringVar(&server, "server", g.env.String(envflag.Server, ""), envflag.Usage("fetch through the distill gateway at this gRPC address, host:port, instead of in this process", envflag.Server))
	cmd.Flags().SortFlags = false
	return cmd
}

func runFetch(cmd *cobra.Command, g *globals, server string, urls []string, opts *distillv1.FetchOptions) error {
	ctx := cmd.Context()
	var svc fetchService
	if server != "" {
		gw, err := dialGateway(server)
		if err != nil {
			return usageError{err}
		}
		defer gw.Close()
		svc = gw
	} else {
		sys, err := app.Open(ctx, g.logger(), g.appConfig(fetchopts.Concurrency(opts)))
		if err != nil {
			return err
		}
		defer sys.Close()
		svc = serveAPI(g.logger(), sys)
	}

	items := make([]output.BatchItem, len(urls))
	sent := withBodyReport(opts)
	if len(urls) == 1 {
		items[0].URL = urls[0]
		res, err := svc.Fetch(ctx, &distillv1.FetchRequest{Url: urls[0], Options: sent})
		if err != nil {
			items[0].Err = err
		} else {
			items[0].Result = res.GetDistilled()
		}
	} else {
		bar := newProgress(g.stderr, len(urls))
		err := svc.Batch(ctx, &distillv1.FetchBatchRequest{Urls: urls, Options: sent}, func(r *distillv1.FetchBatchResponse) {
			it := output.ItemOf(r)
			items[r.GetIndex()] = it
			bar.step(it.Err != nil)
		})
		bar.finish()
		if err != nil && ctx.Err() == nil {
			return err
		}
	}
	return printFetch(g, items, opts, len(urls) > 1)
}

func printFetch(g *globals, items []output.BatchItem, opts *distillv1.FetchOptions, batch bool) error {
	format := fetchopts.Format(opts)
	var failed int
	for _, it := range items {
		if it.Err != nil {
			failed++
			fmt.Fprintf(g.stderr, "distill: %s\n", oneLine(it.Err.Error()))
			continue
		}
		noteTruncated(g, it, opts)
		if format == distillv1.Format_FORMAT_JSON {
			continue
		}
		if opts.GetStats() {
			fmt.Fprintln(g.stderr, output.StatsLine(it.Result))
		}
		if opts.GetDiagnostics() {
			fmt.Fprintln(g.stderr, output.DiagnosticsLine(it.Result))
		}
	}

	var err error
	switch {
	case format == distillv1.Format_FORMAT_JSON && batch:
		err = output.WriteBatchJSON(g.stdout, items)
	case format == distillv1.Format_FORMAT_JSON && failed == 0:
		err = output.WriteJSON(g.stdout, items[0].Result)
	case batch:
		err = output.WriteBatch(g.stdout, items, format)
	case failed == 0:
		err = output.WritePage(g.stdout, items[0].Result, format)
	}
	if err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	if failed > 0 {
		return exitError{ExitFailure}
	}
	return nil
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
