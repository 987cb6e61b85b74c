package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/protobuf/proto"

	"distill.dev/gateway/api"
	"distill.dev/gateway/output"
	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/extract"
	"distill.dev/services/fetcher/crawl"
	"distill.dev/services/fetcher/siteurl"
)

// crawlFlags are the `distill crawl` flags: fetch's output, content,
// network, rendering and cache flags, applied to every page, and the
// crawl's own.
type crawlFlags struct {
	fetchFlags
	warc             warcFlag
	depth, maxPages  int
	delay            durationMillis
	ignoreRobots     bool
	subdomains       bool
	pathPrefix       string
	include, exclude []string
	stopWhenAnswered bool
	state            string
	outDir           string
	server           string
	failOnHTTP       bool
}

// crawlFlagNames are the crawl's own flags, listed in their own help
// section.
var crawlFlagNames = []string{"depth", "max-pages", "delay", "ignore-robots", "include-subdomains", "path-prefix",
	"include-paths", "exclude-paths", "stop-when-answered", "crawl-state"}

// crawlCmd is one `distill crawl`: the flags cobra fills and the start
// URL; run does the work.
type crawlCmd struct {
	crawlFlags
	g   *globals
	fs  *pflag.FlagSet
	url string
}

func newCrawlCmd(g *globals) *cobra.Command {
	c := &crawlCmd{g: g, crawlFlags: crawlFlags{delay: durationMillis(crawl.DefaultDelay.Milliseconds())}}
	cmd := &cobra.Command{
		Use:   "crawl <url>",
		Short: "Read a site from a start page, following its links, and print each page distilled",
		Long: "Read the site at <url>: the start page, then the pages it links to, --depth links\n" +
			"deep and --max-pages pages at most, each distilled with fetch's flags and printed as\n" +
			"it completes: Markdown or text under a '==> URL <==' header, --format jsonl one\n" +
			"{url, depth, ok, result | error} a line, --format json an array of them, or one file\n" +
			"a page with --output-dir. The site is the start URL's host (--include-subdomains,\n" +
			"--path-prefix, --include-paths and --exclude-paths narrow or widen it); a page is read\n" +
			"once however it is linked (http and https, a trailing slash, a #fragment and tracking\n" +
			"parameters do not make another page), and a redirect out of the site is not followed.\n" +
			"robots.txt is obeyed unless --ignore-robots, and requests to one host start --delay\n" +
			"apart (or the site's Crawl-delay, when longer), however many pages are read at once.\n\n" +
			"--query makes the crawl best first: the links whose words, path and paragraph hold\n" +
			"the question's rarer words are read first, and each page's JSON carries its relevance\n" +
			"(0 to 1); --stop-when-answered stops once a page rated 0.8 or more was followed by 8\n" +
			"rated no higher. --crawl-state FILE keeps the crawl's progress: run the same command\n" +
			"again after an interruption, even a kill, and it resumes where it stopped, printing\n" +
			"only the pages it had not printed. The exit code is 1 when a page failed.",
		Example: "  distill crawl https://example.com/docs/\n" +
			"  distill crawl --depth 3 --max-pages 200 --format jsonl https://example.com/ > site.jsonl\n" +
			"  distill crawl --query 'how do I rotate the API key' --stop-when-answered https://docs.example.com/\n" +
			"  distill crawl --crawl-state site.state --output-dir site/ https://example.com/",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c.fs, c.url = cmd.Flags(), args[0]
			return c.run(cmd.Context())
		},
	}
	fs := cmd.Flags()
	c.fetchFlags.register(fs)
	c.warc.register(fs)
	c.adaptFetchFlags(fs)
	c.registerCrawl(fs)
	fs.SortFlags = false
	groupFetchFlags(fs)
	// fetch's --query, which here steers the crawl too.
	query := fs.Lookup("query")
	query.Usage = "read the links most likely to answer this question first, rate each page's relevance (0 to 1), and keep only the blocks of each page that answer it (Markdown, JSON and llm formats)"
	query.Annotations[groupAnnotation] = []string{"Crawl"}
	cmd.SetUsageFunc(groupedUsage)
	return cmd
}

// adaptFetchFlags says what fetch's flags mean in a crawl, where some
// read otherwise, and adds --fail-on-http-error's crawl wording.
func (c *crawlCmd) adaptFetchFlags(fs *pflag.FlagSet) {
	// A crawl obeys robots.txt unless told not to; fetch's opt-in flag
	// would say nothing here.
	_ = fs.MarkHidden("respect-robots")
	fs.Lookup("concurrency").Usage = "pages read at once (requests to one host still start --delay apart)"
	fs.Lookup("format").Usage = "output format: markdown, text, json (an array), or jsonl (one {url, depth, ok, result | error} a line)"
	fs.BoolVar(&c.failOnHTTP, "fail-on-http-error", false, "count a page that answers an HTTP error status (400 and above) as a failure: exit 1, ok: false")
}

// registerCrawl declares the crawl's own flags.
func (c *crawlCmd) registerCrawl(fs *pflag.FlagSet) {
	fs.IntVar(&c.depth, "depth", crawl.DefaultDepth, "follow links this many steps from the start page (0 = the start page alone)")
	fs.IntVar(&c.maxPages, "max-pages", crawl.DefaultMaxPages, "read at most this many pages (0 = no cap)")
	fs.Var(&c.delay, "delay", "shortest time between two requests to one host, shared by every page in flight: milliseconds, or a duration such as 1s")
	fs.BoolVar(&c.ignoreRobots, "ignore-robots", false, "neither obey robots.txt nor its Crawl-delay")
	fs.BoolVar(&c.subdomains, "include-subdomains", false, "take in the start host's subdomains (and the bare domain of a www. host)")
	fs.StringVar(&c.pathPrefix, "path-prefix", "", "follow only URLs whose path is at or under this prefix (by segment: /docs takes /docs/a, not /docs-old)")
	fs.StringArrayVar(&c.include, "include-paths", nil, "print only pages whose path and query match this regular expression; others are read for their links (repeat for more)")
	fs.StringArrayVar(&c.exclude, "exclude-paths", nil, "neither read nor print URLs whose path and query match this regular expression (repeat for more)")
	fs.BoolVar(&c.stopWhenAnswered, "stop-when-answered", false, "with --query: stop once a page rated 0.8 or more has been followed by 8 rated no higher")
	fs.StringVar(&c.state, "crawl-state", "", "keep the crawl's progress in `FILE`; the same command run again resumes it")
	fs.StringVar(&c.outDir, "output-dir", "", "write each page to a file of its own in folder `DIR` (named after its URL) and an index.jsonl of {url, ok, file | error}, instead of to stdout")
	serverFlag(fs, c.g, &c.server, "crawl")
}

// run crawls the site and prints its pages as they come. Everything the
// command line asks for that cannot be done is refused before anything
// is fetched.
func (c *crawlCmd) run(ctx context.Context) error {
	opts, err := c.options()
	if err != nil {
		return err
	}
	if err := c.check(opts); err != nil {
		return err
	}
	return c.crawl(ctx, c.request(opts))
}

// options are the FetchOptions each page is read with, as the fetch
// flags give them, and valid.
func (c *crawlCmd) options() (*distillv1.FetchOptions, error) {
	if err := checkMaxBytes(c.fs, c.maxBytes); err != nil {
		return nil, err
	}
	opts := c.fetchFlags.options(c.fs)
	// The crawl's query ranks links in every format; the pages'
	// block filter is the crawl's to set, where the format has
	// blocks to keep.
	opts.Query = ""
	if err := fetchopts.Validate(opts); err != nil {
		return nil, usageError{err}
	}
	if err := extract.CheckSelector(opts.GetSelector()); err != nil {
		return nil, usageError{err}
	}
	if err := checkPageParts(opts, c.format.value); err != nil {
		return nil, err
	}
	return opts, nil
}

// check refuses crawl flags that cannot work, alone or together.
func (c *crawlCmd) check(opts *distillv1.FetchOptions) error {
	switch {
	case c.depth < 0 || c.maxPages < 0 || c.delay < 0:
		return usagef("--depth, --max-pages and --delay cannot be negative")
	case c.stopWhenAnswered && strings.TrimSpace(c.query) == "":
		return usagef("--stop-when-answered needs --query: it stops once a page answers the query")
	case c.server != "" && c.state != "":
		return usagef("--crawl-state keeps a crawl that runs in this process; a --server crawl runs on the server")
	}
	if err := c.warc.check(opts.GetJs(), c.server); err != nil {
		return err
	}
	scope := siteurl.ScopeOptions{PathPrefix: c.pathPrefix, Include: c.include, Exclude: c.exclude}
	if _, err := siteurl.NewScope("http://example.com/", scope); err != nil {
		return usageError{err}
	}
	return nil
}

// request is the crawl the flags ask for, its pages read with opts.
func (c *crawlCmd) request(opts *distillv1.FetchOptions) *distillv1.CrawlRequest {
	return &distillv1.CrawlRequest{
		Url:               c.url,
		Options:           opts,
		Depth:             proto.Int32(int32(min(c.depth, math.MaxInt32))),
		MaxPages:          proto.Int32(int32(min(c.maxPages, math.MaxInt32))),
		Concurrency:       proto.Int32(int32(fetchopts.Concurrency(opts))),
		DelayMs:           proto.Int64(int64(c.delay)),
		IgnoreRobots:      c.ignoreRobots,
		IncludeSubdomains: c.subdomains,
		PathPrefix:        c.pathPrefix,
		IncludePaths:      c.include,
		ExcludePaths:      c.exclude,
		Query:             c.query,
		StopWhenAnswered:  c.stopWhenAnswered,
	}
}

// crawlService is what `distill crawl` needs: the API in this process, or
// a gateway reached over gRPC with --server.
type crawlService interface {
	CrawlSite(ctx context.Context, req *distillv1.CrawlRequest, journal crawl.Journal, deliver func(*distillv1.CrawlResponse) error) error
}

func (c *gatewayClient) CrawlSite(ctx context.Context, req *distillv1.CrawlRequest, _ crawl.Journal, deliver func(*distillv1.CrawlResponse) error) error {
	if err := api.StreamCrawl(ctx, c.client, req, deliver); err != nil {
		return c.fail(err)
	}
	return nil
}

// crawl runs req where the flags say and prints its pages, then the
// notes of its summary.
func (c *crawlCmd) crawl(ctx context.Context, req *distillv1.CrawlRequest) (runErr error) {
	p := &printer{g: c.g, format: c.format.value, opts: req.GetOptions(), failOnHTTP: c.failOnHTTP, server: c.server, allowLocal: c.allowLocal}
	journal, closeState, resuming, err := c.openState()
	if err != nil {
		return err
	}
	defer closeState()
	out, err := newCrawlSink(p, c.outDir, resuming)
	if err != nil {
		return err
	}
	svc, done, err := backend{server: c.server, allowLocal: c.allowLocal, workers: fetchopts.Concurrency(req.GetOptions()), warc: c.warc, command: "distill crawl"}.open(ctx, c.g)
	if err != nil {
		return err
	}
	defer func() { runErr = done(runErr) }()
	ev := &crawlEvents{p: p, out: out, state: c.state, first: true}
	err = svc.CrawlSite(ctx, req, journal, ev.take)
	closeErr := out.close()
	if err != nil {
		return p.explain(err, req.GetUrl())
	}
	ev.closingNotes()
	return closeErr
}

// openState opens --crawl-state, the journal the crawl keeps its progress
// in (nil without the flag), and says whether it holds a crawl to resume.
func (c *crawlCmd) openState() (journal crawl.Journal, closeState func(), resuming bool, err error) {
	if c.state == "" {
		return nil, func() {}, false, nil
	}
	sf, err := crawl.OpenStateFile(c.state)
	if err != nil {
		return nil, nil, false, usageError{err}
	}
	if st, err := os.Stat(c.state); err == nil && st.Size() > 0 {
		resuming = true
	}
	return sf, func() { _ = sf.Close() }, resuming, nil
}

// crawlEvents takes a crawl's events as they come: it prints each page,
// and keeps what the notes at the end say.
type crawlEvents struct {
	p     *printer
	out   *crawlSink
	state string
	// first is true until an event other than a page: the first
	// summary says, when the crawl resumes, how many pages were done
	// before.
	first       bool
	resumedFrom int
	printed     int
	summary     *distillv1.CrawlStatusResponse
}

func (e *crawlEvents) take(r *distillv1.CrawlResponse) error {
	switch ev := r.GetEvent().(type) {
	case *distillv1.CrawlResponse_Page:
		it := output.BatchItem{URL: ev.Page.GetUrl()}
		if f := ev.Page.GetError(); f != nil {
			it.Err = failure.FromProto(f)
		} else {
			it.Result = ev.Page.GetResult()
		}
		e.p.judge(&it)
		e.printed++
		return e.out.put(it, int(ev.Page.GetDepth()))
	case *distillv1.CrawlResponse_Summary:
		if e.first && ev.Summary.GetPagesDone() > 0 {
			e.resumedFrom = int(ev.Summary.GetPagesDone())
			fmt.Fprintf(e.p.g.stderr, "distill: note: resuming crawl %s from %s: %d pages done before\n", r.GetJobId(), e.state, e.resumedFrom)
		}
		e.summary = ev.Summary
	}
	e.first = false
	return nil
}

// closingNotes says on stderr what the crawl's summary notes, and why it
// printed nothing or stopped early.
func (e *crawlEvents) closingNotes() {
	w := e.p.g.stderr
	for _, n := range e.summary.GetNotes() {
		fmt.Fprintf(w, "distill: note: %s\n", oneLine(n))
	}
	if e.resumedFrom > 0 && e.printed == 0 {
		fmt.Fprintf(w, "distill: note: the crawl in %s had finished (%s): nothing left to read; remove the file to crawl again\n", e.state, e.summary.GetStopReason())
	}
	if e.summary.GetStopReason() == crawl.StopAnswered {
		fmt.Fprintf(w, "distill: note: stopped: a page answered the query and the %d read after it rated no higher\n", 8)
	}
}

// crawlSink is where a crawl's pages go, as they come.
type crawlSink struct {
	p   *printer
	mu  sync.Mutex
	w   *bufio.Writer
	dir *dirSink
	n   int
	// failed says a page failed; err is the first write that did.
	failed bool
	err    error
}

func newCrawlSink(p *printer, outDir string, resuming bool) (*crawlSink, error) {
	s := &crawlSink{p: p, w: bufio.NewWriter(p.g.stdout)}
	if outDir == "" {
		return s, nil
	}
	mode := os.O_TRUNC
	nm := newNamer(p.extension())
	if resuming {
		// The files of the pages done before are kept, and their names
		// stay taken.
		mode = os.O_APPEND
		if err := takeIndexed(nm, outDir); err != nil {
			return nil, usagef("--output-dir: %v", err)
		}
	}
	index, err := openIndex(outDir, mode)
	if err != nil {
		return nil, err
	}
	s.dir = &dirSink{p: p, dir: outDir, index: index, name: func(_ int, u string) string { return nm.take(u) }}
	return s, nil
}

// takeIndexed marks as taken the files an earlier run listed in the
// index.
func takeIndexed(nm *namer, dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, indexName))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		var l indexLine
		if json.Unmarshal([]byte(line), &l) == nil && l.File != "" {
			nm.taken[strings.ToLower(l.File)] = true
		}
	}
	return nil
}

// put prints one page: its section, line or file.
func (s *crawlSink) put(it output.BatchItem, depth int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failed = s.failed || it.Err != nil
	if s.dir != nil {
		s.dir.put(0, it)
		return nil
	}
	s.p.notes(it)
	if s.err != nil {
		return nil
	}
	var err error
	switch format := fetchopts.Format(s.p.opts); {
	case s.p.format == formatJSONL:
		err = output.WriteCrawlLine(s.w, it, depth)
	case format == distillv1.Format_FORMAT_JSON:
		sep := ",\n"
		if s.n == 0 {
			sep = "[\n"
		}
		if _, err = io.WriteString(s.w, sep); err == nil {
			err = output.WriteCrawlLine(s.w, it, depth)
		}
	default:
		if s.n > 0 {
			_, err = io.WriteString(s.w, "\n")
		}
		if err == nil {
			err = output.WriteBatch(s.w, []output.BatchItem{it}, format)
		}
	}
	s.n++
	if err == nil {
		// Each page reaches the reader as it completes.
		err = s.w.Flush()
	}
	s.err = err
	return nil
}

func (s *crawlSink) close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dir != nil {
		return s.dir.close()
	}
	if s.err == nil && s.p.format != formatJSONL && fetchopts.Format(s.p.opts) == distillv1.Format_FORMAT_JSON {
		closing := "\n]\n"
		if s.n == 0 {
			closing = "[]\n"
		}
		_, s.err = io.WriteString(s.w, closing)
	}
	if s.err == nil {
		s.err = s.w.Flush()
	}
	if s.err != nil {
		return fmt.Errorf("write output: %w", s.err)
	}
	if s.failed {
		return exitError{ExitFailure}
	}
	return nil
}
