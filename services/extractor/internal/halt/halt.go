// Package halt lets the extractor's long loops notice that their context
// has ended and turns that into the failure callers branch on.
package halt

import (
	"context"
	"errors"

	"distill.dev/proto/failure"
)

// Every is how many steps of a loop pass between two looks at the
// context: often enough that a cancelled extraction stops within
// milliseconds, rarely enough that looking costs nothing measurable.
const Every = 256

// Ticker lets a long loop over a page notice that its context has ended.
type Ticker struct {
	ctx     context.Context
	n       int
	stopped bool
}

// NewTicker returns a Ticker watching ctx.
func NewTicker(ctx context.Context) *Ticker { return &Ticker{ctx: ctx} }

// Stop reports whether the loop should stop; once true it stays true.
func (t *Ticker) Stop() bool {
	if t.stopped {
		return true
	}
	t.n++
	if t.n%Every == 0 && t.ctx.Err() != nil {
		t.stopped = true
	}
	return t.stopped
}

// Stopped reports whether Stop has returned true.
func (t *Ticker) Stopped() bool { return t.stopped }

// Err is the typed error for a loop that stopped while doing what, or nil.
func (t *Ticker) Err(what string) error {
	if !t.stopped {
		return nil
	}
	return Stopped(t.ctx, what)
}

// Stopped turns an ended context into the failure callers branch on:
// Timeout when its deadline passed, Canceled otherwise. It returns nil
// while ctx is live.
func Stopped(ctx context.Context, what string) error {
	err := ctx.Err()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		return failure.Wrap(failure.Timeout, err, "extract: deadline passed while %s", what)
	default:
		return failure.Wrap(failure.Canceled, err, "extract: canceled while %s", what)
	}
}
