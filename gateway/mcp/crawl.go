package mcp

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"distill.dev/gateway/output"
	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/crawl"
)

// The crawl tool's bounds: what a model reads in one answer, whatever the
// site holds.
const (
	defaultCrawlPages = 10
	maxCrawlPages     = 100
	// defaultCrawlTokens is fetch_url's page budget, for all the pages
	// together; maxCrawlTokens what a model can be handed at once.
	defaultCrawlTokens = fetchopts.DefaultMCPMaxOutputTokens
	maxCrawlTokens     = 100_000
	// defaultPageTokens keeps one long page from taking the whole
	// budget.
	defaultPageTokens = 4000
)

var crawlParams = []param{
	{name: "url", kind: kindString, required: true,
		desc: "Absolute http or https URL to start from, usually a site's home or docs index; the crawl stays on this URL's host."},
	{name: "query", kind: kindString,
		desc: "The question you want answered, e.g. \"how do I rotate the API key\". Links most likely to lead to the answer are read first, and each page is rated 0 to 1 for relevance."},
	{name: "stop_when_answered", kind: kindBool, def: defFalse,
		desc: "With query: stop once a page rated 0.8 or more has been followed by 8 pages rated no higher."},
	{name: "depth", kind: kindInt32, def: def(crawl.DefaultDepth),
		desc: "How many links away from url to go; 0 reads url alone."},
	{name: "max_pages", kind: kindInt32, def: def(defaultCrawlPages),
		desc: fmt.Sprintf("Read at most this many pages, 1 to %d.", maxCrawlPages)},
	{name: "max_total_tokens", kind: kindInt64, def: def(defaultCrawlTokens),
		desc: fmt.Sprintf("Stop once the pages returned hold about this many tokens together, 1 to %d.", maxCrawlTokens)},
	{name: "max_output_tokens", kind: kindInt64, def: def(defaultPageTokens),
		desc: "Cut each page's Markdown or text to about this many tokens."},
	{name: "format", kind: kindEnum, enum: distillv1.Format(0).Descriptor(), def: quoted("markdown"),
		desc: "markdown (a section per page), text, or json (an array of {url, depth, ok, result | error})."},
	profileParam,
	{name: "path_prefix", kind: kindString,
		desc: "Follow only URLs whose path is at or under this prefix, by path segment: /docs takes /docs/install, not /docs-old."},
	{name: "include_paths", kind: kindStrings,
		desc: "Regular expressions on a URL's path and query: only matching pages are returned (others are still read for their links)."},
	{name: "exclude_paths", kind: kindStrings,
		desc: "Regular expressions on a URL's path and query: matching URLs are neither read nor returned."},
	{name: "include_subdomains", kind: kindBool, def: defFalse,
		desc: "Also follow links to the host's subdomains (docs.example.com for example.com)."},
	{name: "ignore_robots", kind: kindBool, def: defFalse,
		desc: "Ignore the site's robots.txt. Leave it false unless the user asked."},
	jsParam,
	allowLocalParam,
	timeoutParam,
}

var crawlDesc = "Read a website from a start URL by following its links, and return the pages distilled: " +
	"each page's main content as Markdown under a '==> URL <==' line (or text, or JSON), then a report of how " +
	"many pages were read, why the crawl stopped, and what was left out. Stays on the start URL's host, reads " +
	"each page once, obeys robots.txt and paces its requests, within max_pages and max_total_tokens; query " +
	"reads the most promising links first. Use it to read a documentation section or to find which page of a " +
	"site answers a question; to read pages you already know, use fetch_url or fetch_urls; to only list a " +
	"site's URLs, use map."

// errBudget stops a crawl whose pages filled the token budget.
var errBudget = errors.New("token budget reached")

// crawlSite is the crawl tool: the bounds and the request the call asks
// for, the crawl read within them, then the pages and a report of what
// was read and left out.
func (h handlers) crawlSite(ctx context.Context, a args) ([]string, error) {
	b, err := crawlBoundsOf(a)
	if err != nil {
		return nil, err
	}
	req, err := crawlRequest(a, &b)
	if err != nil {
		return nil, err
	}
	read, err := h.readCrawl(ctx, req, b.budget)
	if err != nil {
		return nil, err
	}
	texts, err := read.texts(fetchopts.Format(req.GetOptions()))
	if err != nil {
		return nil, err
	}
	return append(texts, crawlReport(req, read.items, read.total, b.budget, read.left, read.summary)), nil
}

// crawlBounds bound the crawl tool's answer: how many pages, how many
// tokens in all and how many a page.
type crawlBounds struct {
	pages           int32
	budget, perPage int64
}

// crawlBoundsOf reads the call's bounds, the defaults where it gives none,
// and refuses those out of range.
func crawlBoundsOf(a args) (crawlBounds, error) {
	b := crawlBounds{pages: defaultCrawlPages, budget: defaultCrawlTokens, perPage: defaultPageTokens}
	if p := a.int32p("max_pages"); p != nil {
		b.pages = *p
	}
	if p := a.int64p("max_total_tokens"); p != nil {
		b.budget = *p
	}
	if p := a.int64p("max_output_tokens"); p != nil {
		b.perPage = *p
	}
	switch {
	case b.pages < 1 || b.pages > maxCrawlPages:
		return b, argError{fmt.Errorf("max_pages must be 1 to %d, got %d", maxCrawlPages, b.pages)}
	case b.budget < 1 || b.budget > maxCrawlTokens:
		return b, argError{fmt.Errorf("max_total_tokens must be 1 to %d, got %d", maxCrawlTokens, b.budget)}
	case b.perPage < 1:
		return b, argError{fmt.Errorf("max_output_tokens must be at least 1, got %d", b.perPage)}
	case a.flag("stop_when_answered") && strings.TrimSpace(a.str("query")) == "":
		return b, argError{errors.New("stop_when_answered needs query")}
	}
	return b, nil
}

// crawlRequest is the CrawlRequest the call asks for within b, its
// options checked as every door checks them.
func crawlRequest(a args, b *crawlBounds) (*distillv1.CrawlRequest, error) {
	opts := &distillv1.FetchOptions{
		Format:          distillv1.Format(a.enum("format")),
		Profile:         distillv1.Profile(a.enum("profile")),
		Js:              distillv1.JsMode(a.enum("js")),
		AllowLocal:      a.flag("allow_local"),
		TimeoutSecs:     a.int32p("timeout_secs"),
		MaxOutputTokens: &b.perPage,
		// Diagnostics count each page's tokens against the budget.
		Diagnostics: true,
	}
	if err := fetchopts.Validate(opts); err != nil {
		return nil, optionError(err)
	}
	return &distillv1.CrawlRequest{
		Url:               a.str("url"),
		Options:           opts,
		Depth:             a.int32p("depth"),
		MaxPages:          &b.pages,
		IgnoreRobots:      a.flag("ignore_robots"),
		IncludeSubdomains: a.flag("include_subdomains"),
		PathPrefix:        a.str("path_prefix"),
		IncludePaths:      a.strs("include_paths"),
		ExcludePaths:      a.strs("exclude_paths"),
		Query:             a.str("query"),
		StopWhenAnswered:  a.flag("stop_when_answered"),
	}, nil
}

// crawlRead is what a crawl handed back within the token budget.
type crawlRead struct {
	items []crawlItem
	// total is the tokens of the pages kept; left the first page left out
	// for the budget, if one was.
	total   int64
	left    string
	summary *distillv1.CrawlStatusResponse
}

// readCrawl runs req, keeping its pages until the next would pass budget.
func (h handlers) readCrawl(ctx context.Context, req *distillv1.CrawlRequest, budget int64) (*crawlRead, error) {
	read := &crawlRead{}
	err := h.svc.CrawlSite(ctx, req, nil, func(r *distillv1.CrawlResponse) error { return read.take(r, budget) })
	if err != nil && !errors.Is(err, errBudget) {
		return nil, err
	}
	return read, nil
}

// take keeps one event of the crawl: its summary, or a page, which
// errBudget refuses when its tokens would pass budget (the first page is
// always kept).
func (read *crawlRead) take(r *distillv1.CrawlResponse, budget int64) error {
	switch ev := r.GetEvent().(type) {
	case *distillv1.CrawlResponse_Summary:
		read.summary = ev.Summary
	case *distillv1.CrawlResponse_Page:
		p := ev.Page
		it := crawlItem{url: p.GetUrl(), depth: int(p.GetDepth()), page: p.GetResult()}
		if e := p.GetError(); e != nil {
			it.err = failure.FromProto(e)
		} else {
			tokens := p.GetResult().GetDiagnostics().GetOutputTokens()
			if read.total+tokens > budget && len(read.items) > 0 {
				read.left = p.GetUrl()
				return errBudget
			}
			read.total += tokens
			p.GetResult().Diagnostics = nil
		}
		read.items = append(read.items, it)
	}
	return nil
}

// texts are the pages kept in format: one JSON array, or a section each.
func (read *crawlRead) texts(format distillv1.Format) ([]string, error) {
	if format == distillv1.Format_FORMAT_JSON {
		b, err := crawlJSON(read.items)
		if err != nil {
			return nil, err
		}
		return []string{string(b)}, nil
	}
	var texts []string
	for _, it := range read.items {
		texts = append(texts, it.section(format))
	}
	return texts, nil
}

type crawlItem struct {
	url   string
	depth int
	page  *distillv1.Distilled
	err   error
}

// section is one page as the model reads it: a header line with what it
// needs to judge the page, then the content.
func (it crawlItem) section(format distillv1.Format) string {
	head := fmt.Sprintf("==> %s <== (depth %d", it.url, it.depth)
	if it.err != nil {
		return head + ")\nerror: " + oneLine(it.err.Error())
	}
	if r := it.page.Relevance; r != nil {
		head += fmt.Sprintf(", relevance %.2f", *r)
	}
	if s := it.page.GetStatus(); s >= 400 {
		head += ", " + output.HTTPStatus(s)
	}
	return head + ")\n" + output.Content(it.page, format)
}

func crawlJSON(items []crawlItem) ([]byte, error) {
	var b strings.Builder
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		var line strings.Builder
		if err := output.WriteCrawlLine(&line, output.BatchItem{URL: it.url, Result: it.page, Err: it.err}, it.depth); err != nil {
			return nil, err
		}
		b.WriteString(strings.TrimSuffix(line.String(), "\n"))
	}
	b.WriteByte(']')
	return []byte(b.String()), nil
}

// crawlReport says what the crawl read, why it stopped, what it left out
// and how to reach it.
func crawlReport(req *distillv1.CrawlRequest, items []crawlItem, total, budget int64, left string, st *distillv1.CrawlStatusResponse) string {
	failed := 0
	for _, it := range items {
		if it.err != nil {
			failed++
		}
	}
	lines := []string{fmt.Sprintf("Pages: %d returned (%d failed), about %d tokens.", len(items), failed, total)}
	switch {
	case left != "":
		lines = append(lines, fmt.Sprintf("Stopped: the next page (%s) would pass max_total_tokens=%d. To read further, raise max_total_tokens (at most %d), lower max_output_tokens, or narrow the crawl with path_prefix, include_paths or query.", left, budget, maxCrawlTokens))
	case st.GetStopReason() == crawl.StopMaxPages:
		lines = append(lines, fmt.Sprintf("Stopped at max_pages=%d with %d links found and not read: raise max_pages (at most %d) or narrow the crawl with path_prefix or query.", req.GetMaxPages(), st.GetQueued(), maxCrawlPages))
	case st.GetStopReason() == crawl.StopAnswered:
		lines = append(lines, "Stopped: a page rated 0.8 or more was followed by 8 pages rated no higher (stop_when_answered).")
	case st.GetStopReason() == crawl.StopDone:
		lines = append(lines, "The crawl read every page within depth and scope.")
	}
	for _, n := range st.GetNotes() {
		if !strings.HasPrefix(n, "stopped at --max-pages") {
			lines = append(lines, "note: "+oneLine(n))
		}
	}
	return strings.Join(lines, "\n")
}
