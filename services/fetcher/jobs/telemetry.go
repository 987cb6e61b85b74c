package jobs

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"distill.dev/services/platform/telemetry"
)

// headerCarrier carries trace context in NATS headers. Their keys, unlike
// HTTP's, are case-sensitive, so the W3C names are kept as the propagator
// writes them (traceparent, tracestate, baggage), as other NATS clients
// expect them.
type headerCarrier nats.Header

func (c headerCarrier) Get(key string) string { return nats.Header(c).Get(key) }
func (c headerCarrier) Set(key, value string) { nats.Header(c).Set(key, value) }
func (c headerCarrier) Keys() []string        { return slices.Collect(maps.Keys(c)) }

// queueQueryTimeout bounds the question a metrics scrape asks of NATS.
const queueQueryTimeout = 2 * time.Second

// ObserveQueueDepth reports the jobs queue on the distill.jobs.pending
// gauge at each metrics collection: jobs queued for a worker, and jobs a
// worker holds unacked. A process with a JetStream handle (the fetcher's)
// calls it once after telemetry.Setup; stop unregisters it.
func ObserveQueueDepth(js jetstream.JetStream) (stop func() error, err error) {
	return telemetry.ObserveJobsPending(func(ctx context.Context) (queued, held int64, err error) {
		ctx, cancel := context.WithTimeout(ctx, queueQueryTimeout)
		defer cancel()
		cons, err := js.Consumer(ctx, JobsStream, WorkerConsumer)
		if errors.Is(err, jetstream.ErrConsumerNotFound) {
			// No worker has started yet: every job in the stream waits.
			s, err := js.Stream(ctx, JobsStream)
			if errors.Is(err, jetstream.ErrStreamNotFound) {
				return 0, 0, nil
			}
			if err != nil {
				return 0, 0, err
			}
			return int64(s.CachedInfo().State.Msgs), 0, nil
		}
		if err != nil {
			return 0, 0, err
		}
		info := cons.CachedInfo()
		return int64(info.NumPending), int64(info.NumAckPending), nil
	})
}
