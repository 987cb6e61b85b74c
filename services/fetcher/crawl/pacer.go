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
}

// LocalPacer is a Pacer for the workers of one process. Turns are given
// in the order they are asked for: each caller reserves the next free
// start time under a lock and then sleeps until it, so two callers never
// share a window however they are scheduled.
type LocalPacer struct {
	mu   sync.Mutex
	next map[string]time.Time
}

// NewLocalPacer returns a LocalPacer with no host waiting.
func NewLocalPacer() *LocalPacer {
	return &LocalPacer{next: map[string]time.Time{}}
}

// Turn waits host's next turn. A caller that gives up (ctx ends) leaves
// its turn unused rather than moving the others up: a window that was
// promised stays empty.
func (p *LocalPacer) Turn(ctx context.Context, host string, interval time.Duration) error {
	p.mu.Lock()
	now := time.Now()
	at := now
	if next := p.next[host]; next.After(now) {
		at = next
	}
	p.next[host] = at.Add(interval)
	p.mu.Unlock()
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
