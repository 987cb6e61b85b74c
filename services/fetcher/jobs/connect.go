package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Connect dials a NATS cluster (comma-separated URLs) for a distill process
// named name. The connection never gives up: it waits for a server that is
// not up yet and reconnects to one that restarts, logging both, so a NATS
// restart delays batches instead of failing the process.
func Connect(urls, name string, logger *slog.Logger) (*nats.Conn, jetstream.JetStream, error) {
	nc, err := nats.Connect(urls,
		nats.Name(name),
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond),
		nats.ReconnectJitter(100*time.Millisecond, time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				logger.Warn("nats disconnected", "err", err.Error())
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			logger.Info("nats reconnected", "url", nc.ConnectedUrlRedacted())
		}),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("nats %s: %w", urls, err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, nil, fmt.Errorf("jetstream: %w", err)
	}
	return nc, js, nil
}

// Connected returns nil while nc is connected to a server.
func Connected(nc *nats.Conn) error {
	if st := nc.Status(); st != nats.CONNECTED {
		return fmt.Errorf("nats is %s", st)
	}
	return nil
}

// Ready returns nil while nc is connected to a server whose JetStream
// answers: batches need it, and a server started without -js otherwise
// looks up while every batch fails.
func Ready(ctx context.Context, nc *nats.Conn, js jetstream.JetStream) error {
	if err := Connected(nc); err != nil {
		return err
	}
	if _, err := js.AccountInfo(ctx); err != nil {
		if errors.Is(err, jetstream.ErrJetStreamNotEnabled) || errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount) {
			return fmt.Errorf("JetStream is not enabled on NATS at %s (start nats-server with -js)", nc.ConnectedUrlRedacted())
		}
		return fmt.Errorf("jetstream on NATS at %s: %w", nc.ConnectedUrlRedacted(), err)
	}
	return nil
}
