// Package pace is distill's politeness to a host: how far apart two
// requests to one host go out, however many workers, pages and processes
// send them.
//
// A delay is the shortest time from one request to a host being written
// to the next one to that host starting. It is the same delay whoever
// keeps it: a crawl's --delay, a map's --delay, a site's Crawl-delay
// (PerSecond turns one into the fetcher's rate limit, for the hops inside
// one fetch). A host asked for two delays keeps the longer.
//
// A Pacer keeps it: Turn waits for the host's turn and holds the host,
// and Sent says when the turn's request was written, which frees the
// host until Spacing(delay) after it. A caller that cannot see the write
// (its fetch runs in another process) reports when the answer came, which
// is after it, so the delay holds all the same. In one process the Pacer
// is a Local; across a cluster, one that keeps each host's next turn
// where every process sees it (crawljs.Pacer).
package pace

import (
	"context"
	"sync"
	"time"
)

// Pacer hands out turns to send a request to a host. Every worker of a
// crawl asks the same Pacer, so more workers never mean more load on a
// site.
type Pacer interface {
	// Turn waits until a request to host may start: Spacing(delay) after
	// the last request any worker was given a turn for went out. The
	// host is held from the turn until Sent says the request went out
	// (or MaxHold passes, for a holder that died).
	Turn(ctx context.Context, host string, delay time.Duration) error
	// Sent says the request of the last turn on host was written at at
	// (zero: it never was), which frees the host until Spacing(delay)
	// after it.
	Sent(ctx context.Context, host string, delay time.Duration, at time.Time)
}

// Spacing is how far apart a pacer sets two requests to a host whose
// delay is delay: a twentieth more, for what it cannot see, the time
// between a request leaving and the site reading it.
func Spacing(delay time.Duration) time.Duration {
	return delay + delay/20
}

// MaxHold is how long a turn holds its host when its request is never
// reported sent: its worker died, or a bug forgot to.
const MaxHold = 10 * time.Second

// PerSecond is delay as a rate of requests a second, the fetcher's
// per-host rate limit (RateLimit), which paces the hops inside one fetch;
// 0 for no delay.
func PerSecond(delay time.Duration) float64 {
	if delay <= 0 {
		return 0
	}
	return 1 / delay.Seconds()
}

// Local is a Pacer for the workers of one process. A turn is taken under
// a lock and holds the host until its request is written: a worker held
// up between its turn and its request (a busy machine, a dial) does not
// let the next one start close behind it.
type Local struct {
	mu    sync.Mutex
	hosts map[string]*localHost
}

type localHost struct {
	next time.Time // no turn before
	// held is when the hold of the last turn ends, zero when not held.
	held    time.Time
	changed chan struct{}
}

// NewLocal returns a Local with no host waiting.
func NewLocal() *Local {
	return &Local{hosts: map[string]*localHost{}}
}

func (p *Local) host(name string) *localHost {
	h := p.hosts[name]
	if h == nil {
		h = &localHost{changed: make(chan struct{})}
		p.hosts[name] = h
	}
	return h
}

// Turn waits for host's next turn and holds the host. Waiting callers are
// not served in order: whoever wakes first once the host is free takes it.
func (p *Local) Turn(ctx context.Context, host string, delay time.Duration) error {
	if delay <= 0 {
		// No pace to keep: nothing to hold.
		return ctx.Err()
	}
	for {
		p.mu.Lock()
		h := p.host(host)
		now := time.Now()
		until := h.next
		if h.held.After(now) {
			until = h.held
		}
		if !until.After(now) {
			h.held = now.Add(MaxHold + Spacing(delay))
			h.next = now.Add(Spacing(delay))
			p.mu.Unlock()
			return ctx.Err()
		}
		changed := h.changed
		p.mu.Unlock()
		t := time.NewTimer(time.Until(until))
		select {
		case <-t.C:
		case <-changed:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		t.Stop()
	}
}

// Sent frees host from Spacing(delay) after at (after now, for a request
// that was never written: it may have been in part).
func (p *Local) Sent(_ context.Context, host string, delay time.Duration, at time.Time) {
	if delay <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if at.IsZero() {
		at = time.Now()
	}
	h := p.host(host)
	h.held = time.Time{}
	if next := at.Add(Spacing(delay)); next.After(h.next) {
		h.next = next
	}
	close(h.changed)
	h.changed = make(chan struct{})
}
