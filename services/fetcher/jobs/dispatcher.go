package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
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
	ctx, span := telemetry.Start(ctx, "distill.dispatch", trace.WithAttributes(telemetry.BatchID.String(batchID), telemetry.BatchSize.Int(len(urls))))
	defer span.End()
	results, exhausted, stop, err := d.listen(ctx, ResultsPrefix+batchID)
	if err != nil {
		return fmt.Errorf("batch %s: %w", batchID, err)
	}
	defer stop()

	b := newBatch(d.logger, batchID, urls, opts, answerWithin(opts, d.ackWait(ctx)), deliver)
	defer b.endSpans()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		b.fill(func(idx int32) error { return d.publish(ctx, b, idx) })
		if b.remaining == 0 {
			return nil
		}
		timer.Reset(b.untilNextDeadline())
		select {
		case <-ctx.Done():
			b.cancel(ctx.Err())
			return ctx.Err()
		case m, ok := <-results:
			if !ok {
				return fmt.Errorf("batch %s: result stream closed", batchID)
			}
			b.result(ctx, m)
		case ex := <-exhausted:
			if b.exhausted(ex) {
				d.dropJob(ctx, ex.StreamSeq)
			}
		case now := <-timer.C:
			b.timeout(now)
		}
	}
}

// listen opens what a batch hears: the results on its subject, through a
// consumer of its own, and the jobs the workers' consumer gives up on.
// stop closes both and deletes the consumer.
func (d *Dispatcher) listen(ctx context.Context, subject string) (results <-chan jetstream.Msg, exhausted <-chan exhaustedJob, stop func(), err error) {
	cons, err := d.js.CreateConsumer(ctx, ResultsStream, jetstream.ConsumerConfig{
		FilterSubject:     subject,
		AckPolicy:         jetstream.AckExplicitPolicy,
		InactiveThreshold: time.Minute,
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("results consumer: %w", err)
	}
	deleteConsumer := func() {
		cleanup, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = d.js.DeleteConsumer(cleanup, ResultsStream, cons.CachedInfo().Name)
	}
	// Listen for given-up jobs before the first is queued: the server only
	// sends the advisory to those already listening.
	exhausted, stopExhausted, err := d.watchExhausted(ctx)
	if err != nil {
		deleteConsumer()
		return nil, nil, nil, err
	}
	msgs, err := cons.Messages(jetstream.PullExpiry(pullExpiry))
	if err != nil {
		stopExhausted()
		deleteConsumer()
		return nil, nil, nil, fmt.Errorf("consume results: %w", err)
	}
	out := make(chan jetstream.Msg)
	// quit frees a pump holding a result nobody will take, as a duplicate
	// arriving after the last answer would be.
	quit := make(chan struct{})
	go func() {
		defer close(out)
		for {
			m, err := msgs.Next()
			if err != nil {
				return
			}
			select {
			case out <- m:
			case <-quit:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	stop = func() {
		close(quit)
		msgs.Stop()
		stopExhausted()
		deleteConsumer()
	}
	return out, exhausted, stop, nil
}

// publish queues the batch's job at idx, with a span that lasts until its
// answer.
func (d *Dispatcher) publish(ctx context.Context, b *batch, idx int32) error {
	job := &internalv1.FetchJob{
		JobId:         b.jobID(idx),
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
	b.queued(idx, ack.Sequence, span)
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
