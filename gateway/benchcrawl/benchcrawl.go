// Package benchcrawl measures distill crawl on generated sites served on
// loopback: several hosts (127.0.0.1, .2, ...), one of them asking for a
// Crawl-delay, slow pages, redirects and links that differ only by
// tracking parameters. Each host is crawled whole, all at once, as one
// process would; the figures are pages per second, the most requests any
// host saw within one delay window (politeness: it must be 1), duplicate
// fetches (identity: 0) and pages found. Requests are timed when the
// site's handler runs: on a machine whose cores the crawl keeps busy
// (extraction), handlers run late and bunch, and a window can show two
// requests the crawl sent a delay apart.
package benchcrawl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"distill.dev/gateway/app"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/crawl"
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
	// Slow is how long one page in ten takes to answer.
	Slow time.Duration
}

// site is one generated host and what it saw.
type site struct {
	host  string
	srv   *http.Server
	pages int
	delay time.Duration
	slow  time.Duration

	mu   sync.Mutex
	hits map[string]int
	at   []time.Time
}

func (s *site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	s.at = append(s.at, time.Now())
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
	if i%10 == 7 {
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

// Run serves the sites, crawls them all at once, and writes the figures.
func Run(ctx context.Context, cfg Config, logger *slog.Logger, out io.Writer) error {
	if cfg.Hosts < 1 || cfg.Hosts > 250 || cfg.Pages < 2 || cfg.Concurrency < 1 {
		return errors.New("hosts must be 1 to 250, pages at least 2 and concurrency at least 1")
	}
	var sites []*site
	defer func() {
		for _, s := range sites {
			_ = s.srv.Close()
		}
	}()
	for h := range cfg.Hosts {
		lis, err := net.Listen("tcp", fmt.Sprintf("127.0.0.%d:0", h+1))
		if err != nil {
			return fmt.Errorf("listen on 127.0.0.%d (loopback aliases are needed): %w", h+1, err)
		}
		s := &site{host: lis.Addr().String(), pages: cfg.Pages, slow: cfg.Slow, hits: map[string]int{}}
		if h == 0 {
			s.delay = cfg.CrawlDelay
		}
		s.srv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = s.srv.Serve(lis) }()
		sites = append(sites, s)
	}

	sys, err := app.Open(ctx, logger, app.Config{UserAgentVersion: "bench-crawl", AllowLocal: true})
	if err != nil {
		return err
	}
	defer func() { _ = sys.Close() }()

	began := time.Now()
	var wg sync.WaitGroup
	found := make([]int, len(sites))
	errs := make([]error, len(sites))
	for i, s := range sites {
		wg.Go(func() {
			job, err := sys.BeginCrawl(crawl.Request{
				URL: "http://" + s.host + "/", Depth: 10, MaxPages: 0, Concurrency: cfg.Concurrency, Delay: cfg.Delay,
				Options: &distillv1.FetchOptions{AllowLocal: true, NoCache: true, Js: distillv1.JsMode_JS_MODE_OFF},
			}, nil)
			if err != nil {
				errs[i] = err
				return
			}
			_, errs[i] = job.Run(ctx, func(p crawl.Page) error {
				if p.Err == nil {
					found[i]++
				}
				return nil
			})
		})
	}
	wg.Wait()
	took := time.Since(began)
	if err := errors.Join(errs...); err != nil {
		return err
	}

	fmt.Fprintf(out, "bench-crawl: %d hosts x %d pages, concurrency %d, --delay %v (host 1: Crawl-delay %v), one page in ten %v slow\n",
		cfg.Hosts, cfg.Pages, cfg.Concurrency, cfg.Delay, cfg.CrawlDelay, cfg.Slow)
	fmt.Fprintf(out, "%-22s %8s %10s %6s %12s %8s %10s\n", "host", "pages", "requests", "dup", "max/window", "window", "closest")
	var pages, dups int
	worst := 0
	for i, s := range sites {
		window := cfg.Delay
		if s.delay > window {
			window = s.delay
		}
		s.mu.Lock()
		dup := 0
		for path, n := range s.hits {
			if n > 1 && path != "/robots.txt" {
				dup += n - 1
			}
		}
		most, closest := maxInWindow(s.at, window)
		requests := len(s.at)
		s.mu.Unlock()
		fmt.Fprintf(out, "%-22s %8d %10d %6d %12d %8v %10v\n", s.host, found[i], requests, dup, most, window, closest.Round(100*time.Microsecond))
		pages += found[i]
		dups += dup
		worst = max(worst, most)
	}
	fmt.Fprintf(out, "all: %d pages in %.2fs = %.1f pages/s; the most requests one host saw within its window: %d (must be 1); duplicate fetches: %d (must be 0)\n",
		pages, took.Seconds(), float64(pages)/took.Seconds(), worst, dups)
	if worst > 1 {
		fmt.Fprintln(out, "note: requests are timed when the site's handler runs; with every core busy, handlers run late and bunch (lower -concurrency, or give the sites a machine of their own, to tell that from the crawl)")
	}
	return nil
}

// maxInWindow is the most requests that arrived within any span shorter
// than window, and the shortest time between two.
func maxInWindow(at []time.Time, window time.Duration) (int, time.Duration) {
	at = slices.Clone(at)
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	most, first := 0, 0
	closest := time.Duration(1<<63 - 1)
	for i := range at {
		if i > 0 {
			closest = min(closest, at[i].Sub(at[i-1]))
		}
		for at[i].Sub(at[first]) >= window {
			first++
		}
		most = max(most, i-first+1)
	}
	return most, closest
}
