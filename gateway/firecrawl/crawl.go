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
	if err := s.jobs.admit(r.Context()); err != nil {
		writeError(w, err)
		return
	}
	j := &run{kind: kindCrawl, plan: p, caller: s.callerOf(r)}
	if hook != nil {
		j.hook = s.newWebhookSender(hook, kindCrawl)
	}
	rec := jobRecord{Kind: kindCrawl, Status: stateScraping, CrawlURL: target, Limit: int(creq.GetMaxPages())}
	began := make(chan *apiError, 1)
	go s.runCrawl(s.ctx, j, rec, creq, began)
	if err := <-began; err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "id": j.id, "url": statusURL(r, "/v"+strconv.Itoa(version)+"/crawl/"+j.id)})
}

// runCrawl runs the crawl as DistillService's Crawl runs one, so that
// CrawlStatus and CrawlCancel see it under its id (here in the UUID form
// api.CrawlUUID gives it, the id of its record rec), and keeps each page
// as it completes. began gets nil once the crawl has its id and its
// record, or why it never began.
func (s *Server) runCrawl(ctx context.Context, j *run, rec jobRecord, creq *distillv1.CrawlRequest, began chan<- *apiError) {
	var summary *distillv1.CrawlStatusResponse
	first := true
	// Ends the watch of the record's cancel flag with the crawl.
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	err := s.crawls.CrawlSite(ctx, creq, nil, func(r *distillv1.CrawlResponse) error {
		if first {
			// The first message names the job.
			first = false
			return s.beginCrawl(wctx, j, rec, r.GetJobId(), began)
		}
		switch ev := r.GetEvent().(type) {
		case *distillv1.CrawlResponse_Page:
			o := outcome{url: ev.Page.GetUrl(), result: ev.Page.GetResult()}
			if e := ev.Page.GetError(); e != nil {
				pe := failure.FromProto(e)
				o.failed, o.code, o.msg = true, failure.CodeOf(pe), pe.Error()
			}
			if doc := s.keep(ctx, j, o); doc != nil {
				j.hook.send("page", webhookEvent{Success: true, ID: j.id, Data: []any{doc}})
			}
		case *distillv1.CrawlResponse_Summary:
			summary = ev.Summary
		}
		return nil
	})
	if first || j.id == "" {
		if first {
			s.jobs.finished()
			if err == nil {
				err = failure.New(failure.Internal, "the crawl ended before it began")
			}
			began <- fromFailure(err)
		}
		return
	}
	defer s.jobs.finished()
	s.endCrawl(ctx, j, summary, err)
}

// beginCrawl registers crawl id's job, watches its record for a cancel
// until ctx ends, and tells began.
func (s *Server) beginCrawl(ctx context.Context, j *run, rec jobRecord, id string, began chan<- *apiError) error {
	rec.CrawlID = id
	if err := s.jobs.create(context.WithoutCancel(ctx), api.CrawlUUID(id), rec); err != nil {
		s.jobs.finished()
		if _, cerr := s.crawls.CrawlCancel(context.WithoutCancel(ctx), &distillv1.CrawlCancelRequest{JobId: id}); cerr != nil {
			s.logger.Warn("firecrawl crawl: cancel failed", "crawl", id, "err", cerr)
		}
		began <- fromFailure(err)
		return err
	}
	j.id = api.CrawlUUID(id)
	// A gateway that cancels the job cancels the crawl where the crawls
	// are shared (one hub); the record's flag stops it here besides.
	go s.jobs.watchCancel(ctx, j.id, func() {
		if _, err := s.crawls.CrawlCancel(context.WithoutCancel(ctx), &distillv1.CrawlCancelRequest{JobId: id}); err != nil {
			s.logger.Warn("firecrawl crawl: cancel failed", "crawl", id, "err", err)
		}
	})
	j.hook.send("started", webhookEvent{Success: true, ID: j.id})
	began <- nil
	return nil
}

// endCrawl keeps how crawl j ended, and tells its webhook.
func (s *Server) endCrawl(ctx context.Context, j *run, summary *distillv1.CrawlStatusResponse, err error) {
	rec, uerr := s.jobs.update(context.WithoutCancel(ctx), j.id, func(r *jobRecord) bool {
		switch {
		case r.Status == stateCancelled, summary.GetState() == distillv1.CrawlState_CRAWL_STATE_CANCELED,
			err != nil && failure.CodeOf(err) == failure.Canceled:
			r.Status = stateCancelled
		case err != nil:
			r.Status, r.Failure = stateFailed, err.Error()
		case summary.GetState() == distillv1.CrawlState_CRAWL_STATE_FAILED:
			r.Status, r.Failure = stateFailed, summary.GetError().GetMessage()
		default:
			r.Status = stateCompleted
		}
		r.Ended, r.EndedPages = true, r.Succeeded+r.Failed+r.Blocked
		if summary != nil {
			r.EndedPages = int(summary.GetPagesDone())
		}
		return true
	})
	if uerr != nil {
		s.logger.Warn("firecrawl crawl: its end not kept", "id", j.id, "err", uerr)
	}
	if rec.Status == stateFailed {
		s.logger.Warn("firecrawl crawl failed", "id", j.id, "err", rec.Failure)
	}
	switch rec.Status {
	case stateCompleted:
		j.hook.send("completed", webhookEvent{Success: true, ID: j.id})
	case stateFailed:
		j.hook.send("failed", webhookEvent{ID: j.id, Error: rec.Failure})
	}
	j.hook.close()
}

// crawlStatus is where a crawl is now, as CrawlStatus says it: nil once
// it ended (its record says how far it got) or when it cannot say.
func (s *Server) crawlStatus(ctx context.Context, rec *jobRecord) *distillv1.CrawlStatusResponse {
	if rec.Ended {
		return nil
	}
	st, err := s.crawls.CrawlStatus(ctx, &distillv1.CrawlStatusRequest{JobId: rec.CrawlID})
	if err != nil {
		return nil
	}
	return st
}

// crawlTotal is how many pages a crawl has found so far: those read,
// those being read and those waiting, within its limit; once it ended,
// those it read.
func (r *jobRecord) crawlTotal(st *distillv1.CrawlStatusResponse) int {
	// PagesDone counts the pages that failed too.
	if r.Ended {
		return r.EndedPages
	}
	n := int(st.GetPagesDone() + st.GetInFlight() + st.GetQueued())
	if r.Limit > 0 {
		n = min(n, r.Limit)
	}
	return max(n, r.Succeeded)
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

// activeCrawls lists the crawls the gateways sharing the job registry are
// running. distill has no teams: every caller sees every crawl, as it may
// poll any by id.
func (s *Server) activeCrawls(w http.ResponseWriter, r *http.Request) {
	active, err := s.jobs.active(r.Context())
	if err != nil {
		writeError(w, fromFailure(err))
		return
	}
	out := []activeCrawl{}
	for _, l := range active {
		if l.Record.CrawlID != "" {
			out = append(out, activeCrawl{ID: l.ID, URL: l.Record.CrawlURL})
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "crawls": out})
}
