package firecrawl

import (
	"encoding/json"
	"net/http"
	"time"

	"distill.dev/gateway/api"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// mapRequest is POST /v{1,2}/map, v1's keys included.
type mapRequest struct {
	URL                   string            `json:"url"`
	Search                string            `json:"search"`
	Sitemap               string            `json:"sitemap"`
	IncludeSubdomains     *bool             `json:"includeSubdomains"`
	IgnoreQueryParameters *bool             `json:"ignoreQueryParameters"`
	Limit                 *int64            `json:"limit"`
	Timeout               *int64            `json:"timeout"`
	IncludePaths          []string          `json:"includePaths"`
	ExcludePaths          []string          `json:"excludePaths"`
	IgnoreRobotsTxt       *bool             `json:"ignoreRobotsTxt"`
	Delay                 *float64          `json:"delay"`
	Location              json.RawMessage   `json:"location"`
	Headers               map[string]string `json:"headers"`
	AllowExternalLinks    *bool             `json:"allowExternalLinks"`
	// Choices of Firecrawl's index and crawler that change nothing here.
	UseIndex               *bool           `json:"useIndex"`
	IgnoreCache            *bool           `json:"ignoreCache"`
	FilterByPath           *bool           `json:"filterByPath"`
	MaxDiscoveryDepth      *int            `json:"maxDiscoveryDepth"`
	CrawlEntireDomain      *bool           `json:"crawlEntireDomain"`
	AllowSubdomains        *bool           `json:"allowSubdomains"`
	DeduplicateSimilarURLs *bool           `json:"deduplicateSimilarURLs"`
	RegexOnFullURL         *bool           `json:"regexOnFullURL"`
	RobotsUserAgent        string          `json:"robotsUserAgent"`
	Origin                 string          `json:"origin"`
	Integration            json.RawMessage `json:"integration"`
	ThreatProtection       json.RawMessage `json:"threatProtection"`
	AuditMetadata          json.RawMessage `json:"auditMetadata"`
	UseMock                string          `json:"useMock"`
	// v1 only.
	IgnoreSitemap *bool `json:"ignoreSitemap"`
	SitemapOnly   *bool `json:"sitemapOnly"`
}

// Firecrawl's bounds on a map's limit.
const (
	defaultMapLimit = 5000
	maxMapLimit     = 100000
)

type mapLink struct {
	URL string `json:"url"`
}

func (s *Server) mapSite(w http.ResponseWriter, r *http.Request, version int) {
	var req mapRequest
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	target, err := targetURL(req.URL)
	if err != nil {
		writeError(w, err)
		return
	}
	mreq, warnings, err := req.distill(target, s.cfg.AllowLocal)
	if err != nil {
		writeError(w, err)
		return
	}
	mapped, merr := api.MapRequestOf(mreq)
	if merr != nil {
		writeError(w, fromFailure(merr))
		return
	}
	res, merr := s.backend.Map(r.Context(), mapped)
	if merr != nil {
		writeError(w, fromFailure(merr))
		return
	}
	out := map[string]any{"success": true}
	if version == 1 {
		out["links"] = res.URLs
	} else {
		links := make([]mapLink, len(res.URLs))
		for i, u := range res.URLs {
			links[i] = mapLink{URL: u}
		}
		out["links"] = links
	}
	if len(warnings) > 0 {
		out["warning"] = joinWarnings(warnings)
	}
	writeJSON(w, http.StatusOK, out)
}

// distill maps the request onto DistillService's MapRequest, which the
// gRPC API, the CLI and MCP map with too.
func (m *mapRequest) distill(target string, allowLocal bool) (*distillv1.MapRequest, []string, *apiError) {
	if err := threatProtection(m.ThreatProtection); err != nil {
		return nil, nil, err
	}
	out := &distillv1.MapRequest{
		Url:          target,
		Query:        m.Search,
		IncludePaths: m.IncludePaths,
		ExcludePaths: m.ExcludePaths,
		AllowLocal:   allowLocal,
		// Firecrawl maps a site's subdomains unless told otherwise.
		IncludeSubdomains: m.IncludeSubdomains == nil || *m.IncludeSubdomains,
		IgnoreRobots:      m.IgnoreRobotsTxt != nil && *m.IgnoreRobotsTxt,
	}
	var warnings []string
	limit := int64(defaultMapLimit)
	if m.Limit != nil {
		if *m.Limit < 1 || *m.Limit > maxMapLimit {
			return nil, nil, badRequest("limit must be between 1 and %d, got %d", maxMapLimit, *m.Limit)
		}
		limit = *m.Limit
	}
	l := int32(limit)
	out.MapLimit = &l
	if m.Timeout != nil {
		if *m.Timeout <= 0 {
			return nil, nil, badRequest("timeout must be positive, got %d", *m.Timeout)
		}
		secs := int32(min((*m.Timeout+999)/1000, 1<<30))
		out.TimeoutSecs = &secs
	}
	if m.Delay != nil {
		if *m.Delay <= 0 || *m.Delay > 60 {
			return nil, nil, badRequest("delay is in seconds, more than 0 and at most 60, got %v", *m.Delay)
		}
		ms := int64(*m.Delay * float64(time.Second/time.Millisecond))
		out.DelayMs = &ms
	}
	sitemap := m.Sitemap
	if m.SitemapOnly != nil && *m.SitemapOnly {
		sitemap = "only"
	}
	if m.IgnoreSitemap != nil && *m.IgnoreSitemap {
		sitemap = "skip"
	}
	switch sitemap {
	case "", "include":
	case "only":
		out.NoMapCrawl = true
	case "skip":
		return nil, nil, notSupported("sitemap: skip", "distill's map always reads the sitemaps, then crawls what they leave out")
	default:
		return nil, nil, badRequest("sitemap must be only, include or skip, got %q", sitemap)
	}
	switch {
	case len(m.Headers) > 0:
		return nil, nil, notSupported("headers", "")
	case m.AllowExternalLinks != nil && *m.AllowExternalLinks:
		return nil, nil, notSupported("allowExternalLinks", "a map lists one site's URLs")
	case m.UseMock != "":
		return nil, nil, notSupported("useMock", "")
	}
	if !isNull(m.Location) {
		warnings = append(warnings, "location is ignored: distill fetches from where it runs")
	}
	return out, warnings, nil
}
