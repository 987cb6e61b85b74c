package extract

import (
	"context"
	"errors"

	"distill.dev/proto/failure"
)

// tickEvery is how many steps of a loop pass between two looks at the
// context: often enough that a cancelled extraction stops within
// milliseconds, rarely enough that looking costs nothing measurable.
const tickEvery = 256

// ticker lets a long loop over a page notice that its context has ended.
type ticker struct {
	ctx     context.Context
	n       int
	stopped bool
}

func newTicker(ctx context.Context) *ticker { return &ticker{ctx: ctx} }

// stop reports whether the loop should stop; once true it stays true.
func (t *ticker) stop() bool {
	if t.stopped {
		return true
	}
	t.n++
	if t.n%tickEvery == 0 && t.ctx.Err() != nil {
		t.stopped = true
	}
	return t.stopped
}

// err is the typed error for a loop that stopped while doing what, or nil.
func (t *ticker) err(what string) error {
	if !t.stopped {
		return nil
	}
	return stopped(t.ctx, what)
}

// stopped turns an ended context into the failure callers branch on:
// Timeout when its deadline passed, Canceled otherwise. It returns nil
// while ctx is live.
func stopped(ctx context.Context, what string) error {
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
