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
	res, derr := s.backend.Do(r.Context(), pipeline.Request{URL: target, Options: p.opts, KeepBody: true})
	if derr != nil {
		s.logger.DebugContext(r.Context(), "firecrawl scrape", "url", target, "err", derr)
		writeError(w, fromFailure(derr))
		return
	}
	doc, err := p.document(req.URL, res.Distilled, res.Body, res.ContentType)
	if err != nil {
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
