package extract

import (
	"context"

	"distill.dev/services/extractor/internal/halt"
)

// The context checks live in halt, which the pick package shares; these
// names keep the extractor's loops as they were.

// tickEvery is how many steps pass between two looks at the context.
const tickEvery = halt.Every

type ticker struct{ *halt.Ticker }

func newTicker(ctx context.Context) *ticker { return &ticker{halt.NewTicker(ctx)} }

func (t *ticker) stop() bool { return t.Stop() }

func (t *ticker) err(what string) error { return t.Err(what) }

// stopped turns an ended context into the failure callers branch on:
// Timeout when its deadline passed, Canceled otherwise. It returns nil
// while ctx is live.
func stopped(ctx context.Context, what string) error { return halt.Stopped(ctx, what) }
