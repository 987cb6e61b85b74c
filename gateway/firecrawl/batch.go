package firecrawl

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
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
	j, aerr := s.jobs.start(kindBatch, len(urls))
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	j.sources, j.plan, j.caller = sources, p, s.callerOf(r)
	if hook != nil {
		j.hook = s.newWebhookSender(hook, kindBatch)
	}
	ctx, cancel := context.WithCancel(s.ctx)
	j.cancel = cancel
	go s.runBatch(ctx, j, urls)
	out := map[string]any{"success": true, "id": j.id, "url": statusURL(r, "/v"+strconv.Itoa(version)+"/batch/scrape/"+j.id)}
	if len(invalid) > 0 {
		out["invalidURLs"] = invalid
	}
	writeJSON(w, http.StatusOK, out)
}

// runBatch sends the job's URLs over the batch path every door uses (the
// job queue, fanned out to the fetcher workers) and keeps each answer.
func (s *Server) runBatch(ctx context.Context, j *job, urls []string) {
	defer s.jobs.finished(j)
	defer j.cancel()
	j.hook.send("started", webhookEvent{Success: true, ID: j.id})
	err := s.backend.Batch(ctx, urls, j.plan.opts, func(r *internalv1.FetchJobResult) {
		if doc := j.deliver(r, func(source string, d *distillv1.Distilled) (*document, *apiError) {
			return s.jobDocument(ctx, j.caller, j.plan, source, d)
		}); doc != nil {
			j.hook.send("page", webhookEvent{Success: true, ID: j.id, Data: []any{doc}})
		}
	})
	j.mu.Lock()
	switch {
	case j.status == stateCancelled:
	case err != nil:
		j.status, j.failure = stateFailed, err.Error()
		s.logger.Warn("firecrawl batch failed", "id", j.id, "err", err)
	default:
		j.status = stateCompleted
	}
	status := j.status
	j.touch()
	j.mu.Unlock()
	switch status {
	case stateCompleted:
		j.hook.send("completed", webhookEvent{Success: true, ID: j.id})
	case stateFailed:
		j.hook.send("failed", webhookEvent{ID: j.id, Error: err.Error()})
	}
	j.hook.close()
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
	Success     bool        `json:"success"`
	Status      string      `json:"status"`
	Total       int         `json:"total"`
	Completed   int         `json:"completed"`
	CreditsUsed int         `json:"creditsUsed"`
	ExpiresAt   string      `json:"expiresAt"`
	Next        string      `json:"next,omitempty"`
	Data        []*document `json:"data"`
	Error       string      `json:"error,omitempty"`
}

func (s *Server) batchStatus(w http.ResponseWriter, r *http.Request) {
	j := s.scrapeJob(r)
	if j == nil {
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
	var st *distillv1.CrawlStatusResponse
	if j.kind == kindCrawl {
		st = s.crawlStatus(r.Context(), j)
	}
	j.mu.Lock()
	total := len(j.docs)
	if j.kind == kindCrawl {
		total = j.crawlTotal(st)
	}
	out := batchStatusResponse{
		Success: true, Status: j.status, Total: total, Completed: j.succeeded,
		CreditsUsed: j.succeeded, ExpiresAt: j.expires.UTC().Format(time.RFC3339), Error: j.failure,
		Data: []*document{},
	}
	// The documents done so far, in the order of the batch's URLs (a
	// crawl's in the order they completed), at most StatusPageBytes of
	// them and limit if the client gave one; next skips past them.
	seen, size := 0, 0
	for i, d := range j.docs {
		if d == nil {
			continue
		}
		seen++
		if seen <= skip {
			continue
		}
		b, _ := json.Marshal(d)
		if size > 0 && size+len(b) > s.cfg.StatusPageBytes || limit > 0 && len(out.Data) == limit {
			next := "?skip=" + strconv.Itoa(seen-1)
			if limit > 0 {
				next += "&limit=" + strconv.Itoa(limit)
			}
			out.Next = statusURL(r, r.URL.Path) + next
			break
		}
		size += len(b)
		out.Data = append(out.Data, j.docs[i])
	}
	j.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// scrapeJob is the batch or crawl the request names, nil when none. A
// crawl is named by its UUID or by its crawl id, as gRPC names it.
func (s *Server) scrapeJob(r *http.Request) *job {
	id := r.PathValue("id")
	if crawl.ValidID(id) {
		id = api.CrawlUUID(id)
	}
	j := s.jobs.get(id)
	if j == nil || j.kind == kindExtract {
		return nil
	}
	return j
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

func (s *Server) cancelBatch(w http.ResponseWriter, r *http.Request) {
	j := s.scrapeJob(r)
	if j == nil {
		if !s.foreignCrawl(w, r) {
			writeError(w, &apiError{status: http.StatusNotFound, msg: "Job not found"})
		}
		return
	}
	j.mu.Lock()
	if j.status == stateScraping {
		j.status = stateCancelled
		j.touch()
	}
	status, crawlID := j.status, j.crawlID
	j.mu.Unlock()
	if crawlID != "" {
		// Wherever the crawl runs: its summary then says it was canceled.
		if _, err := s.crawls.CrawlCancel(context.WithoutCancel(r.Context()), &distillv1.CrawlCancelRequest{JobId: crawlID}); err != nil {
			s.logger.Warn("firecrawl crawl: cancel failed", "id", j.id, "err", err)
		}
	} else if j.cancel != nil {
		j.cancel()
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": status == stateCancelled, "status": status})
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
	j := s.scrapeJob(r)
	if j == nil {
		writeError(w, &apiError{status: http.StatusNotFound, msg: "Job not found"})
		return
	}
	j.mu.Lock()
	out := map[string]any{"errors": append([]jobErrorEntry{}, j.errors...), "robotsBlocked": append([]string{}, j.robots...)}
	j.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

// Kinds of job, as webhook event types name them.
const (
	kindBatch   = "batch_scrape"
	kindCrawl   = "crawl"
	kindExtract = "extract"
)

// job is one batch scrape or crawl, kept until it expires.
type job struct {
	id string
	// kind is set before the job is listed, and never changes.
	kind    string
	expires time.Time
	sources []string
	plan    *plan
	cancel  context.CancelFunc
	// crawlID is a crawl's job id once it began (id is its UUID form),
	// crawlURL its first URL, limit its page limit, and final its summary
	// once it ended; empty for a batch.
	crawlID  string
	crawlURL string
	limit    int
	final    *distillv1.CrawlStatusResponse
	// caller is who asked for the job: its model work runs as them.
	caller caller
	// extracted is an extract's data once it completed, warnings what
	// it says beside it.
	extracted map[string]any
	warnings  []string
	// hook delivers the job's events; nil without a webhook.
	hook *webhookSender

	mu sync.Mutex
	// changed is closed, and made anew, whenever the job delivers a page
	// or ends: a watcher waits on it.
	changed   chan struct{}
	status    string
	docs      []*document
	succeeded int
	errors    []jobErrorEntry
	robots    []string
	failure   string
}

// deliver keeps one URL's answer, and returns its document (made by
// build) when it has one.
func (j *job) deliver(r *internalv1.FetchJobResult, build func(string, *distillv1.Distilled) (*document, *apiError)) *document {
	i := int(r.GetIndex())
	if i < 0 || i >= len(j.sources) {
		return nil
	}
	source := j.sources[i]
	var doc *document
	var derr *apiError
	if e := r.GetError(); e == nil {
		doc, derr = build(source, r.GetResult())
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	defer j.touch()
	switch e := r.GetError(); {
	case e != nil && e.GetCode() == failure.RobotsDisallowed:
		j.robots = append(j.robots, source)
	case e != nil:
		j.errors = append(j.errors, jobErrorEntry{ID: newID(), Timestamp: time.Now().UTC().Format(time.RFC3339), URL: source, Code: codeOf(e.GetCode()), Error: e.GetMessage()})
	case derr != nil:
		j.errors = append(j.errors, jobErrorEntry{ID: newID(), Timestamp: time.Now().UTC().Format(time.RFC3339), URL: source, Code: derr.code, Error: derr.msg})
	default:
		j.docs[i] = doc
		j.succeeded++
		return doc
	}
	return nil
}

// touch tells the job's watchers it changed. Called with j.mu held.
func (j *job) touch() {
	close(j.changed)
	j.changed = make(chan struct{})
}

// jobs are the batch jobs this server keeps, in memory: a status poll must
// reach the gateway that started the job.
type jobs struct {
	mu      sync.Mutex
	byID    map[string]*job
	order   []*job
	running chan struct{}
	wg      sync.WaitGroup
	max     int
	ttl     time.Duration
}

func newJobs(maxRunning, maxKept int, ttl time.Duration) *jobs {
	return &jobs{byID: map[string]*job{}, running: make(chan struct{}, maxRunning), max: maxKept, ttl: ttl}
}

// start registers a job of kind, of n URLs (a batch's), or refuses it
// with 429 while the server runs as many jobs as it may, or keeps as many
// as it may.
func (js *jobs) start(kind string, n int) (*job, *apiError) {
	select {
	case js.running <- struct{}{}:
	default:
		return nil, &apiError{status: http.StatusTooManyRequests, retryAfter: 5 * time.Second,
			msg: "Rate limit exceeded: this server runs " + strconv.Itoa(cap(js.running)) + " batch scrapes and crawls at once; retry after 5 seconds"}
	}
	js.mu.Lock()
	defer js.mu.Unlock()
	js.evict(time.Now())
	if len(js.order) >= js.max {
		<-js.running
		return nil, &apiError{status: http.StatusTooManyRequests, retryAfter: 5 * time.Second,
			msg: "Rate limit exceeded: this server keeps " + strconv.Itoa(js.max) + " batch scrapes and crawls; retry after 5 seconds"}
	}
	status := stateScraping
	if kind == kindExtract {
		status = stateProcessing
	}
	j := &job{id: newID(), kind: kind, expires: time.Now().Add(js.ttl), status: status, docs: make([]*document, n), changed: make(chan struct{})}
	js.byID[j.id] = j
	js.order = append(js.order, j)
	js.wg.Add(1)
	return j, nil
}

// evict forgets expired jobs, and finished ones beyond the limit, oldest
// first.
func (js *jobs) evict(now time.Time) {
	keep := js.order[:0]
	over := len(js.order) - js.max + 1
	for _, j := range js.order {
		j.mu.Lock()
		finished := j.status != stateScraping && j.status != stateProcessing
		j.mu.Unlock()
		if finished && (now.After(j.expires) || over > 0) {
			delete(js.byID, j.id)
			over--
			continue
		}
		keep = append(keep, j)
	}
	js.order = keep
}

func (js *jobs) finished(*job) {
	<-js.running
	js.wg.Done()
}

// abandon forgets a job that never started.
func (js *jobs) abandon(j *job) {
	js.mu.Lock()
	delete(js.byID, j.id)
	js.order = slices.DeleteFunc(js.order, func(o *job) bool { return o == j })
	js.mu.Unlock()
	js.finished(j)
}

// rename gives a crawl's job the id of its crawl, in UUID form.
func (js *jobs) rename(j *job, crawlID string) {
	js.mu.Lock()
	defer js.mu.Unlock()
	j.mu.Lock()
	defer j.mu.Unlock()
	delete(js.byID, j.id)
	j.id, j.crawlID = api.CrawlUUID(crawlID), crawlID
	js.byID[j.id] = j
}

func (js *jobs) get(id string) *job {
	js.mu.Lock()
	defer js.mu.Unlock()
	j := js.byID[id]
	if j != nil && time.Now().After(j.expires) {
		return nil
	}
	return j
}

func (js *jobs) wait() { js.wg.Wait() }

// active are the jobs not finished yet, oldest first.
func (js *jobs) active() []*job {
	js.mu.Lock()
	defer js.mu.Unlock()
	var out []*job
	for _, j := range js.order {
		j.mu.Lock()
		if j.status == stateScraping || j.status == stateProcessing {
			out = append(out, j)
		}
		j.mu.Unlock()
	}
	return out
}
