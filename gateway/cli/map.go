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
	"google.golang.org/protobuf/proto"

	"distill.dev/gateway/api"
	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
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
}

func newMapCmd(g *globals) *cobra.Command {
	f := &mapFlags{format: newEnum("text", "text", "json"), delay: durationMillis(mapsite.DefaultDelay.Milliseconds())}
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
			if err := fetchopts.Validate(&distillv1.FetchOptions{TimeoutSecs: &f.timeout}); err != nil {
				return usageError{err}
			}
			if f.limit < 0 || f.pages < 0 || f.delay < 0 {
				return usagef("--map-limit, --map-pages and --delay cannot be negative")
			}
			// The map's short crawl reads pages without rendering them.
			if err := f.warc.check(distillv1.JsMode_JS_MODE_UNSPECIFIED, f.server); err != nil {
				return err
			}
			req := &distillv1.MapRequest{
				Url:               args[0],
				PathPrefix:        f.pathPrefix,
				IncludePaths:      f.include,
				ExcludePaths:      f.exclude,
				IncludeSubdomains: f.subdomains,
				IgnoreRobots:      f.ignoreRobots,
				DelayMs:           proto.Int64(int64(f.delay)),
				MapLimit:          proto.Int32(int32(min(f.limit, math.MaxInt32))),
				MapPages:          proto.Int32(int32(min(f.pages, math.MaxInt32))),
				NoMapCrawl:        f.noCrawl,
				Query:             f.query,
				AllowLocal:        f.allowLocal,
				TimeoutSecs:       &f.timeout,
			}
			// A pattern that does not compile is the command line's
			// mistake, found before anything is fetched.
			scope := siteurl.ScopeOptions{PathPrefix: f.pathPrefix, Include: f.include, Exclude: f.exclude}
			if _, err := siteurl.NewScope("http://example.com/", scope); err != nil {
				return usageError{err}
			}
			return runMap(cmd, g, f, req)
		},
	}
	fs := cmd.Flags()
	fs.Var(f.format, "format", "output format: text (one URL a line) or json (an array of URLs)")
	fs.IntVar(&f.limit, "map-limit", mapsite.DefaultLimit, "list at most this many URLs (0 = every URL found, up to 100000)")
	fs.IntVar(&f.pages, "map-pages", mapsite.DefaultPages, "pages the short crawl reads when sitemaps list fewer than 200 URLs")
	fs.BoolVar(&f.noCrawl, "no-map-crawl", false, "list what the sitemaps list; never crawl")
	fs.StringVar(&f.query, "query", "", "rank the URLs by the words of their paths: whole-word matches first, rare words weigh more")
	fs.StringVar(&f.pathPrefix, "path-prefix", "", "keep URLs whose path is at or under this prefix (by segment: /docs takes /docs/a, not /docs-old)")
	fs.StringArrayVar(&f.include, "include-paths", nil, "keep only URLs whose path and query match this regular expression (repeat for more)")
	fs.StringArrayVar(&f.exclude, "exclude-paths", nil, "drop URLs whose path and query match this regular expression, and do not crawl them (repeat for more)")
	fs.BoolVar(&f.subdomains, "include-subdomains", false, "take in the start host's subdomains (and the bare domain of a www. host)")
	fs.BoolVar(&f.ignoreRobots, "ignore-robots", false, "neither obey robots.txt nor drop the URLs it disallows (its Sitemap lines are read either way)")
	fs.Var(&f.delay, "delay", "shortest time between two requests to one host: milliseconds, or a duration such as 1s")
	fs.BoolVar(&f.allowLocal, "allow-local", false, "permit loopback targets (loopback only; private ranges stay refused)")
	fs.Int32Var(&f.timeout, "timeout", fetchopts.DefaultTimeoutSecs, "timeout of each request, in seconds")
	serverFlag(fs, g, &f.server, "map")
	f.warc.register(fs)
	fs.SortFlags = false
	return cmd
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

func runMap(cmd *cobra.Command, g *globals, f *mapFlags, req *distillv1.MapRequest) (runErr error) {
	svc, done, err := backend{server: f.server, allowLocal: f.allowLocal, warc: f.warc, command: "distill map"}.open(cmd.Context(), g)
	if err != nil {
		return err
	}
	defer func() { runErr = done(runErr) }()
	// The whole map is kept before anything is printed: a JSON array is
	// one document, and the notes, which come last, go out first.
	var urls, notes []string
	var pagesRead int32
	err = svc.MapSite(cmd.Context(), req, func(r *distillv1.MapResponse) error {
		urls = append(urls, r.GetUrls()...)
		notes = append(notes, r.GetNotes()...)
		pagesRead += r.GetPagesRead()
		return nil
	})
	if err != nil {
		p := printer{g: g, allowLocal: f.allowLocal, server: f.server}
		return p.explain(err, req.GetUrl())
	}
	for _, n := range notes {
		fmt.Fprintf(g.stderr, "distill: note: %s\n", oneLine(n))
	}
	if len(urls) == 0 {
		fmt.Fprintf(g.stderr, "distill: note: no URLs found for %s (pages read: %d)\n", req.GetUrl(), pagesRead)
	}
	if f.format.value == "json" {
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
	for _, u := range urls {
		w.WriteString(u)
		w.WriteByte('\n')
	}
	return w.Flush()
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
