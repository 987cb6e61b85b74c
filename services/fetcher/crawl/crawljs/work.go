package crawljs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/crawl"
	"distill.dev/services/fetcher/jobs"
	"distill.dev/services/fetcher/pace"
	"distill.dev/services/fetcher/pipeline"
	"distill.dev/services/fetcher/robots"
	"distill.dev/services/fetcher/siteurl"
)

// The pages of a crawl are work items any fetcher takes: an item per page
// on a work-queue stream, its answer kept on a second stream under a
// subject of its own (the crawl's id and the page's key), where the
// crawl's owner waits for it, or finds it after a takeover.
const (
	WorkStream     = "DISTILL_CRAWL_WORK"
	WorkPrefix     = "distill.crawlwork."
	WorkConsumer   = "distill-crawl-workers"
	PagesStream    = "DISTILL_CRAWL_PAGES"
	PagePrefix     = "distill.crawlpage."
	OutPrefix      = "distill.crawlout."
	redirectsField = "Distill-Redirects"
	// elsewhereField marks an answer that reads nothing: the page was
	// claimed by another page's redirect, which delivers it.
	elsewhereField = "Distill-Read-Elsewhere"
	// usedField marks what is left of an answer its crawl has journaled:
	// the answer is gone, and a worker given the page again reads nothing.
	usedField = "Distill-Used"
)

// Kinds of work item besides a page.
const kindRobots = "robots"

// pagesMaxAge is how long the pages' answers and a crawl's output are
// kept: long enough for a crawl to be adopted and a client to come back
// for its pages, short enough that a day of crawling does not pile up.
const pagesMaxAge = 24 * time.Hour

// dedupWindow is how long a repeated item or answer (an owner that asks
// again after a takeover, a worker that answers again after a lost ack) is
// recognised by its message id.
const dedupWindow = 10 * time.Minute

// EnsureWorkStreams creates or updates the work queue of pages and the
// stream of their answers and of the crawls' output.
func EnsureWorkStreams(ctx context.Context, js jetstream.JetStream, cfg Config) error {
	streams := []jetstream.StreamConfig{{
		Name:       WorkStream,
		Subjects:   []string{WorkPrefix + "*"},
		Retention:  jetstream.WorkQueuePolicy,
		Storage:    cfg.storage(),
		Replicas:   max(cfg.Replicas, 1),
		Duplicates: dedupWindow,
	}, {
		Name:       PagesStream,
		Subjects:   []string{PagePrefix + "*.*", OutPrefix + "*"},
		Storage:    cfg.storage(),
		Replicas:   max(cfg.Replicas, 1),
		MaxAge:     pagesMaxAge,
		Duplicates: dedupWindow,
		// An answer used is replaced by its marker in one write.
		AllowRollup: true,
	}}
	for _, sc := range streams {
		if _, err := js.CreateOrUpdateStream(ctx, sc); err != nil {
			return fmt.Errorf("ensure stream %s: %w", sc.Name, err)
		}
	}
	return nil
}

// item is one page to read, as the work queue carries it.
type item struct {
	// Kind is empty for a page; kindRobots for a host's robots.txt, read
	// once for every worker of the crawl (Work.URL is the robots.txt).
	Kind string     `json:"kind,omitempty"`
	Work crawl.Work `json:"work"`
	// Options are the page's FetchOptions, protobuf-encoded.
	Options []byte `json:"options"`
}

// keyHash names a page's key in a subject, whose tokens cannot hold
// every character a key has.
func keyHash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:12])
}

func pageSubject(id, key string) string { return PagePrefix + id + "." + keyHash(key) }

// WorkReader is a crawl.PageReader that queues each page as a work item
// and waits for the answer any fetcher worker gives. An answer already
// kept (a page the crawl's previous owner asked for) is taken as it is,
// and asking again within dedupWindow adds no item: a crawl taken over
// reads no page twice.
type WorkReader struct {
	js jetstream.JetStream
	// ackWait is the workers' ack wait, which bounds how long a page
	// waits when its worker dies.
	ackWait time.Duration
	seen    *seen
	pages   pagesStream
}

// NewWorkReader returns a WorkReader on js, whose streams and buckets are
// stored as cfg says.
func NewWorkReader(js jetstream.JetStream, ackWait time.Duration, cfg Config) *WorkReader {
	return &WorkReader{js: js, ackWait: ackWait, seen: &seen{js: js, cfg: cfg}}
}

// Robots refuses: a cluster crawl's robots.txt is read for its job, by
// WorkRobots.
func (r *WorkReader) Robots(ctx context.Context, rawURL string, opts *distillv1.FetchOptions) (*robots.Robots, error) {
	return nil, failure.New(failure.Internal, "robots.txt of %s: a cluster crawl reads it as work of its job", rawURL)
}

// WorkRobots returns the crawl's copy of the robots.txt that governs w.URL:
// the one kept, or one a fetcher worker reads as a work item, paced like
// any request, and keeps for every worker of the crawl. The file is read
// once per crawl, however many fetchers read the host's pages.
func (r *WorkReader) WorkRobots(ctx context.Context, w crawl.Work, opts *distillv1.FetchOptions) (*robots.Robots, error) {
	u, err := url.Parse(w.URL)
	if err != nil {
		return nil, failure.Wrap(failure.InvalidURL, err, "robots.txt of %s", w.URL)
	}
	w.URL = robots.URL(u)
	w.Key = w.URL
	kv, err := r.seen.bucket(ctx)
	if err != nil {
		return nil, failure.Wrap(failure.Unavailable, err, "robots.txt of %s", w.URL)
	}
	if e, err := kv.Get(ctx, robotsKey(w.JobID, w.URL)); err == nil {
		if file, ok := robotsOf(e.Value()); ok {
			return file, nil
		}
	}
	ob, err := proto.Marshal(opts)
	if err != nil {
		return nil, failure.Wrap(failure.Internal, err, "robots.txt of %s", w.URL)
	}
	data, err := json.Marshal(item{Kind: kindRobots, Work: w, Options: ob})
	if err != nil {
		return nil, failure.Wrap(failure.Internal, err, "robots.txt of %s", w.URL)
	}
	wait, cancel := context.WithTimeout(ctx, 2*fetchopts.Timeout(opts)+2*r.ackWait+30*time.Second)
	defer cancel()
	got := make(chan struct{})
	var file *robots.Robots
	var werr error
	go func() {
		defer close(got)
		file, werr = r.seen.waitRobots(wait, w.JobID, w.URL)
	}()
	// No message id: an item asked for again (an adopting owner, or one
	// whose first reader gave up) must be queued again, and a second
	// item for a file read already reads nothing.
	msg := &nats.Msg{Subject: WorkPrefix + w.JobID, Data: data}
	if _, err := r.js.PublishMsg(ctx, msg); err != nil {
		cancel()
		<-got
		return nil, failure.Wrap(failure.Unavailable, err, "robots.txt of %s: queue it", w.URL)
	}
	<-got
	if werr != nil {
		if ctx.Err() != nil {
			return nil, failure.Wrap(failure.Canceled, ctx.Err(), "robots.txt of %s", w.URL)
		}
		return nil, failure.Wrap(failure.Unavailable, werr, "robots.txt of %s", w.URL)
	}
	return file, nil
}

// Used lets go of the answer to crawl job's page key, which the crawl has
// journaled: it is not needed again, even by an owner adopting the crawl.
// A marker takes its place, so that a worker given the page again (its
// ack lost) reads nothing.
func (r *WorkReader) Used(job, key string) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	msg := &nats.Msg{Subject: pageSubject(job, key), Header: nats.Header{}}
	msg.Header.Set(usedField, "1")
	msg.Header.Set(jetstream.MsgRollup, jetstream.MsgRollupSubject)
	_, _ = r.js.PublishMsg(ctx, msg)
}

// Forget purges what a crawl that ended left of its pages: answers and
// markers, claims, and robots.txt copies. Its output stays for its
// clients.
func Forget(ctx context.Context, js jetstream.JetStream, cfg Config, job string) error {
	s, err := js.Stream(ctx, PagesStream)
	if err != nil {
		return fmt.Errorf("crawl %s: %w", job, err)
	}
	if err := s.Purge(ctx, jetstream.WithPurgeSubject(PagePrefix+job+".*")); err != nil {
		return fmt.Errorf("crawl %s: %w", job, err)
	}
	return (&seen{js: js, cfg: cfg}).forget(ctx, job)
}

// pollAnswer is how often a page's owner looks for its answer in the
// stream besides listening for it: a message missed while NATS was away
// is found there.
const pollAnswer = 2 * time.Second

// Read queues rawURL's page and returns its answer.
func (r *WorkReader) Read(ctx context.Context, rawURL string, opts *distillv1.FetchOptions, v crawl.Visit) (*pipeline.Result, error) {
	var w crawl.Work
	if v != nil {
		w = v.Work()
	}
	if w.JobID == "" || w.Key == "" {
		return nil, failure.New(failure.Internal, "crawl %s: a page for a worker needs its job and key", rawURL)
	}
	subject := pageSubject(w.JobID, w.Key)
	nc := r.js.Conn()
	sub, err := nc.SubscribeSync(subject)
	if err != nil {
		return nil, failure.Wrap(failure.Unavailable, err, "crawl %s: listen for its answer", rawURL)
	}
	defer func() { _ = sub.Unsubscribe() }()
	fctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	err = nc.FlushWithContext(fctx)
	cancel()
	if err != nil {
		return nil, failure.Wrap(failure.Unavailable, err, "crawl %s: listen for its answer", rawURL)
	}
	if res, ok, err := r.kept(ctx, subject); ok || err != nil {
		return res, err
	}
	ob, err := proto.Marshal(opts)
	if err != nil {
		return nil, failure.Wrap(failure.Internal, err, "crawl %s", rawURL)
	}
	w.URL = rawURL
	data, err := json.Marshal(item{Work: w, Options: ob})
	if err != nil {
		return nil, failure.Wrap(failure.Internal, err, "crawl %s", rawURL)
	}
	msg := &nats.Msg{Subject: WorkPrefix + w.JobID, Data: data, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, "w."+w.JobID+"."+keyHash(w.Key))
	if _, err := r.js.PublishMsg(ctx, msg); err != nil {
		return nil, failure.Wrap(failure.Unavailable, err, "crawl %s: queue the page", rawURL)
	}
	deadline := time.Now().Add(2*pipeline.Budget(opts) + 2*r.ackWait + 30*time.Second)
	for {
		wait, cancel := context.WithTimeout(ctx, pollAnswer)
		m, err := sub.NextMsgWithContext(wait)
		cancel()
		if err == nil {
			return decodeAnswer(m.Data, m.Header)
		}
		if ctx.Err() != nil {
			return nil, failure.Wrap(failure.Canceled, ctx.Err(), "crawl %s", rawURL)
		}
		if res, ok, err := r.kept(ctx, subject); ok || err != nil {
			return res, err
		}
		if time.Now().After(deadline) {
			return nil, failure.New(failure.Timeout, "crawl %s: no fetcher worker answered", rawURL)
		}
	}
}

// pagesStream is a handle on the answers' stream: a stream's calls go
// by its name, so one handle serves until the process ends, and looking
// it up costs a round trip.
type pagesStream struct {
	mu sync.Mutex
	s  jetstream.Stream
}

func (p *pagesStream) get(ctx context.Context, js jetstream.JetStream) (jetstream.Stream, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.s != nil {
		return p.s, nil
	}
	s, err := js.Stream(ctx, PagesStream)
	if err != nil {
		return nil, err
	}
	p.s = s
	return s, nil
}

// kept returns the answer the stream holds for subject, if any.
func (r *WorkReader) kept(ctx context.Context, subject string) (*pipeline.Result, bool, error) {
	s, err := r.pages.get(ctx, r.js)
	if err != nil {
		return nil, false, failure.Wrap(failure.Unavailable, err, "crawl page answers")
	}
	m, err := s.GetLastMsgForSubject(ctx, subject)
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return nil, false, nil
	case err != nil:
		return nil, false, failure.Wrap(failure.Unavailable, err, "crawl page answers")
	}
	res, err := decodeAnswer(m.Data, m.Header)
	return res, true, err
}

func decodeAnswer(data []byte, h nats.Header) (*pipeline.Result, error) {
	if key := h.Get(elsewhereField); key != "" {
		return nil, &crawl.AlreadyRead{Key: key}
	}
	if h.Get(usedField) != "" {
		// Journaled already: a crawl never asks again for such a page
		// unless its journal lost the record; the page was delivered.
		return nil, &crawl.AlreadyRead{Key: "a page delivered"}
	}
	p := &distillv1.CrawlPage{}
	if err := proto.Unmarshal(data, p); err != nil {
		return nil, failure.Wrap(failure.Internal, err, "crawl page answer")
	}
	if e := p.GetError(); e != nil {
		return nil, failure.FromProto(e)
	}
	res := &pipeline.Result{Distilled: p.GetResult()}
	if v := h.Get(redirectsField); v != "" {
		_ = json.Unmarshal([]byte(v), &res.RedirectHistory)
	}
	return res, nil
}

// WorkConfig is how a fetcher process runs its crawl workers.
type WorkConfig struct {
	// Workers is how many pages are read at once.
	Workers int
	// AckWait is how long a page may go without a sign of life before
	// another worker gets it; every worker must agree.
	AckWait time.Duration
	Streams Config
}

// ServeWork reads crawls' pages from the work queue through reader until
// ctx ends, each request in its host's turn on pacer and each redirect
// judged by the crawl's rules; the pages held when ctx ends are left for
// other workers. It makes the streams again and restarts, a second later,
// whenever the consumer stops before ctx ends (NATS restarted without its
// store).
func ServeWork(ctx context.Context, logger *slog.Logger, js jetstream.JetStream, reader crawl.PageReader, pacer pace.Pacer, cfg WorkConfig) error {
	w := &worker{logger: logger, js: js, reader: reader, pacer: pacer, cfg: cfg, seen: &seen{js: js, cfg: cfg.Streams}}
	w.robots, _ = reader.(robotsReader)
	if w.cfg.AckWait <= 0 {
		w.cfg.AckWait = time.Minute
	}
	w.cfg.Workers = max(w.cfg.Workers, 1)
	for {
		err := w.run(ctx)
		if ctx.Err() != nil {
			return nil
		}
		logger.Warn("crawl worker stopped; restarting", "err", fmt.Sprint(err))
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return nil
		}
	}
}

type worker struct {
	logger *slog.Logger
	js     jetstream.JetStream
	reader crawl.PageReader
	pacer  pace.Pacer
	cfg    WorkConfig
	seen   *seen
	pages  pagesStream
	// robots reads a robots.txt through this process's fetcher, when the
	// reader can (crawl.LocalReader): the crawl's workers then share one
	// copy of each; else each reads its own.
	robots robotsReader
}

// robotsReader reads a robots.txt in its host's turns.
type robotsReader interface {
	ReadRobots(ctx context.Context, rawURL string, opts *distillv1.FetchOptions, t crawl.Turns) (*robots.Robots, error)
}

func (w *worker) run(ctx context.Context) error {
	if err := EnsureWorkStreams(ctx, w.js, w.cfg.Streams); err != nil {
		return err
	}
	return jobs.Consume(ctx, w.logger, w.js, jobs.Pull{
		Name: "crawl work", Stream: WorkStream, Durable: WorkConsumer,
		AckWait: w.cfg.AckWait, MaxDeliver: 5, Slots: w.cfg.Workers, Expiry: 5 * time.Second,
	}, w.handle)
}

// handle reads one page and publishes its answer, then acks the item. A
// page answered already (an item queued again by a new owner) is not read
// again.
func (w *worker) handle(ctx context.Context, msg jetstream.Msg) {
	var it item
	opts := &distillv1.FetchOptions{}
	if err := json.Unmarshal(msg.Data(), &it); err != nil || proto.Unmarshal(it.Options, opts) != nil || it.Work.JobID == "" {
		w.logger.Error("crawl work: undecodable item dropped", "err", err)
		_ = msg.Term()
		return
	}
	wk := it.Work
	if it.Kind == kindRobots {
		w.handleRobots(ctx, msg, wk, opts)
		return
	}
	subject := pageSubject(wk.JobID, wk.Key)
	if s, err := w.pages.get(ctx, w.js); err == nil {
		if _, err := s.GetLastMsgForSubject(ctx, subject); err == nil {
			_ = msg.Ack()
			return
		}
	}
	jobCtx, cancel := context.WithTimeout(ctx, pipeline.Budget(opts))
	defer cancel()
	stop := heartbeat(jobCtx, msg, w.cfg.AckWait)
	// The page is claimed before it is read: a redirect of another page
	// that claimed it first reads it, and this item reads nothing.
	err := w.seen.claim(jobCtx, wk.JobID, wk.Key, wk.Key)
	var res *pipeline.Result
	if err == nil {
		res, err = w.read(jobCtx, wk, opts)
	} else if _, ok := errors.AsType[*crawl.AlreadyRead](err); !ok {
		err = failure.Wrap(failure.Unavailable, err, "crawl %s", wk.URL)
	}
	stop()
	if ctx.Err() != nil {
		// Shutting down: the page is another worker's.
		_ = msg.Nak()
		return
	}
	if errors.Is(err, errRelease) || failure.CodeOf(err) == failure.Unavailable {
		w.logger.Warn("crawl work: page handed back", "url", wk.URL, "err", err)
		_ = msg.NakWithDelay(time.Second)
		return
	}
	page := &distillv1.CrawlPage{Url: wk.URL, Depth: int32(wk.Depth)}
	out := &nats.Msg{Subject: subject, Header: nats.Header{}}
	if elsewhere, ok := errors.AsType[*crawl.AlreadyRead](err); ok {
		out.Header.Set(elsewhereField, elsewhere.Key)
	}
	if err != nil {
		page.Outcome = &distillv1.CrawlPage_Error{Error: failure.Proto(err)}
	} else {
		page.Outcome = &distillv1.CrawlPage_Result{Result: res.Distilled}
		if len(res.RedirectHistory) > 0 {
			b, _ := json.Marshal(res.RedirectHistory)
			out.Header.Set(redirectsField, string(b))
		}
	}
	if out.Data, err = proto.Marshal(page); err != nil {
		_ = msg.Term()
		return
	}
	out.Header.Set(jetstream.MsgIDHeader, "p."+wk.JobID+"."+keyHash(wk.Key))
	if _, err := w.js.PublishMsg(ctx, out); err != nil {
		if errors.Is(err, nats.ErrMaxPayload) {
			page.Outcome = &distillv1.CrawlPage_Error{Error: failure.Proto(failure.New(failure.TooLarge,
				"distilled page of %d bytes exceeds the queue's message limit", len(out.Data)))}
			out.Data, _ = proto.Marshal(page)
			out.Header.Del(redirectsField)
			_, err = w.js.PublishMsg(ctx, out)
		}
		if err != nil {
			w.logger.Warn("crawl work: publish answer; the page will be read again", "url", wk.URL, "err", err)
			_ = msg.NakWithDelay(time.Second)
			return
		}
	}
	ackCtx, cancelAck := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancelAck()
	_ = msg.DoubleAck(ackCtx)
}

var errRelease = errors.New("crawl work: released")

// handleRobots reads a host's robots.txt for every worker of a crawl, as
// its owner asked, unless another worker has or is reading it.
func (w *worker) handleRobots(ctx context.Context, msg jetstream.Msg, wk crawl.Work, opts *distillv1.FetchOptions) {
	if w.robots == nil {
		w.logger.Error("crawl work: this worker cannot read robots.txt for a crawl", "url", wk.URL)
		_ = msg.Term()
		return
	}
	jobCtx, cancel := context.WithTimeout(ctx, 2*fetchopts.Timeout(opts))
	defer cancel()
	stop := heartbeat(jobCtx, msg, w.cfg.AckWait)
	_, err := w.crawlRobots(jobCtx, wk, opts, wk.URL)
	stop()
	if ctx.Err() != nil {
		_ = msg.Nak()
		return
	}
	if err != nil {
		w.logger.Warn("crawl work: robots.txt not read", "url", wk.URL, "err", err)
	}
	_ = msg.Ack()
}

// crawlRobots is the crawl's copy of the robots.txt at robotsURL, read
// through this process's fetcher at the crawl's --delay if no worker has
// read it yet.
func (w *worker) crawlRobots(ctx context.Context, wk crawl.Work, opts *distillv1.FetchOptions, robotsURL string) (*robots.Robots, error) {
	// A worker that dies reading it holds the host's other pages back
	// until its claim runs out: the read's own time bound, and a margin.
	return w.seen.robots(ctx, wk.JobID, robotsURL, fetchopts.Timeout(opts)+5*time.Second, func(ctx context.Context) (*robots.Robots, error) {
		return w.robots.ReadRobots(ctx, robotsURL, opts, delayTurns{w.pacer, wk.Delay})
	})
}

// delayTurns paces a crawl's robots.txt requests at its --delay, whatever
// the host.
type delayTurns struct {
	pacer pace.Pacer
	delay time.Duration
}

func (d delayTurns) Turn(ctx context.Context, u *url.URL) error {
	return d.pacer.Turn(ctx, u.Hostname(), d.delay)
}

func (d delayTurns) Sent(ctx context.Context, u *url.URL, at time.Time) {
	d.pacer.Sent(ctx, u.Hostname(), d.delay, at)
}

// read reads the page as its crawl would, turning a panic into a release.
func (w *worker) read(ctx context.Context, wk crawl.Work, opts *distillv1.FetchOptions) (res *pipeline.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			w.logger.Error("crawl work: reader panicked", "url", wk.URL, "panic", p, "stack", string(debug.Stack()))
			res, err = nil, fmt.Errorf("%w: panic: %v", errRelease, p)
		}
	}()
	judge, err := wk.Judge()
	if err != nil {
		return nil, failure.Wrap(failure.InvalidArgument, err, "crawl %s", wk.URL)
	}
	return w.reader.Read(ctx, wk.URL, opts, workVisit{w: w, wk: wk, opts: opts, judge: judge, host: hostOf(wk.URL)})
}

// workVisit is a page's visit as a worker makes it from the page's Work:
// each redirect judged as its crawl would and claimed across every
// worker, each request in its host's turn on the worker's pacer.
type workVisit struct {
	w     *worker
	wk    crawl.Work
	opts  *distillv1.FetchOptions
	judge func(to *url.URL) error
	// host is the page's own host, paced at wk.Interval; any other a
	// redirect leads to is paced at wk.Delay.
	host string
}

func (v workVisit) Follow(ctx context.Context, to *url.URL) error {
	if err := v.judge(to); err != nil {
		return err
	}
	// The page the hop leads to is claimed for this one, across every
	// worker: a link to it read on its own, or another redirect to it, is
	// not read again.
	u, err := siteurl.Canonical(to.String())
	if err != nil {
		return nil
	}
	key := siteurl.KeyOf(u)
	if key == v.wk.Key {
		return nil
	}
	return v.w.seen.claim(ctx, v.wk.JobID, key, v.wk.Key)
}

func (v workVisit) interval(u *url.URL) time.Duration {
	if strings.EqualFold(u.Hostname(), v.host) {
		return v.wk.Interval
	}
	return v.wk.Delay
}

func (v workVisit) Turn(ctx context.Context, u *url.URL) error {
	return v.w.pacer.Turn(ctx, u.Hostname(), v.interval(u))
}

func (v workVisit) Sent(ctx context.Context, u *url.URL, at time.Time) {
	v.w.pacer.Sent(ctx, u.Hostname(), v.interval(u), at)
}

func (v workVisit) BeforeRender(ctx context.Context) error {
	// The browser's request for the page goes out right after.
	err := v.w.pacer.Turn(ctx, v.host, v.wk.Interval)
	if err == nil {
		v.w.pacer.Sent(ctx, v.host, v.wk.Interval, time.Now())
	}
	return err
}

// Robots is the crawl's copy of the robots.txt of u's origin, when this
// worker's reader can read one for every worker and the page obeys it.
func (v workVisit) Robots(ctx context.Context, u *url.URL) (*robots.Robots, bool, error) {
	if v.w.robots == nil || !v.opts.GetRespectRobots() {
		return nil, false, nil
	}
	file, err := v.w.crawlRobots(ctx, v.wk, v.opts, robots.URL(u))
	return file, true, err
}

func (v workVisit) Work() crawl.Work { return v.wk }

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// heartbeat marks msg in progress three times an ack wait, and at most
// ten times a second, until stop is called.
func heartbeat(ctx context.Context, msg jetstream.Msg, ackWait time.Duration) (stop func()) {
	return jobs.Heartbeat(ctx, msg, max(ackWait/3, 100*time.Millisecond))
}
