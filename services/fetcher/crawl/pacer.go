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
	// Turn waits until a request to host may start: Spacing(interval)
	// after the last request any worker was given a turn for went out.
	// The host is held from the turn until Sent says the request went
	// out (or MaxHold passes, for a holder that died).
	Turn(ctx context.Context, host string, interval time.Duration) error
	// Sent says the request of the last turn on host was written at at
	// (zero: it never was), which frees the host until Spacing(interval)
	// after it.
	Sent(host string, interval time.Duration, at time.Time)
}

// Spacing is how far apart a pacer sets two requests to a host whose
// interval is interval: a twentieth more, for what it cannot see, the
// time between a request leaving and the site reading it.
func Spacing(interval time.Duration) time.Duration {
	return interval + interval/20
}

// MaxHold is how long a turn holds its host when its request is never
// reported sent: its worker died, or a bug forgot to.
const MaxHold = 10 * time.Second

// LocalPacer is a Pacer for the workers of one process. A turn is taken
// under a lock and holds the host until its request is written: a worker
// held up between its turn and its request (a busy machine, a dial) does
// not let the next one start close behind it.
type LocalPacer struct {
	mu    sync.Mutex
	hosts map[string]*localHost
}

type localHost struct {
	next time.Time // no turn before
	// held is when the hold of the last turn ends, zero when not held.
	held    time.Time
	changed chan struct{}
}

// NewLocalPacer returns a LocalPacer with no host waiting.
func NewLocalPacer() *LocalPacer {
	return &LocalPacer{hosts: map[string]*localHost{}}
}

func (p *LocalPacer) host(name string) *localHost {
	h := p.hosts[name]
	if h == nil {
		h = &localHost{changed: make(chan struct{})}
		p.hosts[name] = h
	}
	return h
}

// Turn waits for host's next turn and holds the host. Waiting callers are
// not served in order: whoever wakes first once the host is free takes it.
func (p *LocalPacer) Turn(ctx context.Context, host string, interval time.Duration) error {
	if interval <= 0 {
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
			h.held = now.Add(MaxHold + Spacing(interval))
			h.next = now.Add(Spacing(interval))
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

// Sent frees host from Spacing(interval) after at (after now, for a
// request that was never written: it may have been in part).
func (p *LocalPacer) Sent(host string, interval time.Duration, at time.Time) {
	if interval <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if at.IsZero() {
		at = time.Now()
	}
	h := p.host(host)
	h.held = time.Time{}
	if next := at.Add(Spacing(interval)); next.After(h.next) {
		h.next = next
	}
	close(h.changed)
	h.changed = make(chan struct{})
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
