// Command colly crawls the sites bench-crawl serves with
// github.com/gocolly/colly/v2, at the concurrency and per-host delay it is
// given, and prints the pages it read as JSON. It is its own module, so
// that distill never depends on the peer it is measured against.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"
)

func main() {
	concurrency := flag.Int("concurrency", 8, "requests in flight per host")
	delay := flag.Duration("delay", 20*time.Millisecond, "delay between requests to one host")
	depth := flag.Int("depth", 10, "links followed from each start page")
	flag.Parse()
	if err := run(flag.Args(), *concurrency, *delay, *depth); err != nil {
		fmt.Fprintln(os.Stderr, "colly:", err)
		os.Exit(1)
	}
}

func run(starts []string, concurrency int, delay time.Duration, depth int) error {
	hosts := map[string]bool{}
	for _, s := range starts {
		u, err := url.Parse(s)
		if err != nil {
			return err
		}
		hosts[u.Host] = true
	}
	allowed := make([]string, 0, len(hosts))
	for h := range hosts {
		allowed = append(allowed, strings.Split(h, ":")[0])
	}
	// Its depth counts the start page as 1.
	c := colly.NewCollector(colly.Async(true), colly.MaxDepth(depth+1))
	c.IgnoreRobotsTxt = false
	c.AllowedDomains = allowed
	for h := range hosts {
		// One rule per host: colly's parallelism and delay are per rule.
		if err := c.Limit(&colly.LimitRule{DomainGlob: h, Parallelism: concurrency, Delay: delay}); err != nil {
			return err
		}
	}
	var mu sync.Mutex
	pages := map[string]int{}
	c.OnHTML("html", func(e *colly.HTMLElement) {
		mu.Lock()
		pages[e.Request.URL.Host]++
		mu.Unlock()
	})
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		next := e.Request.AbsoluteURL(e.Attr("href"))
		if u, err := url.Parse(next); err == nil && u.Host == e.Request.URL.Host {
			_ = e.Request.Visit(next)
		}
	})
	for _, s := range starts {
		if err := c.Visit(s); err != nil {
			return err
		}
	}
	c.Wait()
	return json.NewEncoder(os.Stdout).Encode(map[string]any{"pages": pages})
}
