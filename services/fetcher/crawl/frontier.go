package crawl

import "container/heap"

// Entry is a URL the crawl has found and may read.
type Entry struct {
	// URL is the link in siteurl's one spelling; Key its identity.
	URL string `json:"url"`
	Key string `json:"key"`
	// Depth is how many links from the start page reach it.
	Depth int `json:"depth"`
	// Score orders a crawl with a query: higher first.
	Score float64 `json:"score,omitempty"`
	// Seq is the order the URL was found in, which breaks ties: without a
	// query the crawl is breadth first, found first read first.
	Seq int64 `json:"seq"`
}

// frontier is the queue of URLs found and not yet started, and the
// identity of every URL found, so that none is queued twice. Breadth first
// orders by depth, then by discovery; best first by score, then depth,
// then discovery.
type frontier struct {
	bestFirst bool
	queue     entryHeap
	// found maps every key ever queued to its entry while it waits, or nil
	// once it was started.
	found map[string]*Entry
	seq   int64
}

func newFrontier(bestFirst bool) *frontier {
	f := &frontier{bestFirst: bestFirst, found: map[string]*Entry{}}
	f.queue.less = f.less
	return f
}

func (f *frontier) less(a, b *Entry) bool {
	if f.bestFirst && a.Score != b.Score {
		return a.Score > b.Score
	}
	if a.Depth != b.Depth {
		return a.Depth < b.Depth
	}
	return a.Seq < b.Seq
}

// known reports whether key was ever queued.
func (f *frontier) known(key string) bool {
	_, ok := f.found[key]
	return ok
}

// push queues e unless its key is known. A URL found again while it waits
// keeps the better of its two scores and depths: a link that a relevant
// page also points to moves up. It reports whether the queue changed.
func (f *frontier) push(e Entry) bool {
	if old, ok := f.found[e.Key]; ok {
		if old == nil {
			return false
		}
		changed := false
		if e.Score > old.Score {
			old.Score, changed = e.Score, true
		}
		if e.Depth < old.Depth {
			old.Depth, changed = e.Depth, true
		}
		if changed {
			heap.Fix(&f.queue, f.queue.index(old))
		}
		return changed
	}
	if e.Seq == 0 {
		f.seq++
		e.Seq = f.seq
	} else {
		f.seq = max(f.seq, e.Seq)
	}
	p := &e
	f.found[e.Key] = p
	heap.Push(&f.queue, p)
	return true
}

// pop takes the next URL to read, marking it started.
func (f *frontier) pop() (Entry, bool) {
	if f.queue.Len() == 0 {
		return Entry{}, false
	}
	e := heap.Pop(&f.queue).(*Entry)
	f.found[e.Key] = nil
	return *e, true
}

// started marks key read or being read without queueing it (a page
// reached by a redirect, or one a resumed crawl finished).
func (f *frontier) started(key string) {
	if e := f.found[key]; e != nil {
		heap.Remove(&f.queue, f.queue.index(e))
	}
	f.found[key] = nil
}

// requeue puts back a page that was started but never finished (a
// resumed crawl's pages in flight when it stopped).
func (f *frontier) requeue(e Entry) {
	delete(f.found, e.Key)
	f.push(e)
}

func (f *frontier) len() int { return f.queue.Len() }

// entryHeap is a heap of entries that can find an entry's position, for
// heap.Fix when a URL's score rises.
type entryHeap struct {
	items []*Entry
	pos   map[*Entry]int
	less  func(a, b *Entry) bool
}

func (h *entryHeap) Len() int           { return len(h.items) }
func (h *entryHeap) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *entryHeap) Swap(i, j int) {
	h.items[i], h.items[j] = h.items[j], h.items[i]
	h.pos[h.items[i]] = i
	h.pos[h.items[j]] = j
}
func (h *entryHeap) Push(x any) {
	if h.pos == nil {
		h.pos = map[*Entry]int{}
	}
	e := x.(*Entry)
	h.pos[e] = len(h.items)
	h.items = append(h.items, e)
}
func (h *entryHeap) Pop() any {
	n := len(h.items)
	e := h.items[n-1]
	h.items = h.items[:n-1]
	delete(h.pos, e)
	return e
}
func (h *entryHeap) index(e *Entry) int { return h.pos[e] }
