package firecrawl

import (
	"bytes"
	"context"
	"mime"
	"net/http"
	"strings"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
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
	res, derr := s.backend.Do(r.Context(), pipeline.Request{URL: target, Options: p.opts, KeepBody: true})
	if derr != nil {
		s.logger.DebugContext(r.Context(), "firecrawl scrape", "url", target, "err", derr)
		writeError(w, fromFailure(derr))
		return
	}
	d, body, contentType := res.Distilled, res.Body, res.ContentType
	if len(p.excludeTags) > 0 {
		var warning string
		if d, body, contentType, warning, err = s.exclude(r.Context(), p, d, body, contentType); err != nil {
			writeError(w, err)
			return
		}
		if warning != "" {
			p.warn(warning)
		}
	}
	doc, err := p.document(req.URL, d, body, contentType)
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

// exclude takes excludeTags out of the page the pipeline distilled and
// distills what is left again, so that the Markdown, the links and the
// html format all leave them out. A page that is not HTML (a PDF) has no
// tags to take out, and is answered as it is, with a warning. p is only
// read: the pages of a batch share it.
func (s *Server) exclude(ctx context.Context, p *plan, d *distillv1.Distilled, body []byte, contentType string) (*distillv1.Distilled, []byte, string, string, *apiError) {
	mt, _, _ := mime.ParseMediaType(contentType)
	if body == nil || !htmlType(mt) {
		return d, body, contentType, "excludeTags is ignored: the page is not HTML", nil
	}
	page, err := readHTML(body, contentType)
	if err != nil {
		return nil, nil, "", "", &apiError{status: http.StatusInternalServerError, msg: "read " + d.GetFinalUrl() + ": " + err.Error()}
	}
	tree, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		return nil, nil, "", "", &apiError{status: http.StatusInternalServerError, msg: "parse " + d.GetFinalUrl() + ": " + err.Error()}
	}
	// Checked by extract.CheckSelector when the plan was made.
	sel, err := cascadia.ParseGroup(strings.Join(p.excludeTags, ", "))
	if err != nil {
		return nil, nil, "", "", badRequest("excludeTags: %v", err)
	}
	for _, n := range cascadia.QueryAll(tree, sel) {
		if n.Parent != nil {
			n.Parent.RemoveChild(n)
		}
	}
	var b bytes.Buffer
	if err := html.Render(&b, tree); err != nil {
		return nil, nil, "", "", &apiError{status: http.StatusInternalServerError, msg: "render " + d.GetFinalUrl() + ": " + err.Error()}
	}
	const utf8HTML = "text/html; charset=utf-8"
	out, xerr := s.backend.Extract(ctx, &internalv1.ExtractRequest{
		Html: b.Bytes(), Url: d.GetFinalUrl(), Status: d.GetStatus(), ContentType: utf8HTML,
		Options: p.opts, Rendered: d.GetDiagnostics().GetUsedHeadless(),
	})
	if xerr != nil {
		return nil, nil, "", "", fromFailure(xerr)
	}
	trimmed := out.GetDistilled()
	trimmed.FinalUrl, trimmed.Status = d.GetFinalUrl(), d.GetStatus()
	return trimmed, b.Bytes(), utf8HTML, "", nil
}
