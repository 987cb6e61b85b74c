package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// ServeConfig is how a process runs its batch workers. The fetcher process
// and the single binary both start them through Serve; their differences
// are the fields below, named.
type ServeConfig struct {
	// Workers is how many jobs run at once.
	Workers int
	// AckWait is how long a job may go unanswered before another worker
	// gets it; zero means DefaultAckWait. Every worker must agree.
	AckWait time.Duration
	// Streams makes the job streams when they are missing.
	Streams StreamConfig
	// ReleaseUnavailable hands a job back to the queue when a service its
	// pipeline needs cannot be reached: the page is not at fault, and
	// another attempt, here or on another worker, follows once the service
	// is back. For pipelines whose stages are remote.
	ReleaseUnavailable bool
	// Restart makes the streams and the consumer again and restarts the
	// workers, a second later, whenever they stop before ctx ends: a NATS
	// server restarted without its store has lost them. Without it the
	// first stop ends Serve, as for an embedded server that lives and dies
	// with the process.
	Restart bool
}

// restartDelay is how long Serve waits before starting stopped workers
// again.
const restartDelay = time.Second

// Serve runs workers pulling jobs from js through proc until ctx ends,
// then lets them finish the jobs they hold (a job cut short is not acked,
// so JetStream hands it to another worker). It observes the queue's depth
// for the metrics while it runs.
func Serve(ctx context.Context, logger *slog.Logger, js jetstream.JetStream, proc Processor, cfg ServeConfig) error {
	stopDepth, err := ObserveQueueDepth(js)
	if err != nil {
		logger.Warn("queue depth not observed", "err", err.Error())
	} else {
		defer func() { _ = stopDepth() }()
	}
	if cfg.ReleaseUnavailable {
		proc = releasing{proc}
	}
	var opts []Option
	if cfg.AckWait > 0 {
		opts = append(opts, WithAckWait(cfg.AckWait))
	}
	w := NewWorker(logger, js, proc, cfg.Workers, opts...)
	for {
		err := EnsureStreams(ctx, js, cfg.Streams)
		if err == nil {
			err = w.Run(ctx)
		}
		if ctx.Err() != nil {
			return nil
		}
		if !cfg.Restart {
			return err
		}
		logger.Warn("batch worker stopped; restarting", "err", fmt.Sprint(err))
		select {
		case <-time.After(restartDelay):
		case <-ctx.Done():
			return nil
		}
	}
}

// releasing turns a pipeline's Unavailable into ErrRelease.
type releasing struct{ proc Processor }

func (r releasing) Distill(ctx context.Context, rawURL string, opts *distillv1.FetchOptions) (*distillv1.Distilled, error) {
	d, err := r.proc.Distill(ctx, rawURL, opts)
	if failure.CodeOf(err) == failure.Unavailable {
		return nil, fmt.Errorf("%w: %w", ErrRelease, err)
	}
	return d, err
}
