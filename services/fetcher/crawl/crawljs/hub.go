package crawljs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/crawl"
)

// JobsBucket lists the crawls of a cluster: what each asked for, where it
// is in its life, its latest status, and whether it was told to stop.
// Every gateway reads it, so any of them reports or cancels any crawl,
// and adopts one whose owner died.
const JobsBucket = "distill_crawl_jobs"

// crawlRegistry names the Registry the Hub keeps its crawls' records in,
// whose bucket is JobsBucket.
const crawlRegistry = "crawl"

// Crawl states, as the jobs bucket keeps them.
const (
	stateRunning = "running"
	stateEnded   = "ended"
)

// record is a crawl's entry in the jobs bucket, its record in the Hub's
// Registry.
type record struct {
	Request crawl.Request `json:"request"`
	// Options are the request's FetchOptions, protobuf-encoded.
	Options []byte `json:"options"`
	State   string `json:"state"`
	// Status is the latest CrawlStatusResponse, protobuf-encoded.
	Status []byte `json:"status,omitempty"`
	Cancel bool   `json:"cancel,omitempty"`
	// Begun is the status the crawl began with, protobuf-encoded: what a
	// client streaming it from its first page is told first.
	Begun []byte `json:"begun,omitempty"`
	// Held says the crawl's journal is its caller's (distill crawl
	// --crawl-state's file), not in JetStream: no other process can read
	// it, so none adopts the crawl; its caller resumes it.
	Held bool `json:"held,omitempty"`
}

// Hub runs a cluster's crawls as jobs that outlive the gateway that
// started them. A crawl's owner (the process holding its lease) runs its
// frontier; its pages are work items any fetcher worker takes
// (WorkReader); each page it delivers is published on the crawl's output
// subject, which any gateway streams to a client (FollowCrawl). When an
// owner dies, its lease runs out and another Hub adopts the crawl from its
// journal: the pages in flight are answered from the answers the workers
// kept, not read again. The single binary runs one on its embedded NATS
// (Config.Memory), over a crawler reading pages in process: the same
// registry, streams and records, with nobody to adopt from.
type Hub struct {
	logger  *slog.Logger
	js      jetstream.JetStream
	crawler *crawl.Crawler
	owner   string
	cfg     Config

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu sync.Mutex
	// jobs is the registry of the crawls' records, made with the streams.
	jobs    *Registry[record]
	running map[string]*crawl.Job
	// handoffs are the held crawls this process runs, by id.
	handoffs map[string]*handoff
	// ending are the summaries of crawls run here that ended, until
	// their records say so.
	ending map[string]*distillv1.CrawlStatusResponse
}

// NewHub returns a Hub whose crawls read pages through crawler (whose
// PageReader should be a WorkReader) and whose leases name owner.
func NewHub(logger *slog.Logger, js jetstream.JetStream, crawler *crawl.Crawler, owner string, cfg Config) *Hub {
	ctx, cancel := context.WithCancel(context.Background())
	return &Hub{logger: logger, js: js, crawler: crawler, owner: owner, cfg: cfg, ctx: ctx, cancel: cancel, running: map[string]*crawl.Job{}, handoffs: map[string]*handoff{}, ending: map[string]*distillv1.CrawlStatusResponse{}}
}

// Close stops the crawls this Hub runs, leaving them to be adopted, and
// gives their leases back.
func (h *Hub) Close() {
	h.cancel()
	h.wg.Wait()
}

// records makes the streams on first use, and is the registry of the
// crawls' records (JobsBucket, made on its first use).
func (h *Hub) records(ctx context.Context) (*Registry[record], error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.jobs != nil {
		return h.jobs, nil
	}
	if err := EnsureStream(ctx, h.js, h.cfg); err != nil {
		return nil, err
	}
	if err := EnsureWorkStreams(ctx, h.js, h.cfg); err != nil {
		return nil, err
	}
	jobs, err := NewRegistry[record](h.js, RegistryConfig{Name: crawlRegistry, TTL: journalMaxAge, Storage: h.cfg.storage(), Replicas: h.cfg.Replicas})
	if err != nil {
		return nil, fmt.Errorf("crawl jobs: %w", err)
	}
	h.jobs = jobs
	return jobs, nil
}

func unavailable(err error) error {
	if _, ok := errors.AsType[*failure.Error](err); ok {
		return err
	}
	return failure.Wrap(failure.Unavailable, err, "crawl jobs")
}

// StartCrawl begins req's crawl, run by this process, and returns its id.
// Its journal is the Hub's, in JetStream, or the caller's own, which
// makes it a held crawl (see record.Held). With req.JobID and no journal
// it names a crawl begun before: one whose owner is gone is adopted here;
// one still running or ended is left as it is, for FollowCrawl to stream.
func (h *Hub) StartCrawl(ctx context.Context, req crawl.Request, journal crawl.Journal) (string, error) {
	jobs, err := h.records(ctx)
	if err != nil {
		return "", unavailable(err)
	}
	if journal != nil {
		return h.startHeld(ctx, jobs, req, journal)
	}
	if req.JobID != "" {
		return h.resume(ctx, jobs, req)
	}
	id := crawl.NewID()
	job, err := h.begin(ctx, id, req)
	if err != nil {
		return "", err
	}
	rec, err := beginRecord(req, job)
	if err != nil {
		job.Close()
		return "", err
	}
	if err := jobs.Create(ctx, id, rec); err != nil {
		job.Close()
		return "", unavailable(err)
	}
	h.run(job, nil)
	return id, nil
}

// resume looks up the crawl req.JobID names, and adopts it if it runs
// nowhere.
func (h *Hub) resume(ctx context.Context, jobs *Registry[record], req crawl.Request) (string, error) {
	rec, err := jobs.Get(ctx, req.JobID)
	if failure.CodeOf(err) == failure.NotFound {
		return "", failure.New(failure.NotFound, "no crawl with job id %q to resume", req.JobID)
	}
	if err != nil {
		return "", unavailable(err)
	}
	if fp, was := crawl.Fingerprint(req), fingerprintOf(rec); fp != was {
		return "", failure.New(failure.Conflict, "crawl %s was begun with another URL or other flags", req.JobID)
	}
	if rec.State == stateRunning {
		// Ours, someone else's, or nobody's: adopting it settles which.
		if err := h.adopt(ctx, req.JobID, rec); err != nil && failure.CodeOf(err) != failure.Conflict {
			return "", err
		}
	}
	return req.JobID, nil
}

// startHeld begins a crawl in the caller's journal. Its id is the
// journal's: the record of a run of the same journal begun before in
// this NATS (ended, or its process gone) is replaced, and so is what that
// run left of its output; a crawl of that id running here is refused.
func (h *Hub) startHeld(ctx context.Context, jobs *Registry[record], req crawl.Request, journal crawl.Journal) (string, error) {
	job, err := h.crawler.Begin(ctx, req, journal)
	if err != nil {
		return "", err
	}
	id := job.ID()
	rec, err := beginRecord(req, job)
	if err != nil {
		job.Close()
		return "", err
	}
	rec.Held = true
	h.mu.Lock()
	_, running := h.running[id]
	if !running {
		h.running[id] = job
	}
	h.mu.Unlock()
	if running {
		job.Close()
		return "", failure.New(failure.Conflict, "crawl %s is running already", id)
	}
	if err := jobs.Put(ctx, id, rec); err != nil {
		h.mu.Lock()
		delete(h.running, id)
		h.mu.Unlock()
		job.Close()
		return "", unavailable(err)
	}
	_ = jobs.ClearMark(ctx, id, sentMark)
	if s, err := h.js.Stream(ctx, PagesStream); err == nil {
		_ = s.Purge(ctx, jetstream.WithPurgeSubject(OutPrefix+id))
	}
	h.run(job, newHandoff())
	return id, nil
}

// beginRecord is the record of req's crawl as job begins it.
func beginRecord(req crawl.Request, job *crawl.Job) (record, error) {
	rec, err := recordOf(req)
	if err != nil {
		return record{}, err
	}
	rec.Status = statusBytes(StatusProto(job.Status(), distillv1.CrawlState_CRAWL_STATE_RUNNING, nil))
	rec.Begun = rec.Status
	return rec, nil
}

func fingerprintOf(rec record) string {
	req := rec.Request
	req.Options = &distillv1.FetchOptions{}
	if err := proto.Unmarshal(rec.Options, req.Options); err != nil {
		return ""
	}
	return crawl.Fingerprint(req)
}

func recordOf(req crawl.Request) (record, error) {
	ob, err := proto.Marshal(req.Options)
	if err != nil {
		return record{}, failure.Wrap(failure.Internal, err, "crawl")
	}
	req.JobID = ""
	return record{Request: req, Options: ob, State: stateRunning}, nil
}

// begin opens id's journal under this process's lease and begins its job.
func (h *Hub) begin(ctx context.Context, id string, req crawl.Request) (*crawl.Job, error) {
	j, err := NewJournal(h.js, id, h.owner, h.cfg)
	if err != nil {
		return nil, failure.Wrap(failure.InvalidArgument, err, "crawl")
	}
	job, err := h.crawler.Begin(ctx, req, j)
	if err != nil {
		return nil, unavailable(err)
	}
	return job, nil
}

// adopt runs the crawl rec describes here, unless this process runs it
// already or another holds its lease (a Conflict).
func (h *Hub) adopt(ctx context.Context, id string, rec record) error {
	h.mu.Lock()
	_, mine := h.running[id]
	h.mu.Unlock()
	if mine {
		return nil
	}
	if rec.Held {
		return failure.New(failure.Conflict, "crawl %s keeps its journal with the process that began it, which alone resumes it", id)
	}
	req := rec.Request
	req.Options = &distillv1.FetchOptions{}
	if err := proto.Unmarshal(rec.Options, req.Options); err != nil {
		return failure.Wrap(failure.Internal, err, "crawl %s", id)
	}
	req.JobID = id
	job, err := h.begin(ctx, id, req)
	if err != nil {
		return err
	}
	h.logger.Info("crawl adopted: its owner is gone", "job", id, "url", req.URL)
	h.run(job, nil)
	return nil
}

// run runs job in the background: each page it delivers goes to the
// crawl's output subject, its status to the jobs bucket now and then, and
// a cancel set there by any gateway stops it. A held crawl has a handoff
// (ho): its journal, all that is left of it once its process is killed,
// says a page is done only once a follower in this process has handed
// the page to its client, as a client reading the journal's crawl in
// process always had it.
func (h *Hub) run(job *crawl.Job, ho *handoff) {
	id := job.ID()
	h.mu.Lock()
	h.running[id] = job
	if ho != nil {
		h.handoffs[id] = ho
	}
	h.mu.Unlock()
	h.wg.Go(func() {
		defer func() {
			h.mu.Lock()
			delete(h.running, id)
			delete(h.handoffs, id)
			delete(h.ending, id)
			h.mu.Unlock()
		}()
		ctx, cancel := context.WithCancel(h.ctx)
		defer cancel()
		go h.watchCancel(ctx, job)
		// A held crawl's output is its run's: another run of its journal
		// names its events afresh, not as repeats of this one's.
		tag := ""
		if ho != nil {
			tag = crawl.NewID() + "."
		}
		st, err := job.Run(ctx, h.pageSink(ctx, job, ho, tag))
		if h.ctx.Err() != nil && ho == nil {
			// This process is stopping: the crawl is left to another.
			return
		}
		h.end(context.WithoutCancel(ctx), id, tag, st, err)
	})
}

// pageSink is what job delivers its pages to: the crawl's output subject.
func (h *Hub) pageSink(ctx context.Context, job *crawl.Job, ho *handoff, tag string) func(crawl.Page) error {
	id := job.ID()
	var last time.Time
	return func(p crawl.Page) error {
		out := &distillv1.CrawlPage{Url: p.URL, Depth: int32(p.Depth)}
		if p.Err != nil {
			out.Outcome = &distillv1.CrawlPage_Error{Error: failure.Proto(p.Err)}
		} else {
			out.Outcome = &distillv1.CrawlPage_Result{Result: p.Result}
		}
		seq, err := h.publishOut(ctx, id, tag+"p."+keyHash(p.URL), &distillv1.CrawlResponse{JobId: id, Event: &distillv1.CrawlResponse_Page{Page: out}})
		if err != nil {
			return err
		}
		if ho != nil {
			if err := ho.wait(ctx, id, seq); err != nil {
				return err
			}
		}
		if time.Since(last) > 250*time.Millisecond {
			last = time.Now()
			h.update(ctx, id, func(r *record) {
				r.Status = statusBytes(StatusProto(job.Status(), distillv1.CrawlState_CRAWL_STATE_RUNNING, nil))
			})
		}
		return nil
	}
}

// end publishes a crawl's summary, records its end, and lets go of what
// its pages left.
func (h *Hub) end(ctx context.Context, id, tag string, st crawl.Status, err error) {
	state := distillv1.CrawlState_CRAWL_STATE_DONE
	switch {
	case st.StopReason == crawl.StopCanceled, h.ctx.Err() != nil:
		state = distillv1.CrawlState_CRAWL_STATE_CANCELED
	case err != nil:
		state = distillv1.CrawlState_CRAWL_STATE_FAILED
	}
	summary := StatusProto(st, state, err)
	// From here on this process reports the summary, which a client may
	// have before the record says it.
	h.mu.Lock()
	h.ending[id] = summary
	h.mu.Unlock()
	if _, perr := h.publishOut(ctx, id, tag+"end", &distillv1.CrawlResponse{JobId: id, Event: &distillv1.CrawlResponse_Summary{Summary: summary}}); perr != nil {
		h.logger.Warn("crawl: summary not published", "job", id, "err", perr.Error())
	}
	h.update(ctx, id, func(r *record) {
		r.State, r.Status = stateEnded, statusBytes(summary)
	})
	// Its pages' answers, claims and robots.txt copies are of no use
	// to anyone now: the stream keeps only what clients stream.
	if err := Forget(ctx, h.js, h.cfg, id); err != nil {
		h.logger.Warn("crawl: what its pages left not purged", "job", id, "err", err.Error())
	}
	if h.cfg.Memory {
		// Nobody can resume it: its journal dies with this process's
		// memory, and would sit in it until then.
		if err := forgetJournal(ctx, h.js, id); err != nil {
			h.logger.Warn("crawl: its journal not purged", "job", id, "err", err.Error())
		}
	}
}

// forgetJournal purges crawl id's journal.
func forgetJournal(ctx context.Context, js jetstream.JetStream, id string) error {
	s, err := js.Stream(ctx, Stream)
	if err != nil {
		return fmt.Errorf("crawl %s: %w", id, err)
	}
	if err := s.Purge(ctx, jetstream.WithPurgeSubject(SubjectPrefix+id)); err != nil {
		return fmt.Errorf("crawl %s: %w", id, err)
	}
	return nil
}

// publishOut publishes one event of the crawl's output, named so that an
// adopter that delivers a page again within dedupWindow adds nothing, and
// returns its sequence in the stream.
func (h *Hub) publishOut(ctx context.Context, id, name string, r *distillv1.CrawlResponse) (uint64, error) {
	data, err := proto.Marshal(r)
	if err != nil {
		return 0, err
	}
	msg := &nats.Msg{Subject: OutPrefix + id, Data: data, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, "o."+id+"."+name)
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ack, err := h.js.PublishMsg(pctx, msg)
	if err != nil {
		return 0, fmt.Errorf("crawl %s output: %w", id, err)
	}
	return ack.Sequence, nil
}

// handoff is where a held crawl's run waits for its pages to reach its
// client: the last of its output a follower in this process handed over,
// and whether its follower is gone.
type handoff struct {
	mu     sync.Mutex
	handed uint64
	gone   bool
	// moved is closed and replaced when handed or gone changes.
	moved chan struct{}
}

func newHandoff() *handoff { return &handoff{moved: make(chan struct{})} }

// mark says a follower handed the output up to seq over, or left.
func (o *handoff) mark(seq uint64, gone bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.handed = max(o.handed, seq)
	o.gone = o.gone || gone
	close(o.moved)
	o.moved = make(chan struct{})
}

// wait returns once the output up to seq was handed over, or fails when
// the follower left before or ctx ends.
func (o *handoff) wait(ctx context.Context, id string, seq uint64) error {
	for {
		o.mu.Lock()
		handed, gone, moved := o.handed, o.gone, o.moved
		o.mu.Unlock()
		switch {
		case handed >= seq:
			return nil
		case gone:
			return failure.New(failure.Canceled, "crawl %s: its client is gone", id)
		}
		select {
		case <-moved:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// handoffOf is the handoff of held crawl id running here, or nil.
func (h *Hub) handoffOf(id string) *handoff {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.handoffs[id]
}

// update changes id's record with compare and set, written even when
// change leaves it as it was (which keeps it another journalMaxAge).
func (h *Hub) update(ctx context.Context, id string, change func(*record)) {
	jobs, err := h.records(ctx)
	if err != nil {
		return
	}
	_, _ = jobs.Update(ctx, id, func(r *record) bool {
		change(r)
		return true
	})
}

// watchCancel cancels job once its record says so.
func (h *Hub) watchCancel(ctx context.Context, job *crawl.Job) {
	jobs, err := h.records(ctx)
	if err != nil {
		return
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	changes, err := jobs.Watch(ctx, job.ID())
	if err != nil {
		return
	}
	for rec := range changes {
		if rec.Cancel {
			job.Cancel()
			return
		}
	}
}

// sentMark is the mark (sent.<id> in the jobs bucket) that keeps where a
// crawl's output was streamed to a client up to, so that a client that
// comes back through another gateway is not sent the same pages again.
const sentMark = "sent"

// resendWindow is how many of the last messages handed to a client the
// sent mark stays behind. A stream's Send returns once a message is
// queued, not once the client has it: a gateway killed with messages
// queued loses them, and its client, back through another gateway, is
// sent those again rather than never.
const resendWindow = 4

// FollowCrawl streams crawl id's output to deliver: a first message with
// its status (the status it began with, to a client streaming it from
// its start), each page after those streamed already, and the summary
// that ends it. When ctx ends first (the client went away) or deliver
// fails, the crawl is canceled, as a crawl ends with its stream. It is
// two phases: where the client left off (resume), then the output from
// there to the summary (tail).
func (h *Hub) FollowCrawl(ctx context.Context, id string, deliver func(*distillv1.CrawlResponse) error) error {
	jobs, err := h.records(ctx)
	if err != nil {
		return unavailable(err)
	}
	f := &follower{h: h, jobs: jobs, id: id, deliver: deliver}
	defer func() {
		// A held crawl waiting for this client to take a page waits no
		// more.
		if ho := h.handoffOf(id); ho != nil {
			ho.mark(0, true)
		}
	}()
	after, more, err := f.resume(ctx)
	if err == nil && more {
		err = f.tail(ctx, after)
	}
	if f.refused {
		_, _ = h.CancelCrawl(context.WithoutCancel(ctx), id)
	}
	return err
}

// follower is one client's stream of a crawl's output.
type follower struct {
	h       *Hub
	jobs    *Registry[record]
	pages   jetstream.Stream
	id      string
	deliver func(*distillv1.CrawlResponse) error
	// handed are the stream sequences of the last messages handed over,
	// and marks how many times the sent mark moved.
	handed []uint64
	marks  int
	// refused says deliver failed.
	refused bool
}

// purgeEvery is how many moves of the sent mark go by between two purges
// of the output behind it: what a client was sent for good is let go as
// the crawl runs, so that a long crawl's output does not pile up in the
// stream (in the single binary's memory) until its summary.
const purgeEvery = 64

// markSent notes m as handed over and moves the sent mark to resendWindow
// messages behind it, purging the output up to the mark every purgeEvery
// moves. It returns m's sequence in the stream; ok is false when m does
// not say it.
func (f *follower) markSent(ctx context.Context, m jetstream.Msg) (seq uint64, ok bool) {
	meta, err := m.Metadata()
	if err != nil {
		return 0, false
	}
	seq = meta.Sequence.Stream
	f.handed = append(f.handed, seq)
	if len(f.handed) <= resendWindow {
		return seq, true
	}
	mark := f.handed[0]
	f.handed = f.handed[1:]
	if err := f.jobs.SetMark(ctx, f.id, sentMark, mark); err != nil {
		return seq, true
	}
	if f.marks++; f.marks%purgeEvery == 0 {
		// The messages up to the mark are never streamed again: a client
		// that comes back starts after it.
		if err := f.pages.Purge(ctx, jetstream.WithPurgeSubject(OutPrefix+f.id), jetstream.WithPurgeSequence(mark+1)); err != nil {
			f.h.logger.Warn("crawl: streamed output not purged", "job", f.id, "err", err.Error())
		}
	}
	return seq, true
}

// give hands deliver r, noting a failure.
func (f *follower) give(r *distillv1.CrawlResponse) error {
	err := f.deliver(r)
	f.refused = f.refused || err != nil
	return err
}

// resume hands the client the crawl's status, finds the stream of its
// output, and says where that was streamed up to and whether any of it is
// left to stream.
func (f *follower) resume(ctx context.Context) (after uint64, more bool, err error) {
	st, err := f.h.CrawlStatus(ctx, f.id)
	if err != nil {
		return 0, false, err
	}
	// None (or unreadable) is 0: streamed from its start.
	after, _ = f.jobs.Mark(ctx, f.id, sentMark)
	first := st
	if after == 0 {
		// Streamed from its first page on: the status before it is the
		// one the crawl began with (a resumed crawl's pages done before),
		// however far it got since.
		if b := f.h.begun(ctx, f.id); b != nil {
			first = b
		}
	}
	if err := f.give(&distillv1.CrawlResponse{JobId: f.id, Event: &distillv1.CrawlResponse_Summary{Summary: first}}); err != nil {
		return 0, false, err
	}
	if f.pages, err = f.h.js.Stream(ctx, PagesStream); err != nil {
		return 0, false, unavailable(err)
	}
	if st.GetState() == distillv1.CrawlState_CRAWL_STATE_RUNNING {
		return after, true, nil
	}
	// Ended: what it left unstreamed is on the stream, or nothing is
	// (streamed to its end, and let go).
	m, err := f.pages.GetLastMsgForSubject(ctx, OutPrefix+f.id)
	switch {
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return after, false, nil
	case err != nil:
		return after, false, unavailable(err)
	}
	return after, m.Sequence > after, nil
}

// tail hands the client the crawl's output after sequence after, as it
// is stored and then as it comes, up to its summary.
func (f *follower) tail(ctx context.Context, after uint64) error {
	cfg := jetstream.OrderedConsumerConfig{FilterSubjects: []string{OutPrefix + f.id}}
	if after > 0 {
		cfg.DeliverPolicy = jetstream.DeliverByStartSequencePolicy
		cfg.OptStartSeq = after + 1
	}
	cons, err := f.h.js.OrderedConsumer(ctx, PagesStream, cfg)
	if err != nil {
		return unavailable(err)
	}
	msgs, err := cons.Messages()
	if err != nil {
		return unavailable(err)
	}
	go func() {
		<-ctx.Done()
		msgs.Stop()
	}()
	defer msgs.Stop()
	for {
		m, err := msgs.Next()
		if err != nil {
			if ctx.Err() != nil {
				// The client is gone: so is its crawl.
				_, _ = f.h.CancelCrawl(context.WithoutCancel(ctx), f.id)
				return failure.Wrap(failure.Canceled, ctx.Err(), "crawl %s", f.id)
			}
			return unavailable(err)
		}
		r := &distillv1.CrawlResponse{}
		if err := proto.Unmarshal(m.Data(), r); err != nil {
			continue
		}
		if end, err := f.hand(ctx, m, r); end || err != nil {
			return err
		}
	}
}

// hand gives the client one message of the output, marks how far the
// client has been sent, and says whether it was the summary that ends it.
func (f *follower) hand(ctx context.Context, m jetstream.Msg, r *distillv1.CrawlResponse) (end bool, err error) {
	s := r.GetSummary()
	if s != nil {
		// The owner writes the record once it has published the summary:
		// a client that has the summary and asks any gateway for the
		// status at once finds the record saying what the summary says.
		f.h.update(ctx, f.id, func(rec *record) {
			if rec.State == stateRunning {
				rec.State, rec.Status = stateEnded, statusBytes(s)
			}
		})
	}
	// The mark moves before the message is handed over, not after: a
	// gateway killed between the two then resends at most resendWindow
	// messages its client had, never one more.
	seq, ok := f.markSent(ctx, m)
	if err := f.give(r); err != nil {
		return true, err
	}
	if s == nil {
		if ho := f.h.handoffOf(f.id); ho != nil && ok {
			ho.mark(seq, false)
		}
		return false, nil
	}
	// Its client has every page and the summary: the output is of no use
	// to anyone now, and the stream lets it go.
	if err := f.pages.Purge(ctx, jetstream.WithPurgeSubject(OutPrefix+f.id)); err != nil {
		f.h.logger.Warn("crawl: output not purged", "job", f.id, "err", err.Error())
	}
	if s.GetState() == distillv1.CrawlState_CRAWL_STATE_FAILED && s.GetError() != nil {
		return true, failure.FromProto(s.GetError())
	}
	return true, nil
}

// CrawlStatus reports crawl id: live when this process runs it (its
// summary once it ended), else as its owner last wrote it.
func (h *Hub) CrawlStatus(ctx context.Context, id string) (*distillv1.CrawlStatusResponse, error) {
	h.mu.Lock()
	job, summary := h.running[id], h.ending[id]
	h.mu.Unlock()
	switch {
	case summary != nil:
		return summary, nil
	case job != nil:
		return StatusProto(job.Status(), distillv1.CrawlState_CRAWL_STATE_RUNNING, nil), nil
	}
	rec, err := h.get(ctx, id)
	if err != nil {
		return nil, err
	}
	st := &distillv1.CrawlStatusResponse{}
	if err := proto.Unmarshal(rec.Status, st); err != nil || st.GetJobId() == "" {
		st = &distillv1.CrawlStatusResponse{JobId: id, State: distillv1.CrawlState_CRAWL_STATE_RUNNING, Url: rec.Request.URL}
	}
	return st, nil
}

// begun is the status crawl id began with, or nil when its record has
// none.
func (h *Hub) begun(ctx context.Context, id string) *distillv1.CrawlStatusResponse {
	rec, err := h.get(ctx, id)
	if err != nil || len(rec.Begun) == 0 {
		return nil
	}
	st := &distillv1.CrawlStatusResponse{}
	if proto.Unmarshal(rec.Begun, st) != nil || st.GetJobId() == "" {
		return nil
	}
	return st
}

func (h *Hub) get(ctx context.Context, id string) (record, error) {
	if !crawl.ValidID(id) {
		return record{}, failure.New(failure.NotFound, "no crawl with job id %q", id)
	}
	jobs, err := h.records(ctx)
	if err != nil {
		return record{}, unavailable(err)
	}
	rec, err := jobs.Get(ctx, id)
	if failure.CodeOf(err) == failure.NotFound {
		return record{}, failure.New(failure.NotFound, "no crawl with job id %q", id)
	}
	if err != nil {
		return record{}, unavailable(err)
	}
	return rec, nil
}

// CancelCrawl tells crawl id to stop starting pages, wherever it runs.
func (h *Hub) CancelCrawl(ctx context.Context, id string) (*distillv1.CrawlStatusResponse, error) {
	if _, err := h.get(ctx, id); err != nil {
		return nil, err
	}
	h.mu.Lock()
	job := h.running[id]
	h.mu.Unlock()
	if job != nil {
		job.Cancel()
	}
	h.update(ctx, id, func(r *record) { r.Cancel = true })
	return h.CrawlStatus(ctx, id)
}

// Adopt looks, every half lease, for crawls still running whose owner's
// lease ran out, and runs them here, until ctx ends.
func (h *Hub) Adopt(ctx context.Context) {
	t := time.NewTicker(max(h.cfg.leaseTTL()/2, 500*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.ctx.Done():
			return
		case <-t.C:
		}
		h.adoptOrphans(ctx)
	}
}

func (h *Hub) adoptOrphans(ctx context.Context) {
	jobs, err := h.records(ctx)
	if err != nil {
		return
	}
	list, err := jobs.List(ctx)
	if err != nil {
		return
	}
	for _, l := range list {
		if !crawl.ValidID(l.ID) || l.Record.State != stateRunning {
			continue
		}
		if err := h.adopt(ctx, l.ID, l.Record); err != nil && failure.CodeOf(err) != failure.Conflict {
			h.logger.Warn("crawl: adopting failed", "job", l.ID, "err", err.Error())
		}
	}
}

// StatusProto is a crawl's status as the API reports it.
func StatusProto(st crawl.Status, state distillv1.CrawlState, err error) *distillv1.CrawlStatusResponse {
	return &distillv1.CrawlStatusResponse{
		JobId: st.ID, State: state, Url: st.URL,
		PagesDone: int32(st.Done), PagesFailed: int32(st.Failed),
		InFlight: int32(st.InFlight), Queued: int32(st.Queued),
		StopReason: st.StopReason, Notes: st.Notes,
		Error: failure.Proto(err),
	}
}

func statusBytes(st *distillv1.CrawlStatusResponse) []byte {
	b, _ := proto.Marshal(st)
	return b
}
