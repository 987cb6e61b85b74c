package jobs

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/telemetry"
)

// batch is the state of one Run: which jobs are queued, in flight and
// answered. Each event Run waits for is one of its methods, so what the
// batch does about a result, an advisory, a timeout or the end of its
// context holds without NATS.
type batch struct {
	logger      *slog.Logger
	id, subject string
	urls        []string
	opts        *distillv1.FetchOptions
	budget      time.Duration
	limit       int // jobs in flight at once
	next        int
	remaining   int
	inFlight    map[int32]time.Time // index -> deadline
	bySeq       map[uint64]int32    // jobs stream sequence -> index
	// spans holds each queued job's span, from publish to answer.
	spans map[int32]trace.Span
	done  []bool
	// out receives each URL's answer once.
	out func(*internalv1.FetchJobResult)
}

func newBatch(logger *slog.Logger, id string, urls []string, opts *distillv1.FetchOptions, budget time.Duration, out func(*internalv1.FetchJobResult)) *batch {
	return &batch{
		logger:    logger,
		id:        id,
		subject:   ResultsPrefix + id,
		urls:      urls,
		opts:      opts,
		budget:    budget,
		limit:     fetchopts.Concurrency(opts),
		remaining: len(urls),
		inFlight:  make(map[int32]time.Time),
		bySeq:     make(map[uint64]int32),
		spans:     make(map[int32]trace.Span),
		done:      make([]bool, len(urls)),
		out:       out,
	}
}

// fill queues jobs until the batch's concurrency is in flight or every URL
// is queued. A job publish could not queue is answered with the reason.
func (b *batch) fill(publish func(idx int32) error) {
	for b.next < len(b.urls) && len(b.inFlight) < b.limit {
		idx := int32(b.next)
		b.next++
		if err := publish(idx); err != nil {
			b.deliver(b.errorResult(idx, err))
		}
	}
}

// queued records a job the jobs stream took at seq: it is in flight until
// its budget runs out, and its span lasts until it is answered.
func (b *batch) queued(idx int32, seq uint64, span trace.Span) {
	b.spans[idx] = span
	b.bySeq[seq] = idx
	b.inFlight[idx] = time.Now().Add(b.budget)
}

// resultMsg is what a batch needs of a result's message; jetstream.Msg
// has it.
type resultMsg interface {
	Data() []byte
	Headers() nats.Header
	Ack() error
	Term() error
}

// result takes a worker's answer. One that is not for a job of this batch
// is dropped for good; a second answer to a job, as two workers give after
// a redelivery, is acked and goes no further.
func (b *batch) result(ctx context.Context, m resultMsg) {
	r := &internalv1.FetchJobResult{}
	if err := proto.Unmarshal(m.Data(), r); err != nil || r.GetBatchId() != b.id || r.GetIndex() < 0 || int(r.GetIndex()) >= len(b.urls) {
		b.logger.Warn("jobs: stray result dropped", "batch", b.id, "err", err)
		_ = m.Term()
		return
	}
	_ = m.Ack()
	b.linkWorker(ctx, r.GetIndex(), m.Headers())
	b.deliver(r)
}

// exhausted takes a max-deliveries advisory: a job of this batch still
// open is answered as given up. It reports whether the job was this
// batch's, and so is the batch's to drop from the queue.
func (b *batch) exhausted(ex exhaustedJob) (ours bool) {
	idx, ours := b.bySeq[ex.StreamSeq]
	if !ours {
		return false
	}
	delete(b.bySeq, ex.StreamSeq)
	if !b.done[idx] {
		b.deliver(b.errorResult(idx, failure.New(failure.Internal,
			"gave up on %s after %d deliveries: each worker that took it failed before answering", b.urls[idx], ex.Deliveries)))
	}
	return true
}

// timeout answers the jobs in flight whose deadline is before now.
func (b *batch) timeout(now time.Time) {
	for idx, deadline := range b.inFlight {
		if now.After(deadline) {
			b.deliver(b.errorResult(idx, failure.New(failure.Timeout,
				"no worker answered for %s within %s", b.urls[idx], b.budget.Round(time.Second))))
		}
	}
}

// cancel answers every URL still open, queued or not, as cancelled by
// cause.
func (b *batch) cancel(cause error) {
	for i := range b.urls {
		if !b.done[i] {
			b.deliver(b.errorResult(int32(i), failure.Wrap(failure.Canceled, cause, "batch cancelled before %s was answered", b.urls[i])))
		}
	}
}

// deliver hands r on unless its URL is answered already.
func (b *batch) deliver(r *internalv1.FetchJobResult) {
	if b.done[r.GetIndex()] {
		return
	}
	b.done[r.GetIndex()] = true
	b.remaining--
	delete(b.inFlight, r.GetIndex())
	b.endSpan(r)
	b.out(r)
}

// untilNextDeadline is how long until the first job in flight runs out of
// time.
func (b *batch) untilNextDeadline() time.Duration {
	wait := time.Hour
	now := time.Now()
	for _, deadline := range b.inFlight {
		wait = min(wait, deadline.Sub(now))
	}
	return max(wait, time.Millisecond)
}

// linkWorker links a job's span to the span of the worker that answered
// it, whose context the result carries.
func (b *batch) linkWorker(ctx context.Context, idx int32, h nats.Header) {
	span, ok := b.spans[idx]
	if !ok {
		return
	}
	worker := trace.SpanContextFromContext(otel.GetTextMapPropagator().Extract(ctx, headerCarrier(h)))
	if worker.IsValid() {
		span.AddLink(trace.Link{SpanContext: worker})
	}
}

// endSpan ends the span of the job r answers, as r's outcome.
func (b *batch) endSpan(r *internalv1.FetchJobResult) {
	span, ok := b.spans[r.GetIndex()]
	if !ok {
		return
	}
	delete(b.spans, r.GetIndex())
	var err error
	if e := r.GetError(); e != nil {
		err = failure.FromProto(e)
	}
	telemetry.End(span, err)
}

// endSpans ends the spans of jobs left unanswered when Run gives up.
func (b *batch) endSpans() {
	for idx, span := range b.spans {
		span.End()
		delete(b.spans, idx)
	}
}

func (b *batch) jobID(idx int32) string {
	return b.id + "." + strconv.Itoa(int(idx))
}

// errorResult is the answer for the job at idx that failed with err.
func (b *batch) errorResult(idx int32, err error) *internalv1.FetchJobResult {
	return &internalv1.FetchJobResult{
		JobId:   b.jobID(idx),
		BatchId: b.id,
		Index:   idx,
		Url:     b.urls[idx],
		Outcome: &internalv1.FetchJobResult_Error{Error: failure.Proto(err)},
	}
}
