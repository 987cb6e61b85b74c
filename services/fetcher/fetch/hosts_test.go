package fetch

import (
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

// frozenClock never moves and fires every timer at once, recording how
// long it was asked to wait. Waits are then offsets from one instant: the
// n-th request the rate limit queues waits n intervals.
type frozenClock struct {
	now   time.Time
	mu    sync.Mutex
	waits []time.Duration
}

func newFrozenClock() *frozenClock {
	return &frozenClock{now: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *frozenClock) Now() time.Time { return c.now }

func (c *frozenClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	ch := make(chan time.Time, 1)
	ch <- c.now.Add(d)
	return ch
}

// wantWaits checks the waits, in any order, within a millisecond of the
// limiter's float arithmetic.
func (c *frozenClock) wantWaits(t *testing.T, want []time.Duration) {
	t.Helper()
	c.mu.Lock()
	got := slices.Clone(c.waits)
	c.mu.Unlock()
	slices.Sort(got)
	if len(got) != len(want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
	for i := range got {
		if d := got[i] - want[i]; d < -time.Millisecond || d > time.Millisecond {
			t.Fatalf("waits %v, want %v", got, want)
		}
	}
}

func TestFetchRateLimit(t *testing.T) {
	t.Parallel()
	ts, hits := serve(t, func(w http.ResponseWriter, r *http.Request) { html(w, 200, page) })
	clock := newFrozenClock()
	f := newFetcher(t, WithClock(clock))
	const perSec, calls = 20.0, 5
	var wg sync.WaitGroup
	for range calls {
		wg.Go(func() {
			o := local()
			o.RateLimit = perSec
			if _, err := get(t, f, ts.URL, o); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := hits.Load(); n != calls {
		t.Fatalf("%d requests, want %d", n, calls)
	}
	// Five simultaneous calls at 20/s: one goes at once, the others 50 ms
	// apart.
	clock.wantWaits(t, []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 150 * time.Millisecond, 200 * time.Millisecond})
}

// Calls to different hosts do not wait for each other's tokens.
func TestFetchRateLimitPerHost(t *testing.T) {
	t.Parallel()
	ts, _ := serve(t, func(w http.ResponseWriter, r *http.Request) { html(w, 200, page) })
	clock := newFrozenClock()
	f := newFetcher(t, WithClock(clock))
	o := local()
	o.RateLimit = 1
	// 127.0.0.1 and localhost are one machine, but per-host limits count
	// by name, as a site's operators see them.
	mustGet(t, f, ts.URL, o)
	mustGet(t, f, "http://localhost:"+ts.URL[len("http://127.0.0.1:"):], o)
	clock.wantWaits(t, nil)
	mustGet(t, f, ts.URL, o)
	clock.wantWaits(t, []time.Duration{time.Second})
}

// Retry waits are taken on the same clock: a long Retry-After is honoured
// without the test sleeping through it.
func TestFetchRetryAfterOnClock(t *testing.T) {
	t.Parallel()
	seq := &statusSequence{statuses: []int{503, 429}, header: http.Header{"Retry-After": {"7"}}}
	ts, _ := serve(t, seq.ServeHTTP)
	clock := newFrozenClock()
	resp := mustGet(t, newFetcher(t, WithClock(clock)), ts.URL, local())
	if resp.GetStatus() != 200 || len(seq.requests()) != 3 {
		t.Fatalf("status %d after %d requests, want 200 after 3", resp.GetStatus(), len(seq.requests()))
	}
	clock.wantWaits(t, []time.Duration{7 * time.Second, 7 * time.Second})
}
