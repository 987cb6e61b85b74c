package tokens

import (
	"math"
	"unicode/utf8"
)

// maxPiece bounds the bytes merged as one pre-token; see the package
// comment.
const maxPiece = 4096

// heapFrom is the piece length from which merging keeps its candidates in
// a heap: rescanning every part after each merge costs O(n²).
const heapFrom = 64

// pieceTokens returns how many tokens byte-pair encoding makes of piece.
func (e *encoder) pieceTokens(piece string) int {
	if _, ok := e.ranks[piece]; ok {
		return 1
	}
	if len(piece) <= maxPiece {
		return e.merge(piece)
	}
	at := maxPiece
	for !utf8.RuneStart(piece[at]) {
		at--
	}
	n := e.merge(piece[:at])
	// Scaled, rounding up, from the tokens per byte of the first part.
	return (n*len(piece) + at - 1) / at
}

// merge applies o200k_base's merges to piece, the lowest-ranked adjacent
// pair first and the leftmost among equals, and returns how many tokens
// are left.
func (e *encoder) merge(piece string) int {
	switch {
	case len(piece) <= 1:
		return len(piece)
	case len(piece) >= heapFrom:
		return e.mergeHeap(piece)
	}
	return e.mergeScan(piece)
}

// mergeScan is merge for short pieces, finding each merge by a scan.
func (e *encoder) mergeScan(piece string) int {
	buf := e.scratch(len(piece) + 1)
	defer e.parts.Put(buf)
	parts := (*buf)[:len(piece)+1]
	for i := range parts {
		parts[i] = part{start: i, rank: math.MaxUint32}
	}
	// rank is the rank of the token parts[i] and its next skip+1 parts
	// would merge into.
	rank := func(i, skip int) uint32 {
		if i+skip+2 >= len(parts) {
			return math.MaxUint32
		}
		if r, ok := e.ranks[piece[parts[i].start:parts[i+skip+2].start]]; ok {
			return r
		}
		return math.MaxUint32
	}
	for i := 0; i+2 < len(parts); i++ {
		parts[i].rank = rank(i, 0)
	}
	for len(parts) > 1 {
		best, at := uint32(math.MaxUint32), -1
		for i, p := range parts[:len(parts)-1] {
			if p.rank < best {
				best, at = p.rank, i
			}
		}
		if at < 0 {
			break
		}
		parts[at].rank = rank(at, 1)
		if at > 0 {
			parts[at-1].rank = rank(at-1, 1)
		}
		parts = append(parts[:at+1], parts[at+2:]...)
	}
	return len(parts) - 1
}

// part is where a part of a piece starts and the rank of merging it with
// the next part.
type part struct {
	start int
	rank  uint32
}

func (e *encoder) scratch(n int) *[]part {
	if p, ok := e.parts.Get().(*[]part); ok && cap(*p) >= n {
		return p
	}
	s := make([]part, n, max(n, heapFrom+1))
	return &s
}

// mergeHeap is merge in O(n log n): the parts form a linked list and the
// pairs that can merge a min-heap ordered by rank, then offset.
func (e *encoder) mergeHeap(piece string) int {
	n := int32(len(piece))
	type node struct {
		prev, next int32
		rank       uint32
	}
	nodes := make([]node, n+1)
	for i := range nodes {
		nodes[i] = node{prev: int32(i) - 1, next: int32(i) + 1, rank: math.MaxUint32}
	}
	nodes[n].next = -1
	rankOf := func(i int32) uint32 {
		j := nodes[i].next
		if j < 0 {
			return math.MaxUint32
		}
		k := nodes[j].next
		if k < 0 {
			return math.MaxUint32
		}
		if r, ok := e.ranks[piece[i:k]]; ok {
			return r
		}
		return math.MaxUint32
	}

	h := pairHeap(make([]pair, 0, n))
	for i := int32(0); i+2 <= n; i++ {
		if r := rankOf(i); r != math.MaxUint32 {
			nodes[i].rank = r
			h = append(h, pair{r, i})
		}
	}
	h.init()
	tokens := int(n)
	for len(h) > 0 {
		top := h.pop()
		i := top.at
		if nodes[i].rank != top.rank {
			continue // stale: a merge since changed this pair
		}
		j := nodes[i].next
		k := nodes[j].next
		nodes[j].rank = math.MaxUint32
		nodes[i].next = k
		if k >= 0 {
			nodes[k].prev = i
		}
		tokens--
		for _, b := range [2]int32{i, nodes[i].prev} {
			if b < 0 {
				continue
			}
			nodes[b].rank = rankOf(b)
			if nodes[b].rank != math.MaxUint32 {
				h.push(pair{nodes[b].rank, b})
			}
		}
	}
	return tokens
}

// pair is a merge candidate: the rank of the token it makes and the offset
// of its first part.
type pair struct {
	rank uint32
	at   int32
}

type pairHeap []pair

func (h pairHeap) less(a, b int) bool {
	if h[a].rank != h[b].rank {
		return h[a].rank < h[b].rank
	}
	return h[a].at < h[b].at
}

func (h pairHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

func (h *pairHeap) push(p pair) {
	*h = append(*h, p)
	h.up(len(*h) - 1)
}

func (h *pairHeap) pop() pair {
	old := *h
	top := old[0]
	last := len(old) - 1
	old[0] = old[last]
	*h = old[:last]
	h.down(0)
	return top
}

func (h pairHeap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			return
		}
		h[i], h[parent] = h[parent], h[i]
		i = parent
	}
}

func (h pairHeap) down(i int) {
	for {
		child := 2*i + 1
		if child >= len(h) {
			return
		}
		if right := child + 1; right < len(h) && h.less(right, child) {
			child = right
		}
		if !h.less(child, i) {
			return
		}
		h[i], h[child] = h[child], h[i]
		i = child
	}
}
