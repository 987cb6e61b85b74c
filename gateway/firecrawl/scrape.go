package firecrawl

import (
	"net/http"
	"strings"

	"distill.dev/services/fetcher/pipeline"
)

// scrapeRequest is POST /v{1,2}/scrape.
type scrapeRequest struct {
	URL string `json:"url"`
	scrapeOptions
}

// scrapeResponse is Firecrawl's answer to a scrape. The v1 client reads
// the warning beside data, the v2 client inside it.
type scrapeResponse struct {
	Success bool      `json:"success"`
	Data    *document `json:"data"`
	Warning string    `json:"warning,omitempty"`
}

func (s *Server) scrape(w http.ResponseWriter, r *http.Request, version int) {
	var req scrapeRequest
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	target, err := targetURL(req.URL)
	if err != nil {
		writeError(w, err)
		return
	}
	p, err := req.plan(version, s.cfg.AllowLocal)
	if err != nil {
		writeError(w, err)
		return
	}
	if err := s.checkModelWork(p); err != nil {
		writeError(w, err)
		return
	}
	c := s.callerOf(r)
	if err := s.actorScrape(r, p); err != nil {
		writeError(w, err)
		return
	}
	// An actor's model work comes first: the host reads the page under the
	// actor's allowlist and budgets, so a page it refuses is never fetched
	// here; one it read is then fetched for its metadata, from the cache.
	var model *document
	run := newID()
	if c.scoped {
		model = &document{}
		if err := s.modelWork(r.Context(), c, run, p, target, model); err != nil {
			writeError(w, err)
			return
		}
	}
	// A scrape's metadata is always what the page's head says.
	p.opts.HeadMetadata = true
	res, derr := s.backend.Do(r.Context(), pipeline.Request{URL: target, Options: p.opts})
	if derr != nil {
		s.logger.DebugContext(r.Context(), "firecrawl scrape", "url", target, "err", derr)
		writeError(w, fromFailure(derr))
		return
	}
	doc, err := p.document(req.URL, res.Distilled)
	if err != nil {
		writeError(w, err)
		return
	}
	if model != nil {
		doc.JSON, doc.Extract, doc.Summary = model.JSON, model.Extract, model.Summary
		if model.Warning != "" {
			doc.addWarning(model.Warning)
		}
	} else if err := s.modelWork(r.Context(), c, doc.Metadata.ScrapeID, p, target, doc); err != nil {
		writeError(w, err)
		return
	}
	out := scrapeResponse{Success: true, Data: doc}
	if version == 1 {
		out.Warning = doc.Warning
	}
	writeJSON(w, http.StatusOK, out)
}

// targetURL is the URL a request names: required, and, as Firecrawl
// takes it, http:// when it names no scheme.
func targetURL(raw string) (string, *apiError) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", badRequest("Bad Request: url is required")
	}
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	return raw, nil
}
