package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"
)

// Process sets telemetry up for a distill process named service and, when
// metricsAddr is not empty, serves Prometheus metrics there until ctx
// ends. The stop it returns flushes what is left to export; call it on
// exit. A metrics address that cannot be listened on is logged and
// ends the metrics, not the process. listening, when given, is told the
// metrics listener's address before it serves.
func Process(ctx context.Context, service, metricsAddr string, logger *slog.Logger, listening ...func(net.Addr)) (stop func(), err error) {
	shutdown, err := Setup(ctx, service)
	if err != nil {
		return nil, err
	}
	if metricsAddr != "" {
		lis, err := net.Listen("tcp", metricsAddr)
		if err != nil {
			logger.Error("metrics not served", "err", fmt.Errorf("metrics: listen %s: %w", metricsAddr, err).Error())
		} else {
			for _, l := range listening {
				l(lis.Addr())
			}
			go func() {
				if err := serveMetrics(ctx, lis, logger); err != nil {
					logger.Error("metrics not served", "err", err.Error())
				}
			}()
		}
	}
	return func() {
		flush, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := shutdown(flush); err != nil {
			logger.Warn("telemetry flush", "err", err.Error())
		}
	}, nil
}
