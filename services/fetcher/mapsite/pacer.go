package mapsite

import (
	"context"
	"sync"
	"time"

	"distill.dev/services/fetcher/pace"
)

// pacer paces a map's requests to each host as package pace keeps a
// delay: the map's own, or a host's Crawl-delay when that is longer. A
// map's fetches may run in another process, where it cannot see when a
// request is written: each turn is reported sent when its answer came,
// which is after it. Hosts are names without the port, as the fetcher's
// per-host limits count them.
type pacer struct {
	delay time.Duration
	turns *pace.Local
	mu    sync.Mutex
	// longer holds the hosts that asked for a longer delay (Crawl-delay).
	longer map[string]time.Duration
	// answered is when each host's last answer came, kept with no delay
	// too: a Crawl-delay learnt from an answer counts from it.
	answered map[string]time.Time
}

func newPacer(delay time.Duration) *pacer {
	return &pacer{delay: delay, turns: pace.NewLocal(), longer: map[string]time.Duration{}, answered: map[string]time.Time{}}
}

// atLeast makes host's delay d when that is longer than the map's, from
// the host's last answer on: the robots.txt that asked for it.
func (p *pacer) atLeast(ctx context.Context, host string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if d <= p.delay || d <= p.longer[host] {
		return
	}
	p.longer[host] = d
	if at, ok := p.answered[host]; ok {
		p.turns.Sent(ctx, host, d, at)
	}
}

// do waits the host's turn, runs f, and reports the turn's request sent
// when f returns.
func (p *pacer) do(ctx context.Context, host string, f func() error) error {
	p.mu.Lock()
	delay := max(p.delay, p.longer[host])
	p.mu.Unlock()
	if err := p.turns.Turn(ctx, host, delay); err != nil {
		return err
	}
	err := f()
	at := time.Now()
	p.mu.Lock()
	p.answered[host] = at
	p.mu.Unlock()
	p.turns.Sent(ctx, host, delay, at)
	return err
}
