// Package jobs fans batches out over NATS JetStream. A Dispatcher queues one
// FetchJob per URL on a work-queue stream; Workers pull jobs with explicit
// acks, distill them and publish a FetchJobResult to the batch's result
// subject on a second work-queue stream. A worker that dies before acking
// has its job redelivered; results are published with the job id as the
// message id and deduplicated by index, so no URL is lost or answered twice.
// A job redelivered until the consumer's delivery limit gives up on it is
// announced by the server's max-deliveries advisory, which the dispatcher
// turns into that URL's error rather than waiting out its budget.
//
// Job and result messages carry the W3C trace context in their headers: a
// batch is one trace, from the dispatcher's caller through each worker and
// the services it calls, whichever processes they run in.
package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Names of the streams, subjects and the workers' durable consumer.
const (
	JobsStream     = "DISTILL_JOBS"
	JobsSubject    = "distill.jobs"
	ResultsStream  = "DISTILL_RESULTS"
	ResultsPrefix  = "distill.results."
	WorkerConsumer = "distill-fetchers"
)

// pullExpiry bounds each pull request of the workers' and dispatchers'
// consumers. A pull the server dropped (a restart, a lost connection) is
// only noticed when two of its heartbeats, at half this, go missing: the
// default 30 s would leave a batch stalled that long.
const pullExpiry = 5 * time.Second

// maxDeliveriesAdvisory is where the server announces a job that used up
// its deliveries, under any consumer of the jobs stream.
const maxDeliveriesAdvisory = "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES." + JobsStream + ".*"

// resultsMaxAge drops results nobody collected (a gateway that died).
const resultsMaxAge = time.Hour

// StreamConfig chooses how the streams are stored.
type StreamConfig struct {
	// Memory keeps the streams in memory: right for the single binary,
	// whose queue lives and dies with the process.
	Memory bool
	// Replicas for a clustered NATS; 0 means 1.
	Replicas int
}

// EnsureStreams creates or updates the job and result streams.
func EnsureStreams(ctx context.Context, js jetstream.JetStream, cfg StreamConfig) error {
	storage := jetstream.FileStorage
	if cfg.Memory {
		storage = jetstream.MemoryStorage
	}
	replicas := max(cfg.Replicas, 1)
	streams := []jetstream.StreamConfig{{
		Name:      JobsStream,
		Subjects:  []string{JobsSubject},
		Retention: jetstream.WorkQueuePolicy,
		Storage:   storage,
		Replicas:  replicas,
	}, {
		Name:       ResultsStream,
		Subjects:   []string{ResultsPrefix + ">"},
		Retention:  jetstream.WorkQueuePolicy,
		Storage:    storage,
		Replicas:   replicas,
		MaxAge:     resultsMaxAge,
		Duplicates: 2 * time.Minute,
	}}
	for _, sc := range streams {
		if _, err := js.CreateOrUpdateStream(ctx, sc); err != nil {
			return fmt.Errorf("ensure stream %s: %w", sc.Name, err)
		}
	}
	return nil
}
