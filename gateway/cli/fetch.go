package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"distill.dev/gateway/output"
	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/citations"
	"distill.dev/services/extractor/extract"
	"distill.dev/services/extractor/pick"
	"distill.dev/services/fetcher/identity"
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
	pick               pickFlags
	// The reading options.
	query               string
	chunk, chunkOverlap int32
	citations           bool
	diffWith            string
	brand               bool
	parts               pagePartFlags
}

// pickFlags pick values, records and elements out of the page, as JSON.
type pickFlags struct {
	css, xpath          string
	fields              []string
	findText, findRegex string
	exact, caseSens     bool
	similar             bool
	maxMatches          int32
}

func (f *outputFlags) register(fs *pflag.FlagSet) {
	f.format = newEnum("markdown", "markdown", "text", "json", formatJSONL, "llm", "html")
	f.profile = newEnum("article", "article", "full", "metadata")
	fs.Var(f.format, "format", "output format: markdown, text, json, jsonl (one {url, ok, result | error} a line), llm (compact context for a model: title, URL, metadata line, content with numbered citations) or html (the cleaned main-content HTML)")
	fs.StringVar(&f.selector, "selector", "", "extract the elements matching this CSS selector instead of running a profile, as the page's content (Markdown); to pick values or records as JSON, use --select")
	fs.Var(f.profile, "profile", "content selection: article (main content), full (whole page) or metadata; ignored with --selector")
	fs.BoolVar(&f.stats, "stats", false, "print token-savings stats to stderr (inside the JSON with --format json)")
	fs.BoolVar(&f.diagnostics, "diagnostics", false, "print extraction-quality diagnostics to stderr; with --format json, include them in the JSON")
	fs.Int64Var(&f.maxOutputTokens, "max-output-tokens", 0, "truncate the Markdown or text output to this many tokens (0 = no limit)")
	fs.BoolVar(&f.links, "links", false, "extract the main content's links as structured data")
	fs.BoolVar(&f.linksAll, "links-all", false, "extract every link of the page, for crawling")
	fs.BoolVar(&f.tables, "tables", false, "extract tables as structured data")
	fs.BoolVar(&f.actions, "actions", false, "extract the operable action tree (links, forms, buttons, downloads)")
	fs.Int32Var(&f.maxActions, "max-actions", 0, "cap each action category, form fields and select options at this many entries (0 = no cap)")
	fs.StringVar(&f.query, "query", "", "keep only the paragraphs, lists, tables and code blocks that answer this question, under their headings, within --max-output-tokens (4000 when unset); the page is unchanged when nothing matches")
	fs.Int32Var(&f.chunk, "chunk", 0, "print the content as chunks of at most this many tokens, built from whole blocks, one JSON object a line ({url, index, heading_path, tokens, text}); with --format json, as the page's \"chunks\"")
	fs.Int32Var(&f.chunkOverlap, "chunk-overlap", 0, "repeat up to this many tokens from the end of each chunk at the start of the next (at most half of --chunk)")
	fs.StringVar(&f.diffWith, "diff-with", "", "compare the page with an earlier --format json answer for it, read from `OLD.json`: prints the fields, links and blocks that changed and a unified diff, or \"unchanged\" (with --format json, the page's \"diff\")")
	fs.BoolVar(&f.brand, "brand", false, "print the site's brand instead of the page: name, logos, favicon, theme and style colours, fonts, social profiles (with --format json, the page's \"brand\")")
	fs.BoolVar(&f.citations, "citations", false, "move link and image URLs into numbered footnotes under a closing \"## Links\" section (Markdown and JSON)")
	f.pick.register(fs)
	f.parts.register(fs)
}

func (f *pickFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.css, "select", "", "print what this CSS selector matches as JSON values: each element's text, or with a trailing ::attr(NAME), ::text or ::html that attribute (links absolute), its own text or its HTML; unlike --selector, which keeps the matches as the page's Markdown")
	fs.StringVar(&f.xpath, "xpath", "", "print what this XPath 1.0 expression picks as JSON values (elements and text nodes their text, attributes their value), or the one value of count(), string() and the like")
	fs.StringArrayVar(&f.fields, "field", nil, "turn each match of --select, --xpath or --similar into a record whose field `NAME=SELECTOR` runs inside the match (CSS; XPath with --xpath unless --similar), taking its first value or null; repeatable")
	fs.StringVar(&f.findText, "find-text", "", "print the deepest elements whose visible text contains this text, any case, as {selector, text} with a selector that picks each alone")
	fs.StringVar(&f.findRegex, "find-regex", "", "as --find-text, with a regular expression (RE2 syntax)")
	fs.BoolVar(&f.exact, "exact", false, "--find-text and --find-regex match the whole visible text")
	fs.BoolVar(&f.caseSens, "case-sensitive", false, "--find-text and --find-regex match letter case")
	fs.BoolVar(&f.similar, "similar", false, "from the first match of --select, --xpath, --find-text or --find-regex, print every element like it (the other items of its list, grid or table) and one CSS selector that picks them all; with --field, records")
	fs.Int32Var(&f.maxMatches, "max-matches", 0, "print at most this many matches, and say on stderr how many were left out (0 = no cap)")
}

func (f *pickFlags) apply(fs *pflag.FlagSet, o *distillv1.FetchOptions) {
	o.Select = f.css
	o.Xpath = f.xpath
	o.FindText = f.findText
	o.FindRegex = f.findRegex
	o.Exact = f.exact
	o.CaseSensitive = f.caseSens
	o.Similar = f.similar
	for _, kv := range f.fields {
		// A field without = has no selector, which the check names.
		name, sel, _ := strings.Cut(kv, "=")
		o.Fields = append(o.Fields, &distillv1.PickField{Name: name, Selector: sel})
	}
	if fs.Changed("max-matches") && f.maxMatches != 0 {
		o.MaxMatches = &f.maxMatches
	}
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
	o.Query = f.query
	o.Chunk = f.chunk
	o.ChunkOverlap = f.chunkOverlap
	o.Citations = f.citations
	o.Brand = f.brand
	setIfChanged(fs, "max-output-tokens", &o.MaxOutputTokens, &f.maxOutputTokens)
	// 0 means no cap, as for the other limits; negative values are left for
	// validation to refuse.
	if fs.Changed("max-actions") && f.maxActions != 0 {
		o.MaxActions = &f.maxActions
	}
	f.pick.apply(fs, o)
	f.parts.apply(o)
}

// readDiffWith reads --diff-with's file into o: a page's JSON, as
// --format json printed it.
func (f *outputFlags) readDiffWith(o *distillv1.FetchOptions) error {
	if f.diffWith == "" {
		return nil
	}
	b, err := os.ReadFile(f.diffWith)
	if err != nil {
		return fmt.Errorf("--diff-with: %w", err)
	}
	old, err := output.ReadDistilled(b)
	if err != nil {
		return fmt.Errorf("--diff-with %s: %w", f.diffWith, err)
	}
	o.DiffWith = old
	return nil
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
	// identity is --browser, the network identity of the plain HTTP
	// fetches; browser are the headless renderer's flags.
	identity *enumFlag
	browser  browserFlags
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
	f.identity = newEnum(identity.DistillName, identity.Names()...)
	fs.Var(f.identity, "browser", "network identity of the HTTP fetches (TLS, HTTP/2 and headers): distill (the honest crawler's, Go's client saying it is distill) or chrome (the installed Chromium's)")
	f.browser.register(fs)
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
	if fs.Changed("browser") {
		o.Browser = f.identity.value
	}
	f.browser.apply(fs, o)
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

// formatJSONL is --format jsonl: JSON Lines, one URL's outcome a line.
const formatJSONL = "jsonl"

var (
	formats = map[string]distillv1.Format{
		"markdown": distillv1.Format_FORMAT_MARKDOWN,
		"text":     distillv1.Format_FORMAT_TEXT,
		"json":     distillv1.Format_FORMAT_JSON,
		"llm":      distillv1.Format_FORMAT_LLM,
		"html":     distillv1.Format_FORMAT_HTML,
		// JSON Lines is JSON for the services; only the CLI's printing differs.
		formatJSONL: distillv1.Format_FORMAT_JSON,
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

// fetchCmd is one `distill fetch`: the flags cobra fills and the
// arguments it was given; run does the work.
type fetchCmd struct {
	fetchFlags
	server, input, outDir string
	failOnHTTP            bool
	archive               warcFlag

	g     *globals
	fs    *pflag.FlagSet
	stdin io.Reader
	args  []string
}

func newFetchCmd(g *globals) *cobra.Command {
	c := &fetchCmd{g: g}
	cmd := &cobra.Command{
		Use:   "fetch <url>...",
		Short: "Fetch pages and print them distilled",
		Long: "Fetch one or more pages and print them as Markdown, text or JSON.\n\n" +
			"Several URLs are fetched concurrently as a batch and printed in input order:\n" +
			"Markdown and text under a '==> URL <==' header each, JSON as an array of\n" +
			"{url, ok, result | error}; --format jsonl prints one such object a line as each\n" +
			"URL completes, and --output-dir writes one file per URL. The exit code is 0 when\n" +
			"every URL succeeded and 1 otherwise, with one line per failure on stderr. A page\n" +
			"that answers an HTTP error (404, 500) is printed with a note on stderr, and counts\n" +
			"as a failure with --fail-on-http-error.",
		Example: "  distill fetch https://example.com/\n" +
			"  distill fetch --format json --stats https://example.com/a https://example.com/b\n" +
			"  distill fetch --input urls.txt --format jsonl > pages.jsonl\n" +
			"  distill fetch --input - --output-dir pages/ < urls.txt",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !cmd.Flags().Changed("input") {
				return usagef("requires at least 1 arg(s), only received 0: give URLs, or --input FILE")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			c.fs, c.stdin, c.args = cmd.Flags(), cmd.InOrStdin(), args
			return c.run(cmd.Context())
		},
	}
	c.register(cmd.Flags())
	cmd.SetUsageFunc(groupedUsage)
	return cmd
}

// register declares fetch's flags: the fetch flags crawl shares, then
// fetch's own.
func (c *fetchCmd) register(fs *pflag.FlagSet) {
	c.fetchFlags.register(fs)
	fs.BoolVar(&c.failOnHTTP, "fail-on-http-error", false, "count a page that answers an HTTP error status (400 and above) as a failure, as curl --fail does: exit 1, ok: false in batches")
	fs.StringVar(&c.input, "input", "", "read URLs from `FILE` (- for standard input), one a line; blank lines and # comments are skipped; positional URLs come first")
	fs.StringVar(&c.outDir, "output-dir", "", "write each page to a file of its own in folder `DIR` (named after its URL) and an index.jsonl of {url, ok, file | error}, instead of to stdout")
	serverFlag(fs, c.g, &c.server, "fetch")
	c.archive.register(fs)
	fs.SortFlags = false
	groupFetchFlags(fs)
}

// run fetches the URLs and prints them. Everything the command line asks
// for that cannot be done is refused before anything is fetched.
func (c *fetchCmd) run(ctx context.Context) error {
	c.args = c.browser.screenshotKind(c.fs, c.args)
	opts, err := c.options()
	if err != nil {
		return err
	}
	if err := c.check(opts); err != nil {
		return err
	}
	urls, err := batchURLs(c.args, c.input, c.stdin)
	if err != nil {
		return usageError{err}
	}
	if opts.GetDiffWith() != nil && len(urls) > 1 {
		return usagef("--diff-with compares one page with its earlier answer; got %d URLs", len(urls))
	}
	r := &fetchRun{
		printer: printer{g: c.g, format: c.format.value, opts: opts, failOnHTTP: c.failOnHTTP, server: c.server, allowLocal: c.allowLocal, artifactFile: c.browser.outFile},
		outDir:  c.outDir,
		backend: backend{server: c.server, allowLocal: opts.GetAllowLocal(), workers: fetchopts.Concurrency(opts), warc: c.archive, command: "distill fetch"},
	}
	return r.run(ctx, urls)
}

// options are the FetchOptions the flags give, with the files they name
// read, and valid.
func (c *fetchCmd) options() (*distillv1.FetchOptions, error) {
	if err := checkMaxBytes(c.fs, c.maxBytes); err != nil {
		return nil, err
	}
	if err := c.browser.load(); err != nil {
		return nil, usageError{err}
	}
	opts := c.fetchFlags.options(c.fs)
	if err := c.readDiffWith(opts); err != nil {
		return nil, usageError{err}
	}
	if err := fetchopts.Validate(opts); err != nil {
		return nil, usageError{err}
	}
	return opts, nil
}

// check refuses what valid options still cannot do in this run: --warc
// where no exchange is seen, browser work and page parts the output cannot
// carry, and a selector, tag selector or pick that cannot run.
func (c *fetchCmd) check(opts *distillv1.FetchOptions) error {
	if err := c.archive.check(opts.GetJs(), c.server); err != nil {
		return err
	}
	if err := c.browser.check(opts, c.format.value, len(c.args)+boolInt(c.fs.Changed("input"))); err != nil {
		return usageError{err}
	}
	if err := extract.CheckSelector(opts.GetSelector()); err != nil {
		return usageError{err}
	}
	if err := checkPageParts(opts, c.format.value); err != nil {
		return err
	}
	return checkPick(opts)
}

// fetchRun is one `distill fetch`: where pages come from, and where they go.
type fetchRun struct {
	printer
	outDir  string
	backend backend
}

func (r *fetchRun) run(ctx context.Context, urls []string) (runErr error) {
	// A folder that cannot be written is known before anything is fetched.
	out, err := r.sink(urls)
	if err != nil {
		return err
	}
	svc, done, err := r.backend.open(ctx, r.g)
	if err != nil {
		return err
	}
	defer func() { runErr = done(runErr) }()
	bar := newProgress(r.g.stderr, len(urls), fetchopts.Concurrency(r.opts))
	err = r.read(ctx, svc, urls, r.deliverTo(out, bar))
	bar.finish()
	if err != nil && ctx.Err() == nil {
		return r.explain(err, "")
	}
	return out.close()
}

// read asks svc for the pages and delivers each as it comes: one URL is
// a fetch, whose failure is its page's; several are a batch.
func (r *fetchRun) read(ctx context.Context, svc fetchService, urls []string, deliver func(int, output.BatchItem)) error {
	sent := withBodyReport(r.opts)
	if len(urls) != 1 {
		return svc.Batch(ctx, &distillv1.FetchBatchRequest{Urls: urls, Options: sent}, func(res *distillv1.FetchBatchResponse) {
			deliver(int(res.GetIndex()), output.ItemOf(res))
		})
	}
	it := output.BatchItem{URL: urls[0]}
	res, err := svc.Fetch(ctx, &distillv1.FetchRequest{Url: urls[0], Options: sent})
	if err != nil {
		it.Err = err
	} else {
		it.Result = res.GetDistilled()
	}
	deliver(0, it)
	return nil
}

// deliverTo judges each answer and hands it to out, counting it on the
// progress line.
func (r *fetchRun) deliverTo(out sink, bar *progress) func(int, output.BatchItem) {
	_, kept := out.(*keptSink)
	return func(i int, it output.BatchItem) {
		r.judge(&it)
		if kept {
			out.put(i, it)
		} else {
			// Streamed lines and notes go out while the progress line is
			// off the screen, so that the two never share a line.
			bar.pause(func() { out.put(i, it) })
		}
		bar.step(it.Err != nil)
	}
}

// printer decides what an answered URL counts as and prints it.
type printer struct {
	g *globals
	// format is the --format value: markdown, text, json or jsonl.
	format     string
	opts       *distillv1.FetchOptions
	failOnHTTP bool
	// server and allowLocal shape the hints failures get.
	server     string
	allowLocal bool
	// artifactFile is -o: where the screenshot, PDF or MHTML goes.
	artifactFile string
}

// judge turns an HTTP error page into a failure when asked to, and gives
// a failure the hint that fixes it.
func (p *printer) judge(it *output.BatchItem) {
	if it.Err != nil {
		it.Err = p.explain(it.Err, it.URL)
		return
	}
	if p.artifactFile != "" {
		if err := writeArtifact(p.artifactFile, it.Result); err != nil {
			it.Err, it.Result = err, nil
			return
		}
	}
	it.Truncated = it.Result.GetDiagnostics().GetTruncatedBody()
	if !p.opts.GetDiagnostics() {
		it.Result.Diagnostics = nil
	}
	if p.failOnHTTP && it.Result.GetStatus() >= 400 {
		it.Err, it.Result = errors.New(httpNote(*it)), nil
	}
}

// httpNote says which status an error page answered with.
func httpNote(it output.BatchItem) string {
	return fmt.Sprintf("%s answered %s", it.URL, output.HTTPStatus(it.Result.GetStatus()))
}

// notes writes what stderr says of one URL: its failure, or the HTTP error
// status of its page, and the stats and diagnostics the JSON formats carry
// inside.
func (p *printer) notes(it output.BatchItem) {
	w := p.g.stderr
	if it.Err != nil {
		fmt.Fprintf(w, "distill: %s\n", oneLine(it.Err.Error()))
		return
	}
	if it.Result.GetStatus() >= 400 {
		fmt.Fprintf(w, "distill: %s\n", httpNote(it))
	}
	if it.Truncated {
		fmt.Fprintf(w, "distill: note: %s: body longer than --max-bytes; distilled its first %d bytes (raise --max-bytes for the rest)\n",
			it.URL, fetchopts.MaxBytes(p.opts))
	}
	if n := it.Result.GetPicked().GetOmitted(); n > 0 {
		fmt.Fprintf(w, "distill: note: %s: %s left out (--max-matches; at most %d)\n", it.URL, output.MoreMatches(int(n)), pick.MaxMatches)
	}
	if fetchopts.Format(p.opts) == distillv1.Format_FORMAT_JSON {
		return
	}
	if p.opts.GetStats() {
		fmt.Fprintln(w, output.StatsLine(it.Result))
	}
	if p.opts.GetDiagnostics() {
		fmt.Fprintln(w, output.DiagnosticsLine(it.Result))
	}
}

// printAll prints items once all are in: the notes, then the pages in
// input order.
func (p *printer) printAll(items []output.BatchItem, batch bool) error {
	var failed int
	for _, it := range items {
		if it.Err != nil {
			failed++
		}
		p.notes(it)
	}
	format := fetchopts.Format(p.opts)
	var err error
	switch {
	case p.format == formatJSONL:
		for _, it := range items {
			if err = output.WriteBatchLine(p.g.stdout, it); err != nil {
				break
			}
		}
	case format == distillv1.Format_FORMAT_JSON && batch:
		err = output.WriteBatchJSON(p.g.stdout, items)
	case format == distillv1.Format_FORMAT_JSON && failed == 0:
		err = output.WriteJSON(p.g.stdout, items[0].Result)
	case p.opts.GetChunk() > 0:
		// Chunks name their page, so a batch's need no headers.
		for _, it := range items {
			if it.Err == nil {
				if err = output.WriteChunkLines(p.g.stdout, it.Result); err != nil {
					break
				}
			}
		}
	case batch:
		p.citeAcross(items, format)
		err = output.WriteBatch(p.g.stdout, items, format)
	case failed == 0:
		err = output.WritePage(p.g.stdout, items[0].Result, format)
	}
	if err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	if failed > 0 {
		return exitError{ExitFailure}
	}
	return nil
}

// citeAcross renumbers the citations of pages printed one after another,
// so that a number names one URL in the whole output, as one page's do.
func (p *printer) citeAcross(items []output.BatchItem, format distillv1.Format) {
	md := format == distillv1.Format_FORMAT_MARKDOWN && p.opts.GetCitations()
	if !md && format != distillv1.Format_FORMAT_LLM {
		return
	}
	n := citations.New(0)
	for _, it := range items {
		switch {
		case it.Err != nil || it.Result.GetDiff() != nil || it.Result.GetBrand() != nil:
		case md:
			it.Result.Markdown = n.Renumber(it.Result.GetMarkdown())
		default:
			it.Result.Text = n.Renumber(it.Result.GetText())
		}
	}
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// checkPick refuses picking options that cannot run, before anything is
// fetched.
func checkPick(opts *distillv1.FetchOptions) error {
	if err := pick.Check(opts); err != nil {
		return usageError{err}
	}
	return nil
}
