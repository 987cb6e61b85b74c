package crawl

import (
	"context"
	"errors"
	"sync"

	"distill.dev/proto/failure"
)

// Run reads the site, calling deliver once per page as it completes, from
// one goroutine at a time. It returns when no page is left to start and
// none is in flight, when the job is canceled, or when ctx ends (then the
// pages in flight are abandoned, and a resumed crawl reads them again). A
// deliver error stops the crawl and is returned.
func (j *Job) Run(ctx context.Context, deliver func(Page) error) (Status, error) {
	defer j.Close()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var deliverMu sync.Mutex
	// used lets go of the answers the journal holds now, off the path of
	// the pages' slots; Run returns once it has.
	var wg, used sync.WaitGroup
	defer used.Wait()
	slots := make(chan struct{}, j.req.Concurrency)
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		e, ok := j.next(ctx)
		if !ok {
			<-slots
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			p, d := j.read(ctx, e)
			if ctx.Err() != nil {
				// Abandoned: not delivered, not journalled as done.
				return
			}
			if j.deliver(ctx, cancel, &deliverMu, deliver, p, d) {
				if k, ok := j.c.pages.(AnswerKeeper); ok {
					used.Go(func() { k.Used(j.id, d.Key) })
				}
			}
		}()
	}
	wg.Wait()
	st := j.Status()
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return st, cause
	}
	if err := ctx.Err(); err != nil {
		return st, failure.Wrap(failure.Canceled, err, "crawl %s", display(j.req.URL))
	}
	j.mu.Lock()
	if j.stop == "" {
		j.stop = StopDone
	}
	if !j.finished {
		j.finished = true
		stop := j.stop
		j.mu.Unlock()
		if err := j.journal.Append(ctx, Record{End: stop}); err != nil {
			return st, err
		}
	} else {
		j.mu.Unlock()
	}
	return j.Status(), nil
}

// deliver delivers p, if any, and journals d, one page at a time; it
// reports whether d reached the journal.
func (j *Job) deliver(ctx context.Context, cancel context.CancelCauseFunc, mu *sync.Mutex, deliver func(Page) error, p *Page, d *Done) bool {
	mu.Lock()
	defer mu.Unlock()
	if ctx.Err() != nil {
		return false
	}
	if p != nil {
		// Counted done from the moment it is handed over: a caller that
		// streams it on (a hub's output) may have it read before deliver
		// returns, and a status asked for then counts it.
		j.mu.Lock()
		j.handing++
		j.mu.Unlock()
		if err := deliver(*p); err != nil {
			j.mu.Lock()
			j.handing--
			j.mu.Unlock()
			cancel(err)
			return false
		}
	}
	if err := j.finish(ctx, d, p != nil); err != nil {
		cancel(err)
		return false
	}
	return true
}

// next waits for the next page to start: it returns false when the crawl
// is to start no more.
func (j *Job) next(ctx context.Context) (Entry, bool) {
	for {
		j.mu.Lock()
		if j.finished {
			j.mu.Unlock()
			return Entry{}, false
		}
		if j.stop == "" && j.req.MaxPages > 0 && j.started >= j.req.MaxPages {
			j.stop = StopMaxPages
		}
		if j.stop != "" {
			j.mu.Unlock()
			return Entry{}, false
		}
		if e, ok := j.front.pop(); ok {
			j.started++
			j.inflight[e.Key] = e
			j.mu.Unlock()
			if err := j.journal.Append(ctx, Record{Start: &e}); err != nil {
				j.note("crawl state: %v", err)
			}
			return e, true
		}
		if len(j.inflight) == 0 {
			j.mu.Unlock()
			return Entry{}, false
		}
		changed := j.changed
		j.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return Entry{}, false
		}
	}
}

// finish journals a page's outcome and wakes the scheduler; handed says
// the page was handed over, and counted done since. The record is written
// even if ctx ends meanwhile: the page may have reached the caller.
func (j *Job) finish(ctx context.Context, d *Done, handed bool) error {
	err := j.journal.Append(context.WithoutCancel(ctx), Record{Done: d})
	j.mu.Lock()
	defer j.mu.Unlock()
	if handed {
		j.handing--
	}
	delete(j.inflight, d.Key)
	j.count(d)
	for _, e := range d.Queued {
		j.queue(e)
	}
	j.wake()
	return err
}
