package firecrawl

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"distill.dev/gateway/api"
	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/crawl"
)

// batchRequest is POST /v{1,2}/batch/scrape: the URLs, and scrape options
// beside them.
type batchRequest struct {
	URLs              []string        `json:"urls"`
	Webhook           json.RawMessage `json:"webhook"`
	AppendToID        string          `json:"appendToId"`
	IgnoreInvalidURLs *bool           `json:"ignoreInvalidURLs"`
	MaxConcurrency    *int32          `json:"maxConcurrency"`
	scrapeOptions
}

// Job states, as Firecrawl names them.
const (
	stateScraping  = "scraping"
	stateCompleted = "completed"
	stateFailed    = "failed"
	stateCancelled = "cancelled"
	// An extract's, while it runs.
	stateProcessing = "processing"
)

func (s *Server) startBatch(w http.ResponseWriter, r *http.Request, version int) {
	var req batchRequest
	if err := decode(r, &req); err != nil {
		writeError(w, err)
		return
	}
	switch {
	case len(req.URLs) == 0:
		writeError(w, badRequest("Bad Request: urls is required"))
		return
	case len(req.URLs) > api.MaxBatchURLs:
		writeError(w, badRequest("Bad Request: a batch holds at most %d urls, got %d", api.MaxBatchURLs, len(req.URLs)))
		return
	case req.AppendToID != "":
		writeError(w, notSupported("appendToId", ""))
		return
	}
	p, err := req.plan(version, s.cfg.AllowLocal)
	if err != nil {
		writeError(w, err)
		return
	}
	hook, err := s.parseWebhook(req.Webhook)
	if err != nil {
		writeError(w, err)
		return
	}
	if err := s.checkModelWork(p); err != nil {
		writeError(w, err)
		return
	}
	if req.MaxConcurrency != nil {
		p.opts.Concurrency = req.MaxConcurrency
	}
	ignoreInvalid := version == 2 && (req.IgnoreInvalidURLs == nil || *req.IgnoreInvalidURLs) || version == 1 && req.IgnoreInvalidURLs != nil && *req.IgnoreInvalidURLs
	var urls, sources, invalid []string
	for _, raw := range req.URLs {
		target, ok := validURL(raw)
		if !ok {
			if !ignoreInvalid {
				writeError(w, badRequest("Bad Request: invalid URL %q (set ignoreInvalidURLs to skip it)", raw))
				return
			}
			invalid = append(invalid, raw)
			continue
		}
		urls, sources = append(urls, target), append(sources, raw)
	}
	if len(urls) == 0 {
		writeError(w, badRequest("Bad Request: none of the urls is valid"))
		return
	}
	if aerr := s.jobs.admit(r.Context()); aerr != nil {
		writeError(w, aerr)
		return
	}
	j := &run{id: newID(), kind: kindBatch, sources: sources, plan: p, caller: s.callerOf(r)}
	if err := s.jobs.create(r.Context(), j.id, jobRecord{Kind: kindBatch, Status: stateScraping, Total: len(urls)}); err != nil {
		s.jobs.finished()
		writeError(w, fromFailure(err))
		return
	}
	if hook != nil {
		j.hook = s.newWebhookSender(hook, kindBatch)
	}
	go s.runBatch(s.ctx, j, urls)
	out := map[string]any{"success": true, "id": j.id, "url": statusURL(r, "/v"+strconv.Itoa(version)+"/batch/scrape/"+j.id)}
	if len(invalid) > 0 {
		out["invalidURLs"] = invalid
	}
	writeJSON(w, http.StatusOK, out)
}

// runBatch sends the job's URLs over the batch path every door uses (the
// job queue, fanned out to the fetcher workers) and keeps each answer. It
// stops when the job's record says so, whichever gateway cancelled it.
func (s *Server) runBatch(ctx context.Context, j *run, urls []string) {
	defer s.jobs.finished()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go s.jobs.watchCancel(ctx, j.id, cancel)
	j.hook.send("started", webhookEvent{Success: true, ID: j.id})
	err := s.backend.Batch(ctx, urls, j.plan.opts, func(r *internalv1.FetchJobResult) {
		i := int(r.GetIndex())
		if i < 0 || i >= len(j.sources) {
			return
		}
		out := outcome{index: i, url: j.sources[i], result: r.GetResult()}
		if e := r.GetError(); e != nil {
			out.failed, out.code, out.msg = true, e.GetCode(), e.GetMessage()
		}
		if doc := s.keep(ctx, j, out); doc != nil {
			j.hook.send("page", webhookEvent{Success: true, ID: j.id, Data: []any{doc}})
		}
	})
	rec, uerr := s.jobs.update(context.WithoutCancel(ctx), j.id, func(rec *jobRecord) bool {
		rec.Ended = true
		switch {
		case rec.Status == stateCancelled:
		case err != nil:
			rec.Status, rec.Failure = stateFailed, err.Error()
		default:
			rec.Status = stateCompleted
		}
		return true
	})
	if uerr != nil {
		s.logger.Warn("firecrawl batch: its end not kept", "id", j.id, "err", uerr)
	}
	switch {
	case uerr == nil && rec.Status == stateCompleted:
		j.hook.send("completed", webhookEvent{Success: true, ID: j.id})
	case err != nil && rec.Status != stateCancelled:
		s.logger.Warn("firecrawl batch failed", "id", j.id, "err", err)
		j.hook.send("failed", webhookEvent{ID: j.id, Error: err.Error()})
	}
	j.hook.close()
}

// run is a job as the process running it holds it, beside its record:
// what it reads its pages with, as whom, and whom it tells.
type run struct {
	id   string
	kind string
	// sources are a batch's URLs as given.
	sources []string
	plan    *plan
	// caller is who asked for the job: its model work runs as them.
	caller caller
	// hook delivers the job's events; nil without a webhook.
	hook *webhookSender
}

// outcome is what became of one page of a job.
type outcome struct {
	// index is a batch page's place among its URLs.
	index  int
	url    string
	failed bool
	code   distillv1.ErrorCode
	msg    string
	result *distillv1.Distilled
}

// keep builds the document of one page of job j, once, and keeps it in
// the registry, or why it has none; it returns the document.
func (s *Server) keep(ctx context.Context, j *run, o outcome) *document {
	var doc *document
	var derr *apiError
	if !o.failed {
		doc, derr = s.jobDocument(ctx, j.caller, j.plan, o.url, o.result)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	var it jobItem
	var count func(*jobRecord)
	switch {
	case o.failed && o.code == failure.RobotsDisallowed:
		it, count = jobItem{Robots: o.url}, func(r *jobRecord) { r.Blocked++ }
	case o.failed:
		it = jobItem{Error: &jobErrorEntry{ID: newID(), Timestamp: now, URL: o.url, Code: codeOf(o.code), Error: o.msg}}
		count = func(r *jobRecord) { r.Failed++ }
	case derr != nil:
		it = jobItem{Error: &jobErrorEntry{ID: newID(), Timestamp: now, URL: o.url, Code: derr.code, Error: derr.msg}}
		count = func(r *jobRecord) { r.Failed++ }
	default:
		b, err := json.Marshal(doc)
		if err != nil {
			s.logger.Warn("firecrawl job: a document not kept", "id", j.id, "url", o.url, "err", err)
			return nil
		}
		it, count = jobItem{Index: o.index, Doc: b}, func(r *jobRecord) { r.Succeeded++ }
	}
	// Kept even once the job is cancelled, as its status says what it read.
	kctx := context.WithoutCancel(ctx)
	err := s.jobs.add(kctx, j.id, it, count)
	if err != nil && it.Doc != nil {
		// A document NATS does not take (larger than its max_payload)
		// is a failed page, not a page that vanished.
		it = jobItem{Error: &jobErrorEntry{ID: newID(), Timestamp: now, URL: o.url, Error: "the document could not be kept: " + err.Error()}}
		err = s.jobs.add(kctx, j.id, it, func(r *jobRecord) { r.Failed++ })
		doc = nil
	}
	if err != nil {
		s.logger.Warn("firecrawl job: a page not kept", "id", j.id, "url", o.url, "err", err)
		return nil
	}
	return doc
}

// validURL is raw as the batch fetches it, and whether it is a URL at all.
func validURL(raw string) (string, bool) {
	target, err := targetURL(raw)
	if err != nil {
		return "", false
	}
	u, perr := url.Parse(target)
	if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	return target, true
}

// statusURL is where a job's status is read, on the host the client
// reached.
func statusURL(r *http.Request, path string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + path
}

// batchStatusResponse is Firecrawl's job status. next is left out, not
// null, when there is no next page: the v1 client follows any next key.
type batchStatusResponse struct {
	Success     bool              `json:"success"`
	Status      string            `json:"status"`
	Total       int               `json:"total"`
	Completed   int               `json:"completed"`
	CreditsUsed int               `json:"creditsUsed"`
	ExpiresAt   string            `json:"expiresAt"`
	Next        string            `json:"next,omitempty"`
	Data        []json.RawMessage `json:"data"`
	Error       string            `json:"error,omitempty"`
}

func (s *Server) batchStatus(w http.ResponseWriter, r *http.Request) {
	id, rec, aerr := s.scrapeJob(r)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	if rec == nil {
		if !s.foreignCrawl(w, r) {
			writeError(w, &apiError{status: http.StatusNotFound, msg: "Job not found"})
		}
		return
	}
	skip, err := wholeNumber(r, "skip")
	if err != nil {
		writeError(w, err)
		return
	}
	limit, err := wholeNumber(r, "limit")
	if err != nil {
		writeError(w, err)
		return
	}
	items, _, ierr := s.jobs.items(r.Context(), id, 0)
	if ierr != nil {
		writeError(w, fromFailure(ierr))
		return
	}
	out := batchStatusResponse{
		Success: true, Status: rec.Status, Total: s.jobTotal(r.Context(), rec), Completed: rec.Succeeded,
		CreditsUsed: rec.Succeeded, ExpiresAt: rec.Expires.UTC().Format(time.RFC3339), Error: rec.Failure,
		Data: []json.RawMessage{},
	}
	// The documents done so far, in the order of the batch's URLs (a
	// crawl's in the order they completed), at most StatusPageBytes of
	// them and limit if the client gave one; next skips past them.
	size := 0
	for i, d := range docs(items, rec.Kind) {
		if i < skip {
			continue
		}
		if size > 0 && size+len(d) > s.cfg.StatusPageBytes || limit > 0 && len(out.Data) == limit {
			next := "?skip=" + strconv.Itoa(i)
			if limit > 0 {
				next += "&limit=" + strconv.Itoa(limit)
			}
			out.Next = statusURL(r, r.URL.Path) + next
			break
		}
		size += len(d)
		out.Data = append(out.Data, d)
	}
	writeJSON(w, http.StatusOK, out)
}

// jobTotal is how many pages a job has: a batch's URLs, the pages a crawl
// has found so far.
func (s *Server) jobTotal(ctx context.Context, rec *jobRecord) int {
	if rec.Kind == kindCrawl {
		return rec.crawlTotal(s.crawlStatus(ctx, rec))
	}
	return rec.Total
}

// scrapeJob is the id and record of the batch or crawl the request names,
// no record when none. A crawl is named by its UUID or by its crawl id, as
// gRPC names it.
func (s *Server) scrapeJob(r *http.Request) (string, *jobRecord, *apiError) {
	id := r.PathValue("id")
	if crawl.ValidID(id) {
		id = api.CrawlUUID(id)
	}
	rec, err := s.jobs.get(r.Context(), id)
	if err != nil || rec == nil || rec.Kind == kindExtract {
		return id, nil, err
	}
	return id, rec, nil
}

// wholeNumber is the query parameter name, 0 when absent.
func wholeNumber(r *http.Request, name string) (int, *apiError) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, badRequest("Bad Request: %s must be a whole number, got %q", name, v)
	}
	return n, nil
}

// cancelBatch stops a batch or a crawl, wherever it runs: the process
// running a batch watches its record, and a crawl is cancelled as
// CrawlCancel cancels any.
func (s *Server) cancelBatch(w http.ResponseWriter, r *http.Request) {
	id, rec, aerr := s.scrapeJob(r)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	if rec == nil {
		if !s.foreignCrawl(w, r) {
			writeError(w, &apiError{status: http.StatusNotFound, msg: "Job not found"})
		}
		return
	}
	ctx := context.WithoutCancel(r.Context())
	after, err := s.jobs.cancel(ctx, id)
	if err != nil {
		writeError(w, fromFailure(err))
		return
	}
	if after.CrawlID != "" {
		// Wherever the crawl runs: its summary then says it was canceled.
		if _, err := s.crawls.CrawlCancel(ctx, &distillv1.CrawlCancelRequest{JobId: after.CrawlID}); err != nil {
			s.logger.Warn("firecrawl crawl: cancel failed", "id", id, "err", err)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": after.Status == stateCancelled, "status": after.Status})
}

// jobErrorEntry is one failed URL, as Firecrawl's errors endpoint lists it.
type jobErrorEntry struct {
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"`
	URL       string `json:"url"`
	Code      string `json:"code,omitempty"`
	Error     string `json:"error"`
}

func (s *Server) batchErrors(w http.ResponseWriter, r *http.Request) {
	id, rec, aerr := s.scrapeJob(r)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	if rec == nil {
		writeError(w, &apiError{status: http.StatusNotFound, msg: "Job not found"})
		return
	}
	items, _, err := s.jobs.items(r.Context(), id, 0)
	if err != nil {
		writeError(w, fromFailure(err))
		return
	}
	errs, robots := []jobErrorEntry{}, []string{}
	for _, it := range items {
		switch {
		case it.Error != nil:
			errs = append(errs, *it.Error)
		case it.Robots != "":
			robots = append(robots, it.Robots)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"errors": errs, "robotsBlocked": robots})
}
