package extract

import (
	"context"
	"errors"
	"strconv"

	"golang.org/x/sync/semaphore"

	"distill.dev/proto/failure"
	"distill.dev/services/extractor/pdf"
	"distill.dev/services/extractor/readable"
)

// MemoryPerPageByte is what an extraction holds at its peak for each byte
// of the page, measured with BenchmarkExtractLarge (peak-RSS/page over
// dense article and table markup: 25 to 30). The tree golang.org/x/net/html
// parses is about 9 times the page and the collector lets the heap grow to
// twice what is live; the memory budget weighs each page by it.
const MemoryPerPageByte = 25

// DefaultMemoryBudget is the memory, in bytes, the extractions of one
// process may hold at once unless its operator says otherwise: five pages
// at the default max_bytes, or one of 40 MiB.
const DefaultMemoryBudget = 1 << 30

// Option configures an Extractor.
type Option func(*Extractor)

// WithMemoryBudget bounds the memory the Extractor's extractions hold at
// once to about bytes: each waits, honouring its context, until the pages
// being extracted leave room for its own. A page that alone weighs more
// than the budget runs by itself. Zero or less is no budget.
func WithMemoryBudget(bytes int64) Option {
	return func(e *Extractor) {
		if bytes > 0 {
			e.budget = semaphore.NewWeighted(bytes)
			e.budgetSize = bytes
		}
	}
}

// WithPDFCacheDir keeps the compiled PDF engine in dir, so that a later
// process reads its first PDF without compiling the engine again (see
// pdf.WithCacheDir).
func WithPDFCacheDir(dir string) Option {
	return func(e *Extractor) { e.pdfOpts = append(e.pdfOpts, pdf.WithCacheDir(dir)) }
}

// weight is what a page of n bytes counts against a budget of size.
func weight(n int, size int64) int64 {
	return min(max(int64(n), 1)*MemoryPerPageByte, size)
}

// admit waits until the budget has room for a page of n bytes and returns
// the function that gives the room back.
func (e *Extractor) admit(ctx context.Context, n int) (func(), error) {
	if e.budget == nil {
		return func() {}, nil
	}
	w := weight(n, e.budgetSize)
	if !e.budget.TryAcquire(w) {
		if e.waiting != nil {
			e.waiting()
		}
		if err := e.budget.Acquire(ctx, w); err != nil {
			return nil, e.waitFailed(ctx, err, n)
		}
	}
	e.inUse.Add(w)
	if e.admitted != nil {
		e.admitted(e.inUse.Load())
	}
	return func() {
		e.inUse.Add(-w)
		e.budget.Release(w)
	}, nil
}

// waitFailed is the error of an extraction that stopped waiting for room.
func (e *Extractor) waitFailed(ctx context.Context, err error, n int) error {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return stopped(ctx, "waiting for memory to extract a page of "+byteSize(n))
	}
	return failure.Wrap(failure.Internal, err, "extract: memory budget")
}

// byteSize says n bytes in the largest whole unit.
func byteSize(n int) string {
	switch {
	case n >= 1<<20:
		return strconv.Itoa(n>>20) + " MiB"
	case n >= 1<<10:
		return strconv.Itoa(n>>10) + " KiB"
	}
	return strconv.Itoa(n) + " bytes"
}

// WithBlockModel makes the article profile rate the blocks its rules keep
// with m instead of the embedded model; nil leaves the rules' choice as it
// is. The training command uses it to score models it has not embedded.
func WithBlockModel(m *readable.BlockModel) Option {
	return func(e *Extractor) { e.article = readable.ArticleWith(m) }
}
