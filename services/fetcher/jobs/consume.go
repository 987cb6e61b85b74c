package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Pull is a durable pull consumer with explicit acks on a work-queue
// stream: how every JetStream worker of distill takes its work (a batch's
// jobs here, a crawl's pages in crawljs), so that they all start, stop
// and share out work alike.
type Pull struct {
	// Name begins the consumer's errors and log lines ("jobs").
	Name    string
	Stream  string
	Durable string
	// AckWait is how long a message may go without an ack or heartbeat
	// before another worker gets it; MaxDeliver, how many attempts it
	// gets. The consumer is shared: every worker should agree.
	AckWait    time.Duration
	MaxDeliver int
	// Slots is how many messages are handled at once.
	Slots int
	// Expiry bounds each pull request (pullExpiry says why it is short).
	Expiry time.Duration
}

// Consume hands Pull's messages to handle, at most p.Slots at a time,
// until ctx ends, then waits for the handlers in flight: a handler cut
// short by the shutdown leaves its message unacked, for another worker.
// A connection closed under it (not a shutdown it was asked for) is an
// error; the messages it held are redelivered after the ack wait.
func Consume(ctx context.Context, logger *slog.Logger, js jetstream.JetStream, p Pull, handle func(context.Context, jetstream.Msg)) error {
	cons, err := js.CreateOrUpdateConsumer(ctx, p.Stream, jetstream.ConsumerConfig{
		Durable:       p.Durable,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       p.AckWait,
		MaxDeliver:    p.MaxDeliver,
		MaxAckPending: -1,
	})
	if err != nil {
		return fmt.Errorf("%s consumer: %w", p.Name, err)
	}
	msgs, err := cons.Messages(jetstream.PullMaxMessages(p.Slots), jetstream.PullExpiry(p.Expiry))
	if err != nil {
		return fmt.Errorf("%s consume: %w", p.Name, err)
	}
	go func() {
		<-ctx.Done()
		msgs.Stop()
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, p.Slots)
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		msg, err := msgs.Next()
		if err != nil {
			<-slots
			switch {
			case ctx.Err() != nil, errors.Is(err, jetstream.ErrMsgIteratorClosed):
				return nil
			case errors.Is(err, jetstream.ErrConnectionClosed):
				return fmt.Errorf("%s: %w", p.Name, err)
			}
			logger.Warn(p.Name+": next message", "err", err)
			continue
		}
		wg.Go(func() {
			defer func() { <-slots }()
			handle(ctx, msg)
		})
	}
}

// Heartbeat marks msg in progress every interval until the returned stop
// function is called: work that outlives the ack wait (a long render) is
// not handed to another worker while it is alive.
func Heartbeat(ctx context.Context, msg jetstream.Msg, interval time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				_ = msg.InProgress()
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}
