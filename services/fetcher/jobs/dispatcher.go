package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/pipeline"
	"distill.dev/services/platform/telemetry"
)

// queueGrace covers time a job spends queued and scheduled.
const queueGrace = 30 * time.Second

// answerWithin is how long the dispatcher waits for a job's result before
// reporting it unanswered: long enough for a worker to die at the end of
// the job's budget, for the job to be redelivered after the workers' ack
// wait, and for a second worker to run it in full.
func answerWithin(opts *distillv1.FetchOptions, ackWait time.Duration) time.Duration {
	return 2*pipeline.Budget(opts) + ackWait + queueGrace
}

// ackWait is the ack wait of the workers' shared consumer, which the
// fetchers set (-ack-wait), or DefaultAckWait before any worker made it.
func (d *Dispatcher) ackWait(ctx context.Context) time.Duration {
	cons, err := d.js.Consumer(ctx, JobsStream, WorkerConsumer)
	if err != nil {
		return DefaultAckWait
	}
	return max(cons.CachedInfo().Config.AckWait, DefaultAckWait)
}

// Dispatcher runs batches over the job queue.
type Dispatcher struct {
	logger *slog.Logger
	js     jetstream.JetStream
}

// NewDispatcher returns a Dispatcher publishing on js.
func NewDispatcher(logger *slog.Logger, js jetstream.JetStream) *Dispatcher {
	return &Dispatcher{logger: logger, js: js}
}

// Run distills urls as one batch. It keeps at most
// fetchopts.Concurrency(opts) jobs in flight and calls deliver exactly once
// per URL, in completion order, from the calling goroutine. A URL whose
// result does not come back within its budget is delivered as a timeout
// error; when ctx ends, the URLs still open are delivered as cancelled.
func (d *Dispatcher) Run(ctx context.Context, urls []string, opts *distillv1.FetchOptions, deliver func(*internalv1.FetchJobResult)) error {
	if len(urls) == 0 {
		return nil
	}
	batchID := nuid.Next()
	subject := ResultsPrefix + batchID
	ctx, span := telemetry.Start(ctx, "distill.dispatch", trace.WithAttributes(telemetry.BatchID.String(batchID), telemetry.BatchSize.Int(len(urls))))
	defer span.End()
	cons, err := d.js.CreateConsumer(ctx, ResultsStream, jetstream.ConsumerConfig{
		FilterSubject:     subject,
		AckPolicy:         jetstream.AckExplicitPolicy,
		InactiveThreshold: time.Minute,
	})
	if err != nil {
		return fmt.Errorf("batch %s: results consumer: %w", batchID, err)
	}
	defer func() {
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = d.js.DeleteConsumer(cleanup, ResultsStream, cons.CachedInfo().Name)
	}()
	// Listen for given-up jobs before the first is queued: the server only
	// sends the advisory to those already listening.
	exhausted, stopExhausted, err := d.watchExhausted(ctx)
	if err != nil {
		return fmt.Errorf("batch %s: %w", batchID, err)
	}
	defer stopExhausted()
	msgs, err := cons.Messages(jetstream.PullExpiry(pullExpiry))
	if err != nil {
		return fmt.Errorf("batch %s: consume results: %w", batchID, err)
	}
	results := make(chan jetstream.Msg)
	go func() {
		defer close(results)
		for {
			m, err := msgs.Next()
			if err != nil {
				return
			}
			select {
			case results <- m:
			case <-ctx.Done():
				return
			}
		}
	}()
	defer msgs.Stop()

	b := &batch{
		id:       batchID,
		subject:  subject,
		urls:     urls,
		opts:     opts,
		budget:   answerWithin(opts, d.ackWait(ctx)),
		inFlight: make(map[int32]time.Time),
		bySeq:    make(map[uint64]int32),
		spans:    make(map[int32]trace.Span),
		done:     make([]bool, len(urls)),
	}
	defer b.endSpans()
	limit := fetchopts.Concurrency(opts)
	deliverOnce := func(r *internalv1.FetchJobResult) {
		if b.done[r.GetIndex()] {
			return
		}
		b.done[r.GetIndex()] = true
		b.remaining--
		delete(b.inFlight, r.GetIndex())
		b.endSpan(r)
		deliver(r)
	}
	b.remaining = len(urls)

	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for b.remaining > 0 {
		for b.next < len(urls) && len(b.inFlight) < limit {
			idx := int32(b.next)
			b.next++
			if err := d.publish(ctx, b, idx); err != nil {
				deliverOnce(errorResult(b, idx, err))
			}
		}
		if b.remaining == 0 {
			break
		}
		timer.Reset(b.untilNextDeadline())
		select {
		case <-ctx.Done():
			for i := range urls {
				if !b.done[i] {
					deliverOnce(errorResult(b, int32(i), failure.Wrap(failure.Canceled, ctx.Err(), "batch cancelled before %s was answered", urls[i])))
				}
			}
			return ctx.Err()
		case m, ok := <-results:
			if !ok {
				return fmt.Errorf("batch %s: result stream closed", batchID)
			}
			r := &internalv1.FetchJobResult{}
			if err := proto.Unmarshal(m.Data(), r); err != nil || r.GetBatchId() != batchID || r.GetIndex() < 0 || int(r.GetIndex()) >= len(urls) {
				d.logger.Warn("jobs: stray result dropped", "batch", batchID, "err", err)
				_ = m.Term()
				continue
			}
			_ = m.Ack()
			b.linkWorker(ctx, r.GetIndex(), m.Headers())
			deliverOnce(r)
		case ex := <-exhausted:
			idx, ours := b.bySeq[ex.StreamSeq]
			if !ours {
				continue
			}
			delete(b.bySeq, ex.StreamSeq)
			if !b.done[idx] {
				deliverOnce(errorResult(b, idx, failure.New(failure.Internal,
					"gave up on %s after %d deliveries: each worker that took it failed before answering", urls[idx], ex.Deliveries)))
			}
			d.dropJob(ctx, ex.StreamSeq)
		case now := <-timer.C:
			for idx, deadline := range b.inFlight {
				if now.After(deadline) {
					deliverOnce(errorResult(b, idx, failure.New(failure.Timeout,
						"no worker answered for %s within %s", urls[idx], b.budget.Round(time.Second))))
				}
			}
		}
	}
	return nil
}

type batch struct {
	id, subject string
	urls        []string
	opts        *distillv1.FetchOptions
	budget      time.Duration
	next        int
	remaining   int
	inFlight    map[int32]time.Time // index -> deadline
	bySeq       map[uint64]int32    // jobs stream sequence -> index
	// spans holds each queued job's span, from publish to answer.
	spans map[int32]trace.Span
	done  []bool
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

func (b *batch) untilNextDeadline() time.Duration {
	wait := time.Hour
	now := time.Now()
	for _, deadline := range b.inFlight {
		wait = min(wait, deadline.Sub(now))
	}
	return max(wait, time.Millisecond)
}

func (d *Dispatcher) publish(ctx context.Context, b *batch, idx int32) error {
	job := &internalv1.FetchJob{
		JobId:         b.id + "." + strconv.Itoa(int(idx)),
		BatchId:       b.id,
		Index:         idx,
		Url:           b.urls[idx],
		Options:       b.opts,
		ResultSubject: b.subject,
	}
	data, err := proto.Marshal(job)
	if err != nil {
		return failure.Wrap(failure.Internal, err, "encode job for %s", b.urls[idx])
	}
	// The job's span lasts until its answer: its queueing and its work.
	ctx, span := telemetry.Start(ctx, "distill.dispatch.job", trace.WithSpanKind(trace.SpanKindProducer),
		trace.WithAttributes(append(telemetry.URLAttributes(job.GetUrl()),
			telemetry.BatchID.String(b.id), telemetry.BatchIndex.Int(int(idx)), telemetry.JobID.String(job.GetJobId()))...))
	msg := &nats.Msg{Subject: JobsSubject, Data: data, Header: nats.Header{}}
	msg.Header.Set(jetstream.MsgIDHeader, job.GetJobId())
	otel.GetTextMapPropagator().Inject(ctx, headerCarrier(msg.Header))
	ack, err := d.publishMsg(ctx, msg, b.budget)
	if err != nil {
		err = failure.Wrap(failure.Internal, err, "queue job for %s", b.urls[idx])
		telemetry.End(span, err)
		return err
	}
	b.spans[idx] = span
	b.bySeq[ack.Sequence] = idx
	b.inFlight[idx] = time.Now().Add(b.budget)
	return nil
}

// publishAttempt bounds one attempt to queue a job: a NATS server that is
// restarting may never acknowledge what was sent while it went down.
const publishAttempt = 5 * time.Second

// publishMsg queues msg, trying again within budget while NATS does not
// acknowledge it. The job's message id makes a repeat harmless: the stream
// keeps one copy.
func (d *Dispatcher) publishMsg(ctx context.Context, msg *nats.Msg, budget time.Duration) (*jetstream.PubAck, error) {
	deadline := time.Now().Add(budget)
	for {
		actx, cancel := context.WithTimeout(ctx, publishAttempt)
		ack, err := d.js.PublishMsg(actx, msg)
		cancel()
		if err == nil || ctx.Err() != nil || time.Now().Add(publishAttempt).After(deadline) {
			return ack, err
		}
		d.logger.Debug("jobs: queueing again", "subject", msg.Subject, "err", err.Error())
		select {
		case <-time.After(250 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// exhaustedJob is the part of JetStream's max-deliveries advisory the
// dispatcher needs.
type exhaustedJob struct {
	StreamSeq  uint64 `json:"stream_seq"`
	Deliveries uint64 `json:"deliveries"`
}

// watchExhausted reports the jobs the workers' consumer has given up on.
// Every batch sees every advisory and keeps those whose sequence it
// published.
func (d *Dispatcher) watchExhausted(ctx context.Context) (<-chan exhaustedJob, func(), error) {
	nc := d.js.Conn()
	out := make(chan exhaustedJob)
	done := make(chan struct{})
	// The handler may block: the subscription's own pending buffer holds
	// advisories while the batch is busy, so none is dropped.
	sub, err := nc.Subscribe(maxDeliveriesAdvisory, func(m *nats.Msg) {
		var ex exhaustedJob
		if err := json.Unmarshal(m.Data, &ex); err != nil {
			d.logger.Warn("jobs: undecodable max-deliveries advisory", "err", err)
			return
		}
		select {
		case out <- ex:
		case <-done:
		}
	})
	if err != nil {
		return nil, nil, fmt.Errorf("subscribe to max-deliveries advisories: %w", err)
	}
	stop := func() {
		close(done)
		_ = sub.Unsubscribe()
	}
	// A round trip makes sure the server has the subscription.
	flushCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := nc.FlushWithContext(flushCtx); err != nil {
		stop()
		return nil, nil, fmt.Errorf("subscribe to max-deliveries advisories: %w", err)
	}
	return out, stop, nil
}

// dropJob removes a given-up job from the queue, where a work-queue stream
// would otherwise keep it unacked for good.
func (d *Dispatcher) dropJob(ctx context.Context, seq uint64) {
	s, err := d.js.Stream(ctx, JobsStream)
	if err == nil {
		err = s.DeleteMsg(ctx, seq)
	}
	if err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
		d.logger.Warn("jobs: drop given-up job", "seq", seq, "err", err)
	}
}

func errorResult(b *batch, idx int32, err error) *internalv1.FetchJobResult {
	return &internalv1.FetchJobResult{
		JobId:   b.id + "." + strconv.Itoa(int(idx)),
		BatchId: b.id,
		Index:   idx,
		Url:     b.urls[idx],
		Outcome: &internalv1.FetchJobResult_Error{Error: failure.Proto(err)},
	}
}
