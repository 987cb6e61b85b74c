package crawl

import (
	"context"
	"sync"
	"time"
)

// Pacer hands out turns to send a request to a host. Every worker of a
// crawl asks the same Pacer, so more workers never mean more load on a
// site: in one process a LocalPacer, across a cluster one that keeps each
// host's next turn where every process sees it.
type Pacer interface {
	// Turn waits until a request to host may start: at least interval
	// after the start of the last one any worker was given a turn for.
	Turn(ctx context.Context, host string, interval time.Duration) error
	// Sent says the request a turn was given for went out at at: the next
	// turn is interval after that, when that is later than the turn
	// planned (a request that waited for a busy machine, a dial).
	Sent(host string, interval time.Duration, at time.Time)
}

// Spacing is how far apart a pacer sets two turns on a host whose
// interval is interval: a twentieth more, for what it cannot see, the
// time between a request leaving and the site reading it, which a busy
// machine or network stretches for one request and not the next. The
// site sees the interval, not a little less.
func Spacing(interval time.Duration) time.Duration {
	return interval + interval/20
}

// LocalPacer is a Pacer for the workers of one process. A turn is
// claimed under a lock at the moment it is taken, never reserved ahead: a
// worker whose timer fires late (a busy machine) finds the turn taken and
// waits again, rather than starting close behind the one before it.
type LocalPacer struct {
	mu   sync.Mutex
	next map[string]time.Time
}

// NewLocalPacer returns a LocalPacer with no host waiting.
func NewLocalPacer() *LocalPacer {
	return &LocalPacer{next: map[string]time.Time{}}
}

// Turn waits host's next turn. Waiting callers are not served in order:
// whoever wakes first once the host is free takes it.
func (p *LocalPacer) Turn(ctx context.Context, host string, interval time.Duration) error {
	for {
		p.mu.Lock()
		now := time.Now()
		next := p.next[host]
		if !next.After(now) {
			p.next[host] = now.Add(Spacing(interval))
			p.mu.Unlock()
			return ctx.Err()
		}
		p.mu.Unlock()
		if err := sleepUntil(ctx, next); err != nil {
			return err
		}
	}
}

// Sent moves host's next turn to interval after at, if that is later.
func (p *LocalPacer) Sent(host string, interval time.Duration, at time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if next := at.Add(Spacing(interval)); next.After(p.next[host]) {
		p.next[host] = next
	}
}

// sleepUntil waits until at or the end of ctx.
func sleepUntil(ctx context.Context, at time.Time) error {
	wait := time.Until(at)
	if wait <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
