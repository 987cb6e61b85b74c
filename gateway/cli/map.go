package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/protobuf/proto"

	"distill.dev/gateway/api"
	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/identity"
	"distill.dev/services/fetcher/mapsite"
	"distill.dev/services/fetcher/siteurl"
)

// mapFlags are the `distill map` flags.
type mapFlags struct {
	format       *enumFlag
	limit        int
	pages        int
	noCrawl      bool
	query        string
	pathPrefix   string
	include      []string
	exclude      []string
	subdomains   bool
	ignoreRobots bool
	delay        durationMillis
	allowLocal   bool
	timeout      int32
	server       string
	warc         warcFlag
	// identity is --browser.
	identity *enumFlag
}

// browser is the --browser given, "" when none was: the default is the
// server's.
func (c *mapFlags) browser() string {
	if !c.identity.set {
		return ""
	}
	return c.identity.value
}

// mapCmd is one `distill map`: the flags cobra fills and the site's URL;
// run does the work.
type mapCmd struct {
	mapFlags
	g   *globals
	url string
}

func newMapCmd(g *globals) *cobra.Command {
	c := &mapCmd{g: g, mapFlags: mapFlags{format: newEnum("text", "text", "json"), delay: durationMillis(mapsite.DefaultDelay.Milliseconds())}}
	cmd := &cobra.Command{
		Use:   "map <url>",
		Short: "List a site's URLs without fetching their content",
		Long: "List the URLs of the site at <url>, one a line (or a JSON array), without\n" +
			"distilling them. They come from the sitemaps the site's robots.txt declares, or\n" +
			"from /sitemap.xml and /sitemap_index.xml (indexes, gzip and text sitemaps alike),\n" +
			"and, when those list fewer than 200, from a short breadth-first crawl of the\n" +
			"site's links (--map-pages pages at most). Two spellings of one page (http and\n" +
			"https, a trailing slash, a #fragment, utm_* and other tracking parameters) are\n" +
			"listed once. The site is the start URL's host; robots.txt is obeyed unless\n" +
			"--ignore-robots, and requests to one host are --delay apart. What could not be\n" +
			"read is noted on stderr. With --server the map runs on a distill serve, reached\n" +
			"over gRPC, which prints the same.",
		Example: "  distill map https://example.com/\n" +
			"  distill map --path-prefix /docs --query 'install on windows' --map-limit 20 https://example.com/\n" +
			"  distill map --format json --no-map-crawl https://example.com/ > urls.json",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c.url = args[0]
			return c.run(cmd.Context())
		},
	}
	c.register(cmd.Flags())
	return cmd
}

// register declares map's flags.
func (c *mapCmd) register(fs *pflag.FlagSet) {
	fs.Var(c.format, "format", "output format: text (one URL a line) or json (an array of URLs)")
	fs.IntVar(&c.limit, "map-limit", mapsite.DefaultLimit, "list at most this many URLs (0 = every URL found, up to 100000)")
	fs.IntVar(&c.pages, "map-pages", mapsite.DefaultPages, "pages the short crawl reads when sitemaps list fewer than 200 URLs")
	fs.BoolVar(&c.noCrawl, "no-map-crawl", false, "list what the sitemaps list; never crawl")
	fs.StringVar(&c.query, "query", "", "rank the URLs by the words of their paths: whole-word matches first, rare words weigh more")
	fs.StringVar(&c.pathPrefix, "path-prefix", "", "keep URLs whose path is at or under this prefix (by segment: /docs takes /docs/a, not /docs-old)")
	fs.StringArrayVar(&c.include, "include-paths", nil, "keep only URLs whose path and query match this regular expression (repeat for more)")
	fs.StringArrayVar(&c.exclude, "exclude-paths", nil, "drop URLs whose path and query match this regular expression, and do not crawl them (repeat for more)")
	fs.BoolVar(&c.subdomains, "include-subdomains", false, "take in the start host's subdomains (and the bare domain of a www. host)")
	fs.BoolVar(&c.ignoreRobots, "ignore-robots", false, "neither obey robots.txt nor drop the URLs it disallows (its Sitemap lines are read either way)")
	fs.Var(&c.delay, "delay", "shortest time between two requests to one host: milliseconds, or a duration such as 1s")
	fs.BoolVar(&c.allowLocal, "allow-local", false, "permit loopback targets (loopback only; private ranges stay refused)")
	fs.Int32Var(&c.timeout, "timeout", fetchopts.DefaultTimeoutSecs, "timeout of each request, in seconds")
	c.identity = newEnum(identity.DistillName, identity.Names()...)
	fs.Var(c.identity, "browser", "network identity of the map's requests (TLS, HTTP/2 and headers): distill (the honest crawler's) or chrome (the installed Chromium's)")
	serverFlag(fs, c.g, &c.server, "map")
	c.warc.register(fs)
	fs.SortFlags = false
}

// run maps the site and prints its URLs. Everything the command line
// asks for that cannot be done is refused before anything is fetched.
func (c *mapCmd) run(ctx context.Context) (runErr error) {
	if err := c.check(); err != nil {
		return err
	}
	req := c.request()
	svc, done, err := backend{server: c.server, allowLocal: c.allowLocal, warc: c.warc, command: "distill map"}.open(ctx, c.g)
	if err != nil {
		return err
	}
	defer func() { runErr = done(runErr) }()
	// The whole map is kept before anything is printed: a JSON array is
	// one document, and the notes, which come last, go out first.
	var m siteMap
	if err := svc.MapSite(ctx, req, m.add); err != nil {
		p := printer{g: c.g, allowLocal: c.allowLocal, server: c.server}
		return p.explain(err, req.GetUrl())
	}
	return c.print(&m)
}

// check refuses map flags that cannot work.
func (c *mapCmd) check() error {
	if err := fetchopts.Validate(&distillv1.FetchOptions{TimeoutSecs: &c.timeout}); err != nil {
		return usageError{err}
	}
	if c.limit < 0 || c.pages < 0 || c.delay < 0 {
		return usagef("--map-limit, --map-pages and --delay cannot be negative")
	}
	// The map's short crawl reads pages without rendering them.
	if err := c.warc.check(distillv1.JsMode_JS_MODE_UNSPECIFIED, c.server); err != nil {
		return err
	}
	// A pattern that does not compile is the command line's
	// mistake, found before anything is fetched.
	scope := siteurl.ScopeOptions{PathPrefix: c.pathPrefix, Include: c.include, Exclude: c.exclude}
	if _, err := siteurl.NewScope("http://example.com/", scope); err != nil {
		return usageError{err}
	}
	return nil
}

// request is the map the flags ask for.
func (c *mapCmd) request() *distillv1.MapRequest {
	return &distillv1.MapRequest{
		Url:               c.url,
		PathPrefix:        c.pathPrefix,
		IncludePaths:      c.include,
		ExcludePaths:      c.exclude,
		IncludeSubdomains: c.subdomains,
		IgnoreRobots:      c.ignoreRobots,
		DelayMs:           proto.Int64(int64(c.delay)),
		MapLimit:          proto.Int32(int32(min(c.limit, math.MaxInt32))),
		MapPages:          proto.Int32(int32(min(c.pages, math.MaxInt32))),
		NoMapCrawl:        c.noCrawl,
		Query:             c.query,
		AllowLocal:        c.allowLocal,
		TimeoutSecs:       &c.timeout,
		Browser:           c.browser(),
	}
}

// siteMap is a map as its answers bring it in.
type siteMap struct {
	urls, notes []string
	pagesRead   int32
}

func (m *siteMap) add(r *distillv1.MapResponse) error {
	m.urls = append(m.urls, r.GetUrls()...)
	m.notes = append(m.notes, r.GetNotes()...)
	m.pagesRead += r.GetPagesRead()
	return nil
}

// print writes the map's notes to stderr, then its URLs to stdout in the
// --format asked for.
func (c *mapCmd) print(m *siteMap) error {
	g := c.g
	for _, n := range m.notes {
		fmt.Fprintf(g.stderr, "distill: note: %s\n", oneLine(n))
	}
	if len(m.urls) == 0 {
		fmt.Fprintf(g.stderr, "distill: note: no URLs found for %s (pages read: %d)\n", c.url, m.pagesRead)
	}
	if c.format.value == "json" {
		urls := m.urls
		if urls == nil {
			urls = []string{}
		}
		b, err := json.MarshalIndent(urls, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(g.stdout, "%s\n", b)
		return err
	}
	w := bufio.NewWriter(g.stdout)
	for _, u := range m.urls {
		w.WriteString(u)
		w.WriteByte('\n')
	}
	return w.Flush()
}

// mapService is what `distill map` needs: the API in this process, or a
// gateway reached over gRPC with --server.
type mapService interface {
	MapSite(ctx context.Context, req *distillv1.MapRequest, deliver func(*distillv1.MapResponse) error) error
}

func (c *gatewayClient) MapSite(ctx context.Context, req *distillv1.MapRequest, deliver func(*distillv1.MapResponse) error) error {
	if err := api.StreamMap(ctx, c.client, req, deliver); err != nil {
		return c.fail(err)
	}
	return nil
}

// durationMillis is a delay given in milliseconds ("250") or as a Go
// duration ("1.5s").
type durationMillis int64

func (d *durationMillis) String() string { return strconv.FormatInt(int64(*d), 10) }
func (d *durationMillis) Type() string   { return "ms" }
func (d *durationMillis) Set(s string) error {
	if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
		*d = durationMillis(ms)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is neither milliseconds nor a duration such as 250ms", s)
	}
	*d = durationMillis(v.Milliseconds())
	return nil
}
