package pace

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestLocalSpacesTurns asks for turns from many goroutines at once:
// the turns on one host are at least the interval apart (less half of
// it, for a loaded machine's timers), and another host does not wait
// behind them.
func TestLocalSpacesTurns(t *testing.T) {
	p := NewLocal()
	const interval = 50 * time.Millisecond
	var mu sync.Mutex
	var times []time.Time
	var other time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	for range 6 {
		wg.Go(func() {
			if err := p.Turn(t.Context(), "a.example", interval); err != nil {
				t.Error(err)
			}
			now := time.Now()
			p.Sent(t.Context(), "a.example", interval, now)
			mu.Lock()
			times = append(times, now)
			mu.Unlock()
		})
	}
	wg.Go(func() {
		p.Turn(t.Context(), "b.example", interval)
		other = time.Since(start)
		p.Sent(t.Context(), "b.example", interval, time.Now())
	})
	wg.Wait()
	slices.SortFunc(times, func(a, b time.Time) int { return a.Compare(b) })
	for i := 1; i < len(times); i++ {
		if gap := times[i].Sub(times[i-1]); gap < interval/2 {
			t.Errorf("turns %d and %d came %v apart, within %v", i-1, i, gap, interval)
		}
	}
	if last := times[len(times)-1].Sub(start); other >= last {
		t.Errorf("another host waited %v, as long as the last turn on the busy one (%v)", other, last)
	}
}

func TestLocalGivesUpWithItsContext(t *testing.T) {
	p := NewLocal()
	p.Turn(t.Context(), "a.example", time.Hour)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := p.Turn(ctx, "a.example", time.Hour); err == nil {
		t.Errorf("Turn with an ended context waited and returned nil")
	}
}

// TestLocalHoldsATurnUntilItsRequestIsOut: a turn holds its host,
// however late its request goes out, until Sent; the next turn comes an
// interval after the request, not after the turn. A request never written
// frees the host too.
func TestLocalHoldsATurnUntilItsRequestIsOut(t *testing.T) {
	p := NewLocal()
	const interval = 20 * time.Millisecond
	if err := p.Turn(t.Context(), "a.example", interval); err != nil {
		t.Fatal(err)
	}
	got := make(chan time.Time, 1)
	go func() {
		if err := p.Turn(t.Context(), "a.example", interval); err != nil {
			t.Error(err)
		}
		got <- time.Now()
	}()
	time.Sleep(10 * interval)
	select {
	case <-got:
		t.Fatalf("the host was given again while its turn was held")
	default:
	}
	sent := time.Now()
	p.Sent(t.Context(), "a.example", interval, sent)
	if next := <-got; next.Sub(sent) < interval {
		t.Errorf("the next turn came %v after the request went out, within %v", next.Sub(sent), interval)
	}
	p.Sent(t.Context(), "a.example", interval, time.Time{})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := p.Turn(ctx, "a.example", interval); err != nil {
		t.Errorf("a request never written kept the host: %v", err)
	}
}
