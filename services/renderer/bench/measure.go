package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// measure runs n renders from concurrency goroutines, timing each, and
// stops at the first failure: a benchmark of wrong output measures nothing.
func measure(ctx context.Context, n, concurrency int, render func(ctx context.Context, i int) error) (latencies []time.Duration, wall time.Duration, err error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	latencies = make([]time.Duration, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range min(concurrency, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				t := time.Now()
				if err := render(ctx, i); err != nil {
					cancel(err)
					return
				}
				latencies[i] = time.Since(t)
			}
		})
	}
	wg.Wait()
	wall = time.Since(start)
	if err := context.Cause(ctx); err != nil {
		return nil, 0, err
	}
	return latencies, wall, nil
}
