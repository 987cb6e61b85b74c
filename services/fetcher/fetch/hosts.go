package fetch

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"distill.dev/services/platform/telemetry"
)

// errRateDeadline says the rate limit would make a request wait past the
// fetch's deadline; waiting is pointless, so the fetch times out now.
var errRateDeadline = errors.New("rate limit wait would pass the deadline")

// sweepAbove is the number of tracked hosts past which idle ones are
// forgotten, so a long-running fetcher does not keep every host it met.
const sweepAbove = 1024

// hostGate enforces per-host concurrency and rate limits across all calls
// of a Fetcher. Limits come with each call, because options are per
// request; the counts and token buckets are shared. A rate is a delay of
// package pace as requests a second (pace.PerSecond): a site's
// Crawl-delay, or a crawl's or a map's --delay, paces the hops inside one
// fetch through it.
type hostGate struct {
	clock Clock
	mu    sync.Mutex
	hosts map[string]*hostState
}

// Clock is the time per-host rate limits and retry waits are kept in and
// waited on.
type Clock interface {
	Now() time.Time
	// After is time.After on this clock.
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// WithClock sets the clock of rate limits and retry waits, so tests can
// check the spacing of requests without sleeping through it.
func WithClock(c Clock) Option {
	return func(f *Fetcher) { f.hosts.clock = c }
}

type hostState struct {
	refs   int // calls holding or waiting for a slot; the entry lives while > 0
	active int
	// freed is closed and replaced whenever a slot is released, waking
	// every waiter to recheck against its own limit.
	freed   chan struct{}
	limiter *rate.Limiter
}

func newHostGate() *hostGate {
	return &hostGate{clock: realClock{}, hosts: make(map[string]*hostState)}
}

// acquire waits for a slot on host (limit 0 = unlimited) and then for a
// token at perSec requests a second (0 = no rate limit). The slot is taken
// first so that the token is spent right before the request goes out.
func (g *hostGate) acquire(ctx context.Context, host string, limit int, perSec float64) (release func(), err error) {
	g.mu.Lock()
	if len(g.hosts) > sweepAbove {
		g.sweep()
	}
	st := g.hosts[host]
	if st == nil {
		st = &hostState{freed: make(chan struct{})}
		g.hosts[host] = st
	}
	st.refs++
	g.mu.Unlock()

	var limiter *rate.Limiter
	var waiting time.Time // when the call began waiting for a slot
	for {
		g.mu.Lock()
		if limit <= 0 || st.active < limit {
			st.active++
			limiter = st.rateLimiter(g.clock.Now(), perSec)
			g.mu.Unlock()
			break
		}
		freed := st.freed
		g.mu.Unlock()
		if waiting.IsZero() {
			waiting = time.Now()
		}
		select {
		case <-freed:
		case <-ctx.Done():
			telemetry.RecordHostWait(ctx, telemetry.LimitConcurrency, time.Since(waiting))
			g.leave(host, st, false)
			return nil, ctx.Err()
		}
	}
	if !waiting.IsZero() {
		telemetry.RecordHostWait(ctx, telemetry.LimitConcurrency, time.Since(waiting))
	}
	release = func() { g.leave(host, st, true) }
	if limiter != nil {
		if err := g.wait(ctx, limiter); err != nil {
			release()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("%w (%g requests/s to %s)", errRateDeadline, perSec, host)
		}
	}
	return release, nil
}

// rateLimiter returns the host's limiter at perSec, or nil for no limit.
// Calls asking for different rates share one bucket; the latest rate wins.
// Called with g.mu held.
func (st *hostState) rateLimiter(now time.Time, perSec float64) *rate.Limiter {
	if perSec <= 0 {
		return nil
	}
	if st.limiter == nil {
		st.limiter = rate.NewLimiter(rate.Limit(perSec), 1)
	} else if st.limiter.Limit() != rate.Limit(perSec) {
		st.limiter.SetLimitAt(now, rate.Limit(perSec))
	}
	return st.limiter
}

// wait takes a token from lim, waiting on the gate's clock. A wait that
// would outlast ctx's deadline is not begun: errRateDeadline, at once.
func (g *hostGate) wait(ctx context.Context, lim *rate.Limiter) error {
	now := g.clock.Now()
	r := lim.ReserveN(now, 1)
	if !r.OK() {
		return errRateDeadline
	}
	d := r.DelayFrom(now)
	if d <= 0 {
		return nil
	}
	// The deadline is wall-clock time whatever clock the limits use.
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < d {
		r.CancelAt(now)
		return errRateDeadline
	}
	select {
	case <-g.clock.After(d):
		telemetry.RecordHostWait(ctx, telemetry.LimitRate, d)
		return nil
	case <-ctx.Done():
		r.CancelAt(g.clock.Now())
		return ctx.Err()
	}
}

func (g *hostGate) leave(host string, st *hostState, held bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if held {
		st.active--
		close(st.freed)
		st.freed = make(chan struct{})
	}
	st.refs--
	if st.idle(g.clock.Now()) {
		delete(g.hosts, host)
	}
}

// idle reports whether forgetting the host changes nothing: no call uses
// it and its token bucket is full, as a new one would be.
func (st *hostState) idle(now time.Time) bool {
	return st.refs == 0 && (st.limiter == nil || st.limiter.TokensAt(now) >= float64(st.limiter.Burst()))
}

// sweep forgets idle hosts whose buckets have refilled since their last
// call. Called with g.mu held.
func (g *hostGate) sweep() {
	now := g.clock.Now()
	for host, st := range g.hosts {
		if st.idle(now) {
			delete(g.hosts, host)
		}
	}
}
