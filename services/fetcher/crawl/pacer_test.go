package crawl

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestLocalPacerSpacesTurns asks for turns from many goroutines at once:
// the turns on one host are at least the interval apart (less half of
// it, for a loaded machine's timers), and another host does not wait
// behind them.
func TestLocalPacerSpacesTurns(t *testing.T) {
	p := NewLocalPacer()
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
			mu.Lock()
			times = append(times, time.Now())
			mu.Unlock()
		})
	}
	wg.Go(func() {
		p.Turn(t.Context(), "b.example", interval)
		other = time.Since(start)
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

func TestLocalPacerGivesUpWithItsContext(t *testing.T) {
	p := NewLocalPacer()
	p.Turn(t.Context(), "a.example", time.Hour)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := p.Turn(ctx, "a.example", time.Hour); err == nil {
		t.Errorf("Turn with an ended context waited and returned nil")
	}
}

// TestLocalPacerCountsFromTheSend: a request that went out later than its
// turn (a dial, a busy machine) pushes the next turn to an interval after
// it left; one that went out on time changes nothing.
func TestLocalPacerCountsFromTheSend(t *testing.T) {
	p := NewLocalPacer()
	if err := p.Turn(t.Context(), "a.example", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	late := time.Now().Add(time.Hour)
	p.Sent("a.example", time.Millisecond, late)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := p.Turn(ctx, "a.example", time.Millisecond); err == nil {
		t.Errorf("the next turn came before an interval after the late request")
	}
	q := NewLocalPacer()
	if err := q.Turn(t.Context(), "a.example", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	q.Sent("a.example", time.Millisecond, time.Now().Add(-time.Hour))
	ctx2, cancel2 := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel2()
	if err := q.Turn(ctx2, "a.example", time.Millisecond); err != nil {
		t.Errorf("a send reported early held the host: %v", err)
	}
}
