package mapsite

import (
	"context"
	"sync"
	"time"
)

// pacer keeps a delay between two requests to one host, counted from the
// end of one to the start of the next: however long an answer takes to
// arrive, the host then gets the whole delay to itself. Hosts are names
// without the port, as the fetcher's per-host limits count them.
type pacer struct {
	delay time.Duration
	mu    sync.Mutex
	last  map[string]time.Time
	// longer holds the hosts that asked for a longer delay (Crawl-delay).
	longer map[string]time.Duration
}

func newPacer(delay time.Duration) *pacer {
	return &pacer{delay: delay, last: map[string]time.Time{}, longer: map[string]time.Duration{}}
}

// atLeast makes host's delay d when that is longer than the map's.
func (p *pacer) atLeast(host string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if d > p.delay && d > p.longer[host] {
		p.longer[host] = d
	}
}

// do waits the host's turn, runs f, and starts the host's next delay when
// f returns.
func (p *pacer) do(ctx context.Context, host string, f func() error) error {
	p.mu.Lock()
	delay := max(p.delay, p.longer[host])
	next := p.last[host].Add(delay)
	p.mu.Unlock()
	if wait := time.Until(next); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	err := f()
	p.mu.Lock()
	p.last[host] = time.Now()
	p.mu.Unlock()
	return err
}
