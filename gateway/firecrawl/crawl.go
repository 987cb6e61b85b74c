package firecrawl

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"distill.dev/gateway/api"
	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/crawl"
)

// crawlRequest is POST /v{1,2}/crawl, v1's keys included. Firecrawl nests
// the page options under scrapeOptions.
type crawlRequest struct {
	URL                    string          `json:"url"`
	Prompt                 string          `json:"prompt"`
	IncludePaths           []string        `json:"includePaths"`
	ExcludePaths           []string        `json:"excludePaths"`
	MaxDiscoveryDepth      *int32          `json:"maxDiscoveryDepth"`
	Sitemap                string          `json:"sitemap"`
	IgnoreQueryParameters  *bool           `json:"ignoreQueryParameters"`
	DeduplicateSimilarURLs *bool           `json:"deduplicateSimilarURLs"`
	Limit                  *int32          `json:"limit"`
	CrawlEntireDomain      *bool           `json:"crawlEntireDomain"`
	AllowExternalLinks     *bool           `json:"allowExternalLinks"`
	AllowSubdomains        *bool           `json:"allowSubdomains"`
	IgnoreRobotsTxt        *bool           `json:"ignoreRobotsTxt"`
	RobotsUserAgent        string          `json:"robotsUserAgent"`
	Delay                  *float64        `json:"delay"`
	MaxConcurrency         *int32          `json:"maxConcurrency"`
	Webhook                json.RawMessage `json:"webhook"`
	ScrapeOptions          *scrapeOptions  `json:"scrapeOptions"`
	RegexOnFullURL         *bool           `json:"regexOnFullURL"`
	ZeroDataRetention      *bool           `json:"zeroDataRetention"`
	Origin                 string          `json:"origin"`
	Integration            json.RawMessage `json:"integration"`
	ThreatProtection       json.RawMessage `json:"threatProtection"`
	AuditMetadata          json.RawMessage `json:"auditMetadata"`
	// v1 only.
	MaxDepth           *int32 `json:"maxDepth"`
	AllowBackwardLinks *bool  `json:"allowBackwardLinks"`
	IgnoreSitemap      *bool  `json:"ignoreSitemap"`
}

// Firecrawl's default limit of a crawl; distill holds an API caller's
// crawl to api.MaxCrawlPages besides.
const defaultCrawlLimit = 10000

// unboundedDepth stands for Firecrawl's default of no depth limit: the
// crawl's page limit bounds it.
const unboundedDepth = 1 << 16

// distill maps the request onto DistillService's CrawlRequest, which the
// gRPC API, the CLI and MCP crawl with too.
func (c *crawlRequest) distill(target string, version int, allowLocal bool) (*distillv1.CrawlRequest, *plan, *apiError) {
	so := c.ScrapeOptions
	if so == nil {
		so = &scrapeOptions{}
	}
	p, err := so.plan(version, allowLocal)
	if err != nil {
		return nil, nil, err
	}
	out := &distillv1.CrawlRequest{
		Url:          target,
		Options:      p.opts,
		IncludePaths: c.IncludePaths,
		ExcludePaths: c.ExcludePaths,
		IgnoreRobots: on(c.IgnoreRobotsTxt),
	}
	if err := c.extent(out); err != nil {
		return nil, nil, err
	}
	if err := c.pace(out); err != nil {
		return nil, nil, err
	}
	c.scope(out, target)
	if err := c.refused(); err != nil {
		return nil, nil, err
	}
	if err := c.sitemap(p); err != nil {
		return nil, nil, err
	}
	if on(c.ZeroDataRetention) {
		p.opts.NoCache = true
	}
	return out, p, nil
}

// extent bounds how far the crawl goes: limit (pages, at most
// api.MaxCrawlPages) and maxDiscoveryDepth (v1: maxDepth), unbounded by
// default.
func (c *crawlRequest) extent(out *distillv1.CrawlRequest) *apiError {
	limit := int32(min(defaultCrawlLimit, api.MaxCrawlPages))
	if c.Limit != nil {
		if *c.Limit < 1 || *c.Limit > api.MaxCrawlPages {
			return badRequest("limit must be between 1 and %d on this server, got %d", api.MaxCrawlPages, *c.Limit)
		}
		limit = *c.Limit
	}
	out.MaxPages = &limit
	depth := c.MaxDiscoveryDepth
	if depth == nil {
		depth = c.MaxDepth
	}
	d := int32(unboundedDepth)
	if depth != nil {
		if *depth < 0 {
			return badRequest("maxDiscoveryDepth cannot be negative, got %d", *depth)
		}
		d = *depth
	}
	out.Depth = &d
	return nil
}

// pace bounds how fast the crawl goes: maxConcurrency and delay (seconds
// between requests).
func (c *crawlRequest) pace(out *distillv1.CrawlRequest) *apiError {
	if c.MaxConcurrency != nil {
		if *c.MaxConcurrency < 1 || *c.MaxConcurrency > api.MaxCrawlConcurrency {
			return badRequest("maxConcurrency must be between 1 and %d on this server, got %d", api.MaxCrawlConcurrency, *c.MaxConcurrency)
		}
		out.Concurrency = c.MaxConcurrency
	}
	if c.Delay != nil {
		if *c.Delay < 0 || *c.Delay > 60 {
			return badRequest("delay is in seconds, from 0 to 60, got %v", *c.Delay)
		}
		ms := int64(*c.Delay * float64(time.Second/time.Millisecond))
		out.DelayMs = &ms
	}
	return nil
}

// scope says which links of the site the crawl follows. Firecrawl follows
// only the links under the start URL's path unless crawlEntireDomain (v1:
// allowBackwardLinks) says otherwise.
func (c *crawlRequest) scope(out *distillv1.CrawlRequest, target string) {
	if !on(c.CrawlEntireDomain) && !on(c.AllowBackwardLinks) {
		if u, perr := url.Parse(target); perr == nil {
			if prefix := pathPrefix(u.Path); prefix != "/" {
				out.PathPrefix = prefix
			}
		}
	}
	out.IncludeSubdomains = on(c.AllowSubdomains)
}

// refused refuses the crawl options distill does not honour, naming the
// first.
func (c *crawlRequest) refused() *apiError {
	switch {
	case c.Prompt != "":
		return notSupported("prompt", "distill does not turn a prompt into crawl options; set them")
	case on(c.AllowExternalLinks):
		return notSupported("allowExternalLinks", "a crawl reads one site")
	case on(c.RegexOnFullURL):
		return notSupported("regexOnFullURL", "includePaths and excludePaths match a URL's path and query")
	case c.RobotsUserAgent != "":
		return notSupported("robotsUserAgent", "distill reads robots.txt as its own user agent")
	case on(c.IgnoreQueryParameters):
		return notSupported("ignoreQueryParameters", "")
	}
	return threatProtection(c.ThreatProtection)
}

// sitemap reads the sitemap option: distill's crawl follows links, so
// include is warned about and only refused.
func (c *crawlRequest) sitemap(p *plan) *apiError {
	switch c.Sitemap {
	case "", "skip":
	case "include":
		p.warn("sitemap is ignored: distill's crawl follows the site's links")
	case "only":
		return notSupported("sitemap: only", "distill's crawl follows the site's links (map lists a sitemap)")
	default:
		return badRequest("sitemap must be skip, include or only, got %q", c.Sitemap)
	}
	return nil
}

// pathPrefix is the folder of a URL path: /docs/intro and /docs/ are
// under /docs.
func pathPrefix(p string) string {
	if p == "" || p == "/" {
		return "/"
	}
	if p[len(p)-1] == '/' {
		return path.Clean(p)
	}
	return path.Dir(p)
}

func (s *Server) startCrawl(w http.ResponseWriter, r *http.Request, version int) {
	var req crawlRequest
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	target, err := targetURL(req.URL)
	if err != nil {
		writeError(w, err)
		return
	}
	creq, p, err := req.distill(target, version, s.cfg.AllowLocal)
	if err != nil {
		writeError(w, err)
		return
	}
	if err := s.checkModelWork(p); err != nil {
		writeError(w, err)
		return
	}
	if err := s.onlyModelWork(r, "crawl"); err != nil {
		writeError(w, err)
		return
	}
	hook, err := s.parseWebhook(req.Webhook)
	if err != nil {
		writeError(w, err)
		return
	}
	if _, cerr := api.CrawlRequestOf(creq); cerr != nil {
		writeError(w, fromFailure(cerr))
		return
	}
	if s.crawls == nil {
		writeError(w, notSupported("crawl", "this server runs no crawls"))
		return
	}
	j, err := s.jobs.start(kindCrawl, 0)
	if err != nil {
		writeError(w, err)
		return
	}
	j.mu.Lock()
	j.plan, j.limit, j.caller, j.crawlURL = p, int(creq.GetMaxPages()), s.callerOf(r), target
	if hook != nil {
		j.hook = s.newWebhookSender(hook, kindCrawl)
	}
	j.mu.Unlock()
	began := make(chan *apiError, 1)
	go s.runCrawl(s.ctx, j, creq, began)
	if err := <-began; err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "id": j.id, "url": statusURL(r, "/v"+strconv.Itoa(version)+"/crawl/"+j.id)})
}

// runCrawl runs the crawl as DistillService's Crawl runs one, so that
// CrawlStatus and CrawlCancel see it under its id (here in the UUID form
// api.CrawlUUID gives it), and keeps each page as it completes. began
// gets nil once the crawl has its id, or why it never began.
func (s *Server) runCrawl(ctx context.Context, j *job, creq *distillv1.CrawlRequest, began chan<- *apiError) {
	var summary *distillv1.CrawlStatusResponse
	first := true
	err := s.crawls.CrawlSite(ctx, creq, nil, func(r *distillv1.CrawlResponse) error {
		if first {
			// The first message names the job.
			first = false
			s.jobs.rename(j, r.GetJobId())
			j.hook.send("started", webhookEvent{Success: true, ID: j.id})
			began <- nil
			return nil
		}
		switch ev := r.GetEvent().(type) {
		case *distillv1.CrawlResponse_Page:
			pg := crawl.Page{URL: ev.Page.GetUrl(), Depth: int(ev.Page.GetDepth()), Result: ev.Page.GetResult()}
			if e := ev.Page.GetError(); e != nil {
				pg.Err = failure.FromProto(e)
			}
			if doc := j.deliverPage(pg, func(source string, d *distillv1.Distilled) (*document, *apiError) {
				return s.jobDocument(ctx, j.caller, j.plan, source, d)
			}); doc != nil {
				j.hook.send("page", webhookEvent{Success: true, ID: j.id, Data: []any{doc}})
			}
		case *distillv1.CrawlResponse_Summary:
			summary = ev.Summary
		}
		return nil
	})
	if first {
		s.jobs.abandon(j)
		if err == nil {
			err = failure.New(failure.Internal, "the crawl ended before it began")
		}
		began <- fromFailure(err)
		return
	}
	defer s.jobs.finished(j)
	j.mu.Lock()
	switch {
	case j.status == stateCancelled, summary.GetState() == distillv1.CrawlState_CRAWL_STATE_CANCELED,
		err != nil && failure.CodeOf(err) == failure.Canceled:
		j.status = stateCancelled
	case err != nil:
		j.status, j.failure = stateFailed, err.Error()
		s.logger.Warn("firecrawl crawl failed", "id", j.id, "err", err)
	case summary.GetState() == distillv1.CrawlState_CRAWL_STATE_FAILED:
		j.status, j.failure = stateFailed, summary.GetError().GetMessage()
	default:
		j.status = stateCompleted
	}
	if summary == nil {
		summary = &distillv1.CrawlStatusResponse{JobId: j.crawlID, PagesDone: int32(j.succeeded + len(j.errors) + len(j.robots))}
	}
	j.final = summary
	j.touch()
	status, failed := j.status, j.failure
	j.mu.Unlock()
	switch status {
	case stateCompleted:
		j.hook.send("completed", webhookEvent{Success: true, ID: j.id})
	case stateFailed:
		j.hook.send("failed", webhookEvent{ID: j.id, Error: failed})
	}
	j.hook.close()
}

// deliverPage keeps one page of a crawl, and returns its document (made
// by build) when it has one.
func (j *job) deliverPage(pg crawl.Page, build func(string, *distillv1.Distilled) (*document, *apiError)) *document {
	var doc *document
	var derr *apiError
	if pg.Err == nil {
		doc, derr = build(pg.URL, pg.Result)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	j.mu.Lock()
	defer j.mu.Unlock()
	defer j.touch()
	switch {
	case pg.Err != nil && failure.CodeOf(pg.Err) == failure.RobotsDisallowed:
		j.robots = append(j.robots, pg.URL)
	case pg.Err != nil:
		j.errors = append(j.errors, jobErrorEntry{ID: newID(), Timestamp: now, URL: pg.URL, Code: codeOf(failure.CodeOf(pg.Err)), Error: pg.Err.Error()})
	case derr != nil:
		j.errors = append(j.errors, jobErrorEntry{ID: newID(), Timestamp: now, URL: pg.URL, Code: derr.code, Error: derr.msg})
	default:
		j.docs = append(j.docs, doc)
		j.succeeded++
		return doc
	}
	return nil
}

// crawlStatus is where a crawl is: its summary once it ended, else what
// CrawlStatus says of it now (nil when it cannot say).
func (s *Server) crawlStatus(ctx context.Context, j *job) *distillv1.CrawlStatusResponse {
	j.mu.Lock()
	final, id := j.final, j.crawlID
	j.mu.Unlock()
	if final != nil {
		return final
	}
	st, err := s.crawls.CrawlStatus(ctx, &distillv1.CrawlStatusRequest{JobId: id})
	if err != nil {
		return nil
	}
	return st
}

// crawlTotal is how many pages a crawl has found so far: those read,
// those being read and those waiting, within its limit; once it ended,
// those it read.
func (j *job) crawlTotal(st *distillv1.CrawlStatusResponse) int {
	// PagesDone counts the pages that failed too.
	if j.final != nil {
		return int(j.final.GetPagesDone())
	}
	n := int(st.GetPagesDone() + st.GetInFlight() + st.GetQueued())
	if j.limit > 0 {
		n = min(n, j.limit)
	}
	return max(n, j.succeeded)
}

// foreignCrawl answers for a crawl this API did not start (one begun over
// gRPC, or at another gateway of a cluster, whose pages went to the
// client that began it): its status, and its cancel. It reports whether
// it answered.
func (s *Server) foreignCrawl(w http.ResponseWriter, r *http.Request) bool {
	if s.crawls == nil || !strings.Contains(r.URL.Path, "/crawl/") {
		return false
	}
	id := api.CrawlID(r.PathValue("id"))
	if !crawl.ValidID(id) {
		return false
	}
	if r.Method == http.MethodDelete {
		res, err := s.crawls.CrawlCancel(r.Context(), &distillv1.CrawlCancelRequest{JobId: id})
		if err != nil && failure.CodeOf(err) != failure.NotFound {
			writeError(w, fromFailure(err))
			return true
		}
		if err != nil {
			return false
		}
		st := res.GetStatus()
		writeJSON(w, http.StatusOK, map[string]any{"success": true, "status": firecrawlState(st.GetState())})
		return true
	}
	st, err := s.crawls.CrawlStatus(r.Context(), &distillv1.CrawlStatusRequest{JobId: id})
	if err != nil && failure.CodeOf(err) != failure.NotFound {
		writeError(w, fromFailure(err))
		return true
	}
	if err != nil {
		return false
	}
	total := int(st.GetPagesDone() + st.GetInFlight() + st.GetQueued())
	done := int(st.GetPagesDone() - st.GetPagesFailed())
	writeJSON(w, http.StatusOK, map[string]any{
		"success": true, "status": firecrawlState(st.GetState()), "total": total, "completed": done,
		"creditsUsed": done, "data": []any{},
		"warning": "this API did not begin this crawl here (DistillService or another gateway did): its pages went to the client that began it, and only its status is here",
	})
	return true
}

// firecrawlState names a crawl's state as Firecrawl does.
func firecrawlState(st distillv1.CrawlState) string {
	switch st {
	case distillv1.CrawlState_CRAWL_STATE_DONE:
		return stateCompleted
	case distillv1.CrawlState_CRAWL_STATE_CANCELED:
		return stateCancelled
	case distillv1.CrawlState_CRAWL_STATE_FAILED:
		return stateFailed
	}
	return stateScraping
}

// activeCrawl is one running crawl, as GET /v2/crawl/active lists it.
type activeCrawl struct {
	ID      string `json:"id"`
	TeamID  string `json:"teamId"`
	URL     string `json:"url"`
	Options any    `json:"options"`
}

// activeCrawls lists the crawls this server is running. distill has no
// teams: every caller sees every crawl, as it may poll any by id.
func (s *Server) activeCrawls(w http.ResponseWriter, r *http.Request) {
	out := []activeCrawl{}
	for _, j := range s.jobs.active() {
		j.mu.Lock()
		if j.crawlID != "" {
			out = append(out, activeCrawl{ID: j.id, URL: j.crawlURL})
		}
		j.mu.Unlock()
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "crawls": out})
}
