package telemetry

import (
	"context"
	"log/slog"
	"time"
)

// Process sets telemetry up for a distill process named service and, when
// metricsAddr is not empty, serves Prometheus metrics there until ctx
// ends. The stop it returns flushes what is left to export; call it on
// exit. A metrics address that cannot be listened on is logged and
// ends the metrics, not the process.
func Process(ctx context.Context, service, metricsAddr string, logger *slog.Logger) (stop func(), err error) {
	shutdown, err := Setup(ctx, service)
	if err != nil {
		return nil, err
	}
	if metricsAddr != "" {
		go func() {
			if err := ServeMetrics(ctx, metricsAddr, logger); err != nil {
				logger.Error("metrics not served", "err", err.Error())
			}
		}()
	}
	return func() {
		flush, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := shutdown(flush); err != nil {
			logger.Warn("telemetry flush", "err", err.Error())
		}
	}, nil
}
