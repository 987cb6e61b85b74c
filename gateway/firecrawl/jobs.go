package firecrawl

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"distill.dev/proto/failure"
	"distill.dev/services/fetcher/crawl/crawljs"
)

// Kinds of job, as webhook event types name them.
const (
	kindBatch   = "batch_scrape"
	kindCrawl   = "crawl"
	kindExtract = "extract"
)

// jobRecord is a batch scrape's, a crawl's or an extract's entry in the
// job registry (crawljs.Registry), which every gateway sharing the NATS
// reads: its status, counts and outcome, and whether it was told to stop.
// What it produced (documents, failed URLs) are its items (jobItem).
type jobRecord struct {
	Kind    string    `json:"kind"`
	Status  string    `json:"status"`
	Started time.Time `json:"started"`
	Expires time.Time `json:"expires"`
	// Total is a batch's URLs.
	Total     int `json:"total,omitempty"`
	Succeeded int `json:"succeeded,omitempty"`
	// Failed counts the items that are errors, Blocked those robots.txt
	// kept out.
	Failed  int    `json:"failed,omitempty"`
	Blocked int    `json:"blocked,omitempty"`
	Failure string `json:"failure,omitempty"`
	// Cancel tells the process running the job to stop it.
	Cancel bool `json:"cancel,omitempty"`
	// Ended says the process running the job is done with it (its
	// runner returned): a crawl then read EndedPages pages.
	Ended      bool `json:"ended,omitempty"`
	EndedPages int  `json:"endedPages,omitempty"`
	// CrawlID is a crawl's job id (the record's id is its UUID form),
	// CrawlURL its first URL, Limit its page limit.
	CrawlID  string `json:"crawlId,omitempty"`
	CrawlURL string `json:"crawlUrl,omitempty"`
	Limit    int    `json:"limit,omitempty"`
	// Extracted is an extract's data once it completed, Warnings what it
	// says beside it.
	Extracted map[string]any `json:"extracted,omitempty"`
	Warnings  []string       `json:"warnings,omitempty"`
}

// running says whether the job has not finished.
func (r *jobRecord) running() bool {
	return r.Status == stateScraping || r.Status == stateProcessing
}

// jobItem is one thing a job produced, kept once: a page's document (built
// once, as building it may run model work), a failed URL, or one robots.txt
// kept out. Index orders a batch's documents as its URLs.
type jobItem struct {
	Index  int             `json:"i,omitempty"`
	Doc    json.RawMessage `json:"doc,omitempty"`
	Error  *jobErrorEntry  `json:"error,omitempty"`
	Robots string          `json:"robots,omitempty"`
}

// registryName names the Firecrawl door's bucket and stream.
const registryName = "firecrawl"

// KeyValueFunc is where shared state lives: an *app.System's KeyValue.
type KeyValueFunc func() (jetstream.JetStream, jetstream.StorageType, int, error)

// jobs are the jobs of the job registry, as this server runs and answers
// them: the registry holds every gateway's, while running bounds those
// this process runs at once.
type jobs struct {
	keyValue KeyValueFunc
	running  chan struct{}
	wg       sync.WaitGroup
	max      int
	ttl      time.Duration

	mu  sync.Mutex
	reg *crawljs.Registry[jobRecord]
}

func newJobs(keyValue KeyValueFunc, maxRunning, maxKept int, ttl time.Duration) *jobs {
	return &jobs{keyValue: keyValue, running: make(chan struct{}, maxRunning), max: maxKept, ttl: ttl}
}

// registry is the job registry, opened on first use (the single binary's
// NATS starts then).
func (js *jobs) registry() (*crawljs.Registry[jobRecord], error) {
	js.mu.Lock()
	defer js.mu.Unlock()
	if js.reg != nil {
		return js.reg, nil
	}
	if js.keyValue == nil {
		return nil, &apiError{status: http.StatusServiceUnavailable, msg: "Service Unavailable: this server keeps no jobs (it has no NATS)"}
	}
	stream, storage, replicas, err := js.keyValue()
	if err != nil {
		return nil, failure.Wrap(failure.Unavailable, err, "jobs")
	}
	reg, err := crawljs.NewRegistry[jobRecord](stream, crawljs.RegistryConfig{Name: registryName, TTL: js.ttl, Storage: storage, Replicas: replicas})
	if err != nil {
		return nil, failure.Wrap(failure.Internal, err, "jobs")
	}
	js.reg = reg
	return reg, nil
}

// admit takes one of this process's places for a running job, or refuses
// the job with 429 while it runs as many as it may, or the registry keeps
// as many as it may. An admitted job ends with finished.
func (js *jobs) admit(ctx context.Context) *apiError {
	select {
	case js.running <- struct{}{}:
	default:
		return &apiError{status: http.StatusTooManyRequests, retryAfter: 5 * time.Second,
			msg: "Rate limit exceeded: this server runs " + strconv.Itoa(cap(js.running)) + " batch scrapes and crawls at once; retry after 5 seconds"}
	}
	kept, err := js.evict(ctx, time.Now())
	if err != nil {
		<-js.running
		return fromFailure(err)
	}
	if kept >= js.max {
		<-js.running
		return &apiError{status: http.StatusTooManyRequests, retryAfter: 5 * time.Second,
			msg: "Rate limit exceeded: this server keeps " + strconv.Itoa(js.max) + " batch scrapes and crawls; retry after 5 seconds"}
	}
	js.wg.Add(1)
	return nil
}

// finished gives back an admitted job's place.
func (js *jobs) finished() {
	<-js.running
	js.wg.Done()
}

// evict forgets expired jobs, and finished ones beyond the limit, oldest
// first, and says how many are kept.
func (js *jobs) evict(ctx context.Context, now time.Time) (int, error) {
	list, err := js.list(ctx)
	if err != nil {
		return 0, err
	}
	reg, _ := js.registry()
	kept, over := 0, len(list)-js.max+1
	for _, l := range list {
		if !l.Record.running() && (now.After(l.Record.Expires) || over > 0) {
			if err := reg.Delete(ctx, l.ID); err != nil {
				return 0, err
			}
			over--
			continue
		}
		kept++
	}
	return kept, nil
}

// list is every job, oldest first.
func (js *jobs) list(ctx context.Context) ([]crawljs.Listed[jobRecord], error) {
	reg, err := js.registry()
	if err != nil {
		return nil, err
	}
	list, err := reg.List(ctx)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(list, func(a, b crawljs.Listed[jobRecord]) int {
		return cmp.Or(a.Record.Started.Compare(b.Record.Started), cmp.Compare(a.ID, b.ID))
	})
	return list, nil
}

// create registers job id, which begins now.
func (js *jobs) create(ctx context.Context, id string, rec jobRecord) error {
	reg, err := js.registry()
	if err != nil {
		return err
	}
	now := time.Now()
	rec.Started, rec.Expires = now, now.Add(js.ttl)
	return reg.Create(ctx, id, rec)
}

// get is job id, nil when there is none or it expired.
func (js *jobs) get(ctx context.Context, id string) (*jobRecord, *apiError) {
	reg, err := js.registry()
	if err != nil {
		return nil, fromFailure(err)
	}
	rec, err := reg.Get(ctx, id)
	switch {
	case failure.CodeOf(err) == failure.NotFound:
		return nil, nil
	case err != nil:
		return nil, fromFailure(err)
	case time.Now().After(rec.Expires):
		return nil, nil
	}
	return &rec, nil
}

// update changes job id's record as change says, and returns it.
func (js *jobs) update(ctx context.Context, id string, change func(*jobRecord) bool) (jobRecord, error) {
	reg, err := js.registry()
	if err != nil {
		return jobRecord{}, err
	}
	return reg.Update(ctx, id, change)
}

// add keeps one thing job id produced, then counts it in its record, so
// that whoever sees the count finds the item.
func (js *jobs) add(ctx context.Context, id string, it jobItem, count func(*jobRecord)) error {
	reg, err := js.registry()
	if err != nil {
		return err
	}
	b, err := json.Marshal(it)
	if err != nil {
		return failure.Wrap(failure.Internal, err, "job %s", id)
	}
	if _, err := reg.Append(ctx, id, b); err != nil {
		return err
	}
	_, err = reg.Update(ctx, id, func(r *jobRecord) bool { count(r); return true })
	return err
}

// items are what job id produced after sequence after, in the order it
// produced them, and the sequence of the last.
func (js *jobs) items(ctx context.Context, id string, after uint64) ([]jobItem, uint64, error) {
	reg, err := js.registry()
	if err != nil {
		return nil, after, err
	}
	var out []jobItem
	last, err := reg.Items(ctx, id, after, func(_ uint64, b []byte) {
		var it jobItem
		if json.Unmarshal(b, &it) == nil {
			out = append(out, it)
		}
	})
	return out, last, err
}

// docs are the documents of items, a batch's in the order of its URLs, a
// crawl's in the order they completed.
func docs(items []jobItem, kind string) []json.RawMessage {
	items = slices.DeleteFunc(slices.Clone(items), func(it jobItem) bool { return it.Doc == nil })
	if kind == kindBatch {
		slices.SortStableFunc(items, func(a, b jobItem) int { return cmp.Compare(a.Index, b.Index) })
	}
	out := make([]json.RawMessage, len(items))
	for i, it := range items {
		out[i] = it.Doc
	}
	return out
}

// watch sends job id's record, then each change of it, until ctx ends.
func (js *jobs) watch(ctx context.Context, id string) (<-chan jobRecord, error) {
	reg, err := js.registry()
	if err != nil {
		return nil, err
	}
	return reg.Watch(ctx, id)
}

// watchCancel calls cancel once job id's record says to stop it, from
// whichever gateway: the Hub's watchCancel does so for its crawls.
func (js *jobs) watchCancel(ctx context.Context, id string, cancel context.CancelFunc) {
	changes, err := js.watch(ctx, id)
	if err != nil {
		return
	}
	for rec := range changes {
		if rec.Cancel {
			cancel()
			return
		}
	}
}

// cancel tells job id to stop, when it is still running, and returns its
// record.
func (js *jobs) cancel(ctx context.Context, id string) (jobRecord, error) {
	return js.update(ctx, id, func(r *jobRecord) bool {
		if r.Status != stateScraping {
			return false
		}
		r.Status, r.Cancel = stateCancelled, true
		return true
	})
}

func (js *jobs) wait() { js.wg.Wait() }

// active are the jobs not finished yet, oldest first.
func (js *jobs) active(ctx context.Context) ([]crawljs.Listed[jobRecord], error) {
	list, err := js.list(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	return slices.DeleteFunc(list, func(l crawljs.Listed[jobRecord]) bool {
		return !l.Record.running() || now.After(l.Record.Expires)
	}), nil
}
