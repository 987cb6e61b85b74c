// Package crawl measures distill crawl on generated sites served on
// loopback: several hosts (127.0.0.1, .2, ...), one of them asking for a
// Crawl-delay, slow pages, redirects and links that differ only by
// tracking parameters or fragments. Each host is crawled whole, all at
// once: by distill in one process, by clusters of 1, 2, 4... fetcher
// processes (the crawl's pages work items any of them takes), and, at the
// same concurrency per host and per-host delay, by colly and by crawlee's
// CheerioCrawler, peers that run only here (colly is a module of its own,
// crawlee is installed by npm from its lock file). The figures are pages
// per second, the most requests any host saw within one delay window
// (politeness: it must be 1), the two closest requests, duplicate fetches
// (identity: 0) and pages found. Requests are timed by the kernel when
// they arrive (package arrivals), not when a handler gets a core: on a
// machine the crawl keeps busy, handlers run late and together.
package crawl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"distill.dev/gateway/api"
	"distill.dev/gateway/internal/arrivals"
	"distill.dev/gateway/internal/localcluster"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// Config chooses the workload.
type Config struct {
	// Hosts and Pages: how many hosts, and pages on each.
	Hosts, Pages int
	// Concurrency is each crawl's pages in flight.
	Concurrency int
	// Delay is the crawl's per-host delay; the first host asks for
	// CrawlDelay instead when that is longer.
	Delay, CrawlDelay time.Duration
	// Slow is how long one page in SlowEvery takes to answer (1: every
	// page; 0 means 10).
	Slow      time.Duration
	SlowEvery int
	// Workers is each fetcher process's pages at once; 0 means as many as
	// the crawls have in flight in all, so that one fetcher can hold them.
	Workers int
	// Depth is how many links from each start page are followed; 0 means
	// 10.
	Depth int
	// Fetchers are the sizes of the clusters to crawl with, besides the
	// single process.
	Fetchers []int
	// Peers adds colly and crawlee's CheerioCrawler at the same
	// concurrency and per-host delay.
	Peers bool
	// Root is the repository's root: binaries and peers are built from it.
	Root string
	// Gaps prints, under each crawler, how far apart the requests to its
	// busiest host came: where a crawl loses time against its floor.
	Gaps bool
}

// site is one generated host and what it saw.
type site struct {
	host  string
	srv   *http.Server
	pages int
	delay time.Duration
	slow  time.Duration
	every int

	mu   sync.Mutex
	hits map[string]int
	at   []time.Time
	path []string
}

func (s *site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	s.at = append(s.at, arrivals.Of(r))
	s.path = append(s.path, r.URL.Path)
	s.mu.Unlock()
	var i int
	switch {
	case r.URL.Path == "/robots.txt":
		if s.delay > 0 {
			fmt.Fprintf(w, "User-agent: *\nCrawl-delay: %g\n", s.delay.Seconds())
		}
		return
	case r.URL.Path == "/":
		i = 0
	case strings.HasPrefix(r.URL.Path, "/moved/"):
		// An old address of a page: one redirect to where it lives.
		http.Redirect(w, r, "/p/"+strings.TrimPrefix(r.URL.Path, "/moved/"), http.StatusMovedPermanently)
		return
	default:
		if _, err := fmt.Sscanf(r.URL.Path, "/p/%d", &i); err != nil || i <= 0 || i >= s.pages {
			http.NotFound(w, r)
			return
		}
	}
	if i%s.every == s.every-1 {
		time.Sleep(s.slow)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(page(i, s.pages))
}

var vocabulary = strings.Fields(`the of and to in a is that for it as was with be by on not this are or from at which
system network protocol server request latency throughput queue worker message stream cluster deployment
history government economy market policy election report council committee climate energy transport city
river mountain village harbour museum library university article reader editor evidence interview`)

// page renders page i of a site of n: about 15 KiB of prose and a tree of
// links (each page links to ten children, i*10+1 to i*10+10), plus links
// back home, to a sibling with a tracking parameter and, now and then, to
// an old address that redirects.
func page(i, n int) []byte {
	r := rand.New(rand.NewPCG(uint64(i), 0xc4a41))
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html><html><head><title>Page %d</title></head><body><nav><a href=\"/\">Home</a> <a href=\"/p/%d?utm_source=nav\">Next</a></nav><main><h1>Page %d</h1>", i, min(i+1, n-1), i)
	for range 40 {
		b.WriteString("<p>")
		for j := range 50 {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(vocabulary[r.IntN(len(vocabulary))])
		}
		b.WriteString(".</p>")
	}
	b.WriteString("<ul>")
	for c := i*10 + 1; c <= i*10+10 && c < n; c++ {
		if c%97 == 0 {
			fmt.Fprintf(&b, `<li><a href="/moved/%d">Page %d</a></li>`, c, c)
			continue
		}
		fmt.Fprintf(&b, `<li><a href="/p/%d#top">Page %d</a></li>`, c, c)
	}
	b.WriteString("</ul></main></body></html>")
	return []byte(b.String())
}

// Run serves the sites and crawls them, all hosts at once, with distill
// in this process, with clusters of each size in cfg.Fetchers, and with
// the peers, one after another, writing a line of figures for each.
func Run(ctx context.Context, cfg Config, out io.Writer) error {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return err
	}
	sites, err := serveSites(cfg)
	defer func() {
		for _, s := range sites {
			_ = s.srv.Close()
		}
	}()
	if err != nil {
		return err
	}
	starts := make([]string, len(sites))
	for i, s := range sites {
		starts[i] = "http://" + s.host + "/"
	}

	fmt.Fprintf(out, "bench-crawl: %d hosts x %d pages, concurrency %d per host, --delay %v (host 1: Crawl-delay %v), one page in %d %v slow, depth %d, %d workers per fetcher, %d CPUs\n",
		cfg.Hosts, cfg.Pages, cfg.Concurrency, cfg.Delay, cfg.CrawlDelay, cfg.SlowEvery, cfg.Slow, cfg.Depth, cfg.Workers, runtime.NumCPU())
	fmt.Fprintf(out, "%-26s %8s %9s %8s %9s %11s %10s %6s %6s\n", "crawler", "pages", "seconds", "pages/s", "floor s", "max/window", "closest", "dup", "robots")

	// Every crawler runs in processes of its own, so that this one only
	// serves the sites.
	bin, err := os.MkdirTemp("", "distill-bench-crawl-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(bin) }()
	fmt.Fprintf(out, "building distill's binaries…\n")
	names := []string{"distill"}
	if len(cfg.Fetchers) > 0 {
		names = nil
	}
	if err := localcluster.Build(cfg.Root, bin, names...); err != nil {
		return err
	}
	for _, c := range crawlers(cfg, bin, starts) {
		if err := measure(ctx, cfg, c, sites, out); err != nil {
			return err
		}
	}
	fmt.Fprintln(out, "floor s: the crawler's own requests to its busiest host, one delay (or Crawl-delay) apart, take at least this long. max/window: the most requests any host saw within its delay (Crawl-delay on host 1); it must be 1. closest: the two closest requests to one host. dup: requests for a path already served (tracking parameters, fragments, redirects); it must be 0. robots: the most times one host's robots.txt was read.")
	fmt.Fprintln(out, "requests are timed by the kernel as they arrive, not when a handler gets to run")
	return nil
}

// withDefaults checks cfg and fills in the defaults its fields document.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Hosts < 1 || cfg.Hosts > 250 || cfg.Pages < 2 || cfg.Concurrency < 1 {
		return cfg, errors.New("hosts must be 1 to 250, pages at least 2 and concurrency at least 1")
	}
	if cfg.Depth == 0 {
		cfg.Depth = 10
	}
	if cfg.SlowEvery <= 0 {
		cfg.SlowEvery = 10
	}
	if cfg.Workers <= 0 {
		cfg.Workers = cfg.Concurrency * cfg.Hosts
	}
	return cfg, nil
}

// serveSites serves a generated site on each host, 127.0.0.1 and up, the
// first asking for cfg.CrawlDelay. It returns the sites it started even
// when a later one fails, for the caller to close.
func serveSites(cfg Config) ([]*site, error) {
	var sites []*site
	for h := range cfg.Hosts {
		lis, err := arrivals.Listen(fmt.Sprintf("127.0.0.%d:0", h+1))
		if err != nil {
			return sites, fmt.Errorf("listen on 127.0.0.%d (loopback aliases are needed): %w", h+1, err)
		}
		s := &site{host: lis.Addr().String(), pages: cfg.Pages, slow: cfg.Slow, every: cfg.SlowEvery, hits: map[string]int{}}
		if h == 0 {
			s.delay = cfg.CrawlDelay
		}
		s.srv = arrivals.Server(s)
		go func() { _ = s.srv.Serve(lis) }()
		sites = append(sites, s)
	}
	return sites, nil
}

// crawler is one row of the report: a name and a crawl of every start
// page that returns the pages it found.
type crawler struct {
	name string
	run  func(ctx context.Context) (int, error)
}

// crawlers are the crawls cfg asks for, in the report's order: distill in
// one process, the clusters, then the peers. bin holds distill's binaries.
func crawlers(cfg Config, bin string, starts []string) []crawler {
	crawlers := []crawler{{"distill (single binary)", func(ctx context.Context) (int, error) {
		return crawlSingleBinary(ctx, cfg, bin, starts)
	}}}
	for _, n := range cfg.Fetchers {
		name := fmt.Sprintf("distill (%d fetchers)", n)
		if n == 1 {
			name = "distill (1 fetcher)"
		}
		crawlers = append(crawlers, crawler{name, func(ctx context.Context) (int, error) {
			return crawlInCluster(ctx, cfg, bin, n, starts)
		}})
	}
	if cfg.Peers {
		crawlers = append(crawlers,
			crawler{"colly v2", func(ctx context.Context) (int, error) { return crawlColly(ctx, cfg, bin, cfg.Concurrency, starts) }},
			// colly spaces requests per parallel slot, not per host: with
			// one slot per host it keeps the delay, as distill does.
			crawler{"colly v2, 1 per host", func(ctx context.Context) (int, error) { return crawlColly(ctx, cfg, bin, 1, starts) }},
			crawler{"crawlee CheerioCrawler", func(ctx context.Context) (int, error) { return crawlCrawlee(ctx, cfg, starts) }})
	}
	return crawlers
}

// measure runs one crawler on the freshly reset sites and writes its row:
// its figures, then what the sites saw that it must not do. A crawl that
// fails gets a line saying so; only the context's end stops the run.
func measure(ctx context.Context, cfg Config, c crawler, sites []*site, out io.Writer) error {
	for _, s := range sites {
		s.reset()
	}
	began := time.Now()
	pages, err := c.run(ctx)
	took := time.Since(began)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		fmt.Fprintf(out, "%-26s failed: %v\n", c.name, err)
		return nil
	}
	t := score(cfg, sites)
	fmt.Fprintf(out, "%-26s %8d %9.2f %8.1f %9.2f %11d %10v %6d %6d\n", c.name, pages, took.Seconds(), float64(pages)/took.Seconds(), t.floor.Seconds(), t.worst, t.closest.Round(100*time.Microsecond), t.dups, t.robots)
	for _, v := range t.violations {
		fmt.Fprintf(out, "%-26s %s\n", "", v)
	}
	if cfg.Gaps {
		fmt.Fprintf(out, "%-26s %s\n", "", gaps(t.busiestHost, t.busiest))
	}
	return nil
}

// tally is what the sites saw of one crawl.
type tally struct {
	// dups are requests for a path already served; worst is the most
	// requests a host saw within its window; robots the most reads of
	// one host's robots.txt.
	dups, worst, robots int
	// violations say, per host, which paths were read twice and which
	// two requests came closest within a window.
	violations []string
	// floor is how long the crawl's requests to its busiest host take at
	// least, a window apart; busiest are their arrivals.
	floor       time.Duration
	busiest     []time.Time
	busiestHost string
	// closest is the shortest time between two requests to one host.
	closest time.Duration
}

// score reads what every site saw of the crawl that just ran.
func score(cfg Config, sites []*site) tally {
	t := tally{closest: time.Duration(1<<63 - 1)}
	for _, s := range sites {
		window := max(cfg.Delay, s.delay)
		s.mu.Lock()
		// The crawl's own requests to this host, a window apart, take
		// at least this long: no polite crawler making them is faster.
		if f := time.Duration(max(len(s.at)-1, 0)) * window; f > t.floor || t.busiest == nil {
			t.floor, t.busiest, t.busiestHost = f, slices.Clone(s.at), s.host
		}
		t.robots = max(t.robots, s.hits["/robots.txt"])
		var twice []string
		for path, n := range s.hits {
			if n > 1 && path != "/robots.txt" {
				t.dups += n - 1
				twice = append(twice, path)
			}
		}
		if len(twice) > 0 && len(twice) <= 5 {
			slices.Sort(twice)
			t.violations = append(t.violations, fmt.Sprintf("%s: read more than once: %s", s.host, strings.Join(twice, " ")))
		}
		most, near, pair := maxInWindow(s.at, s.path, window)
		s.mu.Unlock()
		if most > 1 {
			t.violations = append(t.violations, fmt.Sprintf("%s: closest pair within a window: %s %v apart (window %v)", s.host, pair, near.Round(100*time.Microsecond), window))
		}
		t.worst, t.closest = max(t.worst, most), min(t.closest, near)
	}
	return t
}

func (s *site) reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hits = map[string]int{}
	s.at, s.path = nil, nil
}

// crawlSingleBinary runs distill crawl on every host at once, a process
// each.
func crawlSingleBinary(ctx context.Context, cfg Config, bin string, starts []string) (int, error) {
	var wg sync.WaitGroup
	found := make([]int, len(starts))
	errs := make([]error, len(starts))
	for i, start := range starts {
		wg.Go(func() {
			cmd := exec.CommandContext(ctx, filepath.Join(bin, "distill"), "crawl", "--allow-local", "--no-cache", "--js", "off",
				"--format", "jsonl", "--depth", fmt.Sprint(cfg.Depth), "--max-pages", "0",
				"--concurrency", fmt.Sprint(cfg.Concurrency), "--delay", cfg.Delay.String(), start)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			b, err := cmd.Output()
			if err != nil {
				errs[i] = fmt.Errorf("distill crawl %s: %v: %s", start, err, strings.TrimSpace(stderr.String()))
				return
			}
			for line := range strings.SplitSeq(string(b), "\n") {
				var p struct {
					OK bool `json:"ok"`
				}
				if json.Unmarshal([]byte(line), &p) == nil && p.OK {
					found[i]++
				}
			}
		})
	}
	wg.Wait()
	total := 0
	for _, n := range found {
		total += n
	}
	return total, errors.Join(errs...)
}

// crawlInCluster starts a cluster of n fetchers and one gateway, and
// crawls every host at once through the gateway's API: the pages are
// work items any fetcher takes.
func crawlInCluster(ctx context.Context, cfg Config, bin string, n int, starts []string) (int, error) {
	natsDir, err := os.MkdirTemp("", "distill-bench-crawl-nats-")
	if err != nil {
		return 0, err
	}
	defer func() { _ = os.RemoveAll(natsDir) }()
	lc, err := localcluster.Start(bin, natsDir, localcluster.Options{
		Fetchers: n, NoRenderer: true, Workers: cfg.Workers, LogLevel: "warn",
	})
	if err != nil {
		return 0, err
	}
	defer lc.Stop()
	cc, err := lc.Conn(lc.Gateways[0].Addr)
	if err != nil {
		return 0, err
	}
	client := distillv1.NewDistillServiceClient(cc)
	var wg sync.WaitGroup
	found := make([]int, len(starts))
	errs := make([]error, len(starts))
	for i, start := range starts {
		wg.Go(func() {
			errs[i] = api.StreamCrawl(ctx, client, &distillv1.CrawlRequest{
				Url: start, Depth: proto.Int32(int32(cfg.Depth)), MaxPages: proto.Int32(api.MaxCrawlPages),
				Concurrency: proto.Int32(int32(cfg.Concurrency)), DelayMs: proto.Int64(cfg.Delay.Milliseconds()),
				Options: &distillv1.FetchOptions{AllowLocal: true, NoCache: true, Js: distillv1.JsMode_JS_MODE_OFF},
			}, func(r *distillv1.CrawlResponse) error {
				if p := r.GetPage(); p != nil && p.GetError() == nil {
					found[i]++
				}
				return nil
			})
		})
	}
	wg.Wait()
	total := 0
	for _, n := range found {
		total += n
	}
	return total, errors.Join(errs...)
}

// crawlColly builds the colly peer (a module of its own) and runs it.
func crawlColly(ctx context.Context, cfg Config, bin string, concurrency int, starts []string) (int, error) {
	exe := filepath.Join(bin, "colly-peer")
	build := exec.CommandContext(ctx, "go", "build", "-o", exe, ".")
	build.Dir = filepath.Join(cfg.Root, "gateway", "bench", "crawl", "colly")
	build.Env = append(os.Environ(), "GOWORK=off")
	if b, err := build.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("build the colly peer: %v\n%s", err, b)
	}
	args := append([]string{"-concurrency", fmt.Sprint(concurrency), "-delay", cfg.Delay.String(), "-depth", fmt.Sprint(cfg.Depth)}, starts...)
	return runPeer(exec.CommandContext(ctx, exe, args...))
}

// crawlCrawlee installs crawlee's CheerioCrawler, as its lock file pins
// it, and runs it on node.
func crawlCrawlee(ctx context.Context, cfg Config, starts []string) (int, error) {
	dir := filepath.Join(cfg.Root, "gateway", "bench", "crawl", "crawlee")
	if err := localcluster.NPMInstall(dir); err != nil {
		return 0, err
	}
	storage, err := os.MkdirTemp("", "distill-bench-crawlee-")
	if err != nil {
		return 0, err
	}
	defer func() { _ = os.RemoveAll(storage) }()
	args := append([]string{"crawl.mjs", "--concurrency", fmt.Sprint(cfg.Concurrency), "--delay-ms", fmt.Sprint(cfg.Delay.Milliseconds()), "--depth", fmt.Sprint(cfg.Depth)}, starts...)
	cmd := exec.CommandContext(ctx, "node", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CRAWLEE_STORAGE_DIR="+storage)
	return runPeer(cmd)
}

// runPeer runs a peer and reads the pages it counted per host from the
// last line it prints.
func runPeer(cmd *exec.Cmd) (int, error) {
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("%v: %s", err, strings.TrimSpace(stderr.String()))
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var res struct {
		Pages map[string]int `json:"pages"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil {
		return 0, fmt.Errorf("peer output %q: %v", lines[len(lines)-1], err)
	}
	total := 0
	for _, n := range res.Pages {
		total += n
	}
	return total, nil
}

// maxInWindow is the most requests that arrived within any span shorter
// than window, the shortest time between two, and those two's paths.
func maxInWindow(at []time.Time, paths []string, window time.Duration) (int, time.Duration, string) {
	order := make([]int, len(at))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return at[a].Compare(at[b]) })
	most, first := 0, 0
	closest, pair := time.Duration(1<<63-1), ""
	for i := range order {
		if i > 0 {
			if d := at[order[i]].Sub(at[order[i-1]]); d < closest {
				closest, pair = d, paths[order[i-1]]+" then "+paths[order[i]]
			}
		}
		for at[order[i]].Sub(at[order[first]]) >= window {
			first++
		}
		most = max(most, i-first+1)
	}
	return most, closest, pair
}

// gaps describes the times between successive requests to one host:
// percentiles, and the time lost in gaps over twice the median.
func gaps(host string, at []time.Time) string {
	if len(at) < 3 {
		return host + ": too few requests"
	}
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	d := make([]time.Duration, len(at)-1)
	for i := range d {
		d[i] = at[i+1].Sub(at[i])
	}
	sorted := slices.Clone(d)
	slices.Sort(sorted)
	pct := func(p float64) time.Duration {
		return sorted[int(p*float64(len(sorted)-1))].Round(100 * time.Microsecond)
	}
	var lost time.Duration
	n := 0
	for _, g := range d {
		if g > 2*pct(0.5) {
			lost += g - pct(0.5)
			n++
		}
	}
	return fmt.Sprintf("%s: gaps p50 %v p90 %v p99 %v max %v; %d gaps over twice the median lose %.2fs", host, pct(0.5), pct(0.9), pct(0.99), sorted[len(sorted)-1].Round(100*time.Microsecond), n, lost.Seconds())
}
