package extract

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
)

// budgetPage is a page of about n bytes.
func budgetPage(n int) *internalv1.ExtractRequest {
	body := "<html><body><main><h1>Budget</h1>" + strings.Repeat("<p>A paragraph that fills the page up to its size.</p>", n/53) + "</main></body></html>"
	return htmlReq(body, nil)
}

// Extractions of pages that together weigh more than the budget run a
// budget's worth at a time, and every one of them succeeds.
func TestMemoryBudgetAdmitsABudgetsWorthAtOnce(t *testing.T) {
	t.Parallel()
	const pageBytes, pages, fit = 20 << 10, 8, 3
	req := budgetPage(pageBytes)
	size := weight(len(req.GetHtml()), 1<<62) * fit
	e := New(newExtractor().logger, WithMemoryBudget(size))

	// Each admitted extraction waits at the gate until the test has seen
	// the budget full, so that the others queue behind it for certain.
	var mu sync.Mutex
	peak := int64(0)
	admissions := 0
	full := make(chan struct{})
	e.admitted = func(inUse int64) {
		mu.Lock()
		peak = max(peak, inUse)
		admissions++
		if admissions == fit {
			close(full)
		}
		mu.Unlock()
		<-full
	}
	var failed atomic.Int32
	var wg sync.WaitGroup
	for range pages {
		wg.Go(func() {
			if _, err := e.Extract(context.Background(), req); err != nil {
				t.Error(err)
				failed.Add(1)
			}
		})
	}
	wg.Wait()
	if failed.Load() != 0 || admissions != pages {
		t.Fatalf("%d failed, %d admitted; want all %d admitted and none failed", failed.Load(), admissions, pages)
	}
	if peak > size {
		t.Errorf("extractions held %d bytes of budget at once, over the budget of %d", peak, size)
	}
	if peak < size {
		t.Errorf("at most %d bytes of budget were held at once, want the full %d: the gate let too few through", peak, size)
	}
}

// expiringCtx is a context whose deadline passes when expire is called:
// a deadline placed by the test, not by a clock.
type expiringCtx struct {
	context.Context
	done    chan struct{}
	expired atomic.Bool
}

func newExpiringCtx() *expiringCtx {
	return &expiringCtx{Context: context.Background(), done: make(chan struct{})}
}

func (c *expiringCtx) expire() {
	if c.expired.CompareAndSwap(false, true) {
		close(c.done)
	}
}

func (c *expiringCtx) Done() <-chan struct{} { return c.done }

func (c *expiringCtx) Err() error {
	if c.expired.Load() {
		return context.DeadlineExceeded
	}
	return nil
}

// An extraction waiting for room honours its context: when its deadline
// passes while it waits, it returns a Timeout and holds nothing.
func TestMemoryBudgetWaitHonoursTheDeadline(t *testing.T) {
	t.Parallel()
	req := budgetPage(20 << 10)
	e := New(newExtractor().logger, WithMemoryBudget(weight(len(req.GetHtml()), 1<<62)))
	holding, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	e.admitted = func(int64) {
		if first.CompareAndSwap(false, true) {
			close(holding)
			<-release
		}
	}
	done := make(chan error)
	go func() {
		_, err := e.Extract(context.Background(), req)
		done <- err
	}()
	<-holding

	// The budget is full: the next extraction waits, and its deadline
	// passes as it starts to.
	ctx := newExpiringCtx()
	e.waiting = ctx.expire
	_, err := e.Extract(ctx, req)
	if !errors.Is(err, context.DeadlineExceeded) || failure.CodeOf(err) != failure.Timeout || !strings.Contains(err.Error(), "waiting for memory") {
		t.Errorf("err = %v, want Timeout while waiting for memory", err)
	}
	if !ctx.expired.Load() {
		t.Error("the extraction never waited")
	}

	e.waiting = nil
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("the admitted extraction failed: %v", err)
	}
	if _, err := e.Extract(context.Background(), req); err != nil {
		t.Errorf("after the others, an extraction failed: %v; the waiter kept budget", err)
	}
}

// A page that alone weighs more than the whole budget still runs, alone.
func TestMemoryBudgetRunsAnOversizedPageAlone(t *testing.T) {
	t.Parallel()
	e := New(newExtractor().logger, WithMemoryBudget(1<<10))
	if _, err := e.Extract(context.Background(), budgetPage(64<<10)); err != nil {
		t.Fatal(err)
	}
}
