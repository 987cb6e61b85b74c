package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/pipeline"
	"distill.dev/services/platform/telemetry"
)

// Processor distills one URL. *pipeline.Pipeline satisfies it.
type Processor interface {
	Distill(ctx context.Context, rawURL string, opts *distillv1.FetchOptions) (*distillv1.Distilled, error)
}

// ErrRelease, returned (wrapped or not) by a Processor, hands the job back to
// the queue instead of answering it: for failures of this worker rather
// than of the page, such as a renderer that went away. Another attempt
// follows after the retry delay, up to the consumer's delivery limit, after
// which the dispatcher reports the URL as failed.
var ErrRelease = errors.New("jobs: job released for another attempt")

// DefaultAckWait is how long a job may go without an ack or heartbeat
// before another worker gets it, unless WithAckWait says otherwise.
const DefaultAckWait = time.Minute

// Delivery defaults. A job whose worker keeps dying, panicking or releasing
// it is given up after maxDeliver attempts, and the dispatcher reports it.
const (
	defaultMaxDeliver = 5
	defaultRetryDelay = time.Second
)

// Worker pulls jobs and distills them, at most Concurrency at a time.
type Worker struct {
	logger      *slog.Logger
	js          jetstream.JetStream
	proc        Processor
	concurrency int
	ackWait     time.Duration
	maxDeliver  int
	retryDelay  time.Duration
}

// Option tunes a Worker.
type Option func(*Worker)

// WithAckWait sets how long a job may go without an ack or heartbeat before
// the server hands it to another worker: how soon the jobs of a worker that
// died are redone. The consumer is shared, so every worker should agree.
func WithAckWait(d time.Duration) Option {
	return func(w *Worker) { w.ackWait = d }
}

// WithMaxDeliver sets how many attempts a job gets before it is given up.
// The consumer is shared, so every worker should agree.
func WithMaxDeliver(n int) Option {
	return func(w *Worker) { w.maxDeliver = n }
}

// WithRetryDelay sets how long a released or panicked job waits before its
// next attempt.
func WithRetryDelay(d time.Duration) Option {
	return func(w *Worker) { w.retryDelay = d }
}

// NewWorker returns a worker that runs up to concurrency jobs at once.
func NewWorker(logger *slog.Logger, js jetstream.JetStream, proc Processor, concurrency int, opts ...Option) *Worker {
	w := &Worker{
		logger:      logger,
		js:          js,
		proc:        proc,
		concurrency: max(concurrency, 1),
		ackWait:     DefaultAckWait,
		maxDeliver:  defaultMaxDeliver,
		retryDelay:  defaultRetryDelay,
	}
	for _, opt := range opts {
		opt(w)
	}
	return w
}

// Run consumes jobs until ctx ends, then waits for the jobs in flight. A job
// cut short by shutdown is not acked, so it is redelivered to another
// worker.
func (w *Worker) Run(ctx context.Context) error {
	return Consume(ctx, w.logger, w.js, Pull{
		Name: "jobs", Stream: JobsStream, Durable: WorkerConsumer,
		AckWait: w.ackWait, MaxDeliver: w.maxDeliver, Slots: w.concurrency, Expiry: pullExpiry,
	}, w.handle)
}

func (w *Worker) handle(ctx context.Context, msg jetstream.Msg) {
	job := &internalv1.FetchJob{}
	if err := proto.Unmarshal(msg.Data(), job); err != nil {
		w.logger.Error("jobs: undecodable job dropped", "err", err)
		_ = msg.Term()
		return
	}
	// The job's work continues the trace of the batch that queued it.
	ctx = otel.GetTextMapPropagator().Extract(ctx, headerCarrier(msg.Headers()))
	ctx, span := telemetry.Start(ctx, "distill.job", trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(
		append(telemetry.URLAttributes(job.GetUrl()), telemetry.BatchID.String(job.GetBatchId()),
			telemetry.BatchIndex.Int(int(job.GetIndex())), telemetry.JobID.String(job.GetJobId()))...))
	outcome := telemetry.JobInterrupted
	defer func() {
		telemetry.CountJob(ctx, outcome)
		span.SetAttributes(telemetry.Outcome.String(outcome))
		if outcome != telemetry.OutcomeOK {
			span.SetStatus(codes.Error, outcome)
		}
		span.End()
	}()
	if meta, err := msg.Metadata(); err == nil {
		span.SetAttributes(telemetry.Attempt.Int(int(meta.NumDelivered)))
	}
	budget := pipeline.Budget(job.GetOptions())
	jobCtx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()

	// Long renders outlive the ack wait; tell the server the job is alive.
	stopBeat := Heartbeat(jobCtx, msg, w.ackWait/3)
	page, err := w.distill(jobCtx, job)
	stopBeat()

	if ctx.Err() != nil {
		// Shutting down: leave the job for another worker.
		_ = msg.Nak()
		return
	}
	if errors.Is(err, ErrRelease) {
		w.logger.Warn("jobs: job released for another attempt", "job", job.GetJobId(), "url", job.GetUrl(), "err", err)
		outcome = telemetry.JobReleased
		_ = msg.NakWithDelay(w.retryDelay)
		return
	}
	res := &internalv1.FetchJobResult{
		JobId:   job.GetJobId(),
		BatchId: job.GetBatchId(),
		Index:   job.GetIndex(),
		Url:     job.GetUrl(),
	}
	if err != nil {
		res.Outcome = &internalv1.FetchJobResult_Error{Error: failure.Proto(err)}
	} else {
		res.Outcome = &internalv1.FetchJobResult_Result{Result: page}
	}
	if err := w.publish(ctx, job.GetResultSubject(), res); err != nil {
		w.logger.Warn("jobs: publish result, job will be redelivered", "job", job.GetJobId(), "err", err)
		outcome = telemetry.JobReleased
		_ = msg.NakWithDelay(w.retryDelay)
		return
	}
	outcome = telemetry.OutcomeOf(err)
	// The ack outlives a shutdown that begins now: the result is already
	// out, and an unacked job would be redone by another worker.
	ackCtx, cancelAck := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancelAck()
	if err := msg.DoubleAck(ackCtx); err != nil {
		// The result is out and deduplicated by job id, so a redelivery
		// after a lost ack costs work but not correctness.
		w.logger.Warn("jobs: ack", "job", job.GetJobId(), "err", err)
	}
}

// distill runs the processor, turning a panic into a release: one page
// that trips a bug must not take the whole batch, or the process, with it.
func (w *Worker) distill(ctx context.Context, job *internalv1.FetchJob) (page *distillv1.Distilled, err error) {
	defer func() {
		if p := recover(); p != nil {
			w.logger.Error("jobs: processor panicked", "job", job.GetJobId(), "url", job.GetUrl(), "panic", p, "stack", string(debug.Stack()))
			page, err = nil, fmt.Errorf("%w: panic: %v", ErrRelease, p)
		}
	}()
	return w.proc.Distill(ctx, job.GetUrl(), job.GetOptions())
}

func (w *Worker) publish(ctx context.Context, subject string, res *internalv1.FetchJobResult) error {
	data, err := proto.Marshal(res)
	if err != nil {
		return err
	}
	out := &nats.Msg{Subject: subject, Data: data, Header: nats.Header{}}
	out.Header.Set(jetstream.MsgIDHeader, res.GetJobId())
	otel.GetTextMapPropagator().Inject(ctx, headerCarrier(out.Header))
	_, err = w.js.PublishMsg(ctx, out)
	if errors.Is(err, nats.ErrMaxPayload) {
		// The page is too big for the queue: answer with the reason rather
		// than leave the URL unanswered.
		res.Outcome = &internalv1.FetchJobResult_Error{Error: failure.Proto(failure.New(failure.TooLarge,
			"distilled result of %d bytes exceeds the queue's message limit", len(data)))}
		data, err = proto.Marshal(res)
		if err != nil {
			return err
		}
		out.Data = data
		_, err = w.js.PublishMsg(ctx, out)
	}
	return err
}
