// Package chunk cuts distilled Markdown into chunks for a search index or a
// retrieval pipeline: whole blocks where they fit, each chunk with the
// headings in effect where it starts. Sizes are counted with the tokenizer
// the rest of distill counts with (o200k_base), not estimated, so the bound
// is a promise: no chunk has more tokens than the size asked for.
package chunk

import (
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"distill.dev/services/extractor/blocks"
	"distill.dev/services/extractor/tokens"
)

// MinSize is the smallest chunk size accepted: below it a reopened code
// fence or a repeated table header leaves no room for content.
const MinSize = 16

// Chunk is one piece of a page.
type Chunk struct {
	URL   string
	Index int
	// HeadingPath is the headings in effect where the chunk starts,
	// outermost first.
	HeadingPath []string
	Tokens      int64
	Text        string
}

// Check refuses a size and overlap that cannot make chunks.
func Check(size, overlap int64) error {
	switch {
	case size < 0 || overlap < 0:
		return fmt.Errorf("chunk size and overlap must not be negative")
	case size == 0 && overlap > 0:
		return fmt.Errorf("chunk_overlap needs chunk")
	case size > 0 && size < MinSize:
		return fmt.Errorf("chunk must be at least %d tokens, got %d", MinSize, size)
	case size > 0 && overlap*2 > size:
		return fmt.Errorf("chunk_overlap must be at most half of chunk (%d), got %d", size/2, overlap)
	}
	return nil
}

// Split cuts md into chunks of at most size tokens, each starting with up
// to overlap tokens from the end of the one before. size must pass Check.
func Split(md, url string, size, overlap int64) []Chunk {
	if size < MinSize || strings.TrimSpace(md) == "" {
		return nil
	}
	s := splitter{size: size, overlap: overlap}
	for _, b := range blocks.Parse(md) {
		s.add(b)
	}
	s.close()
	for i := range s.out {
		s.out[i].URL = url
		s.out[i].Index = i
	}
	return s.out
}

type splitter struct {
	size, overlap int64
	out           []Chunk
	// cur holds the blocks of the chunk being built; lead is the overlap
	// text it starts with, if any.
	cur  []blocks.Block
	lead string
	// est bounds the tokens of the chunk being built from above: the
	// count of its text when last counted, plus each block added since
	// and its separator. It spares a recount of the whole chunk for
	// every block, which on a page of many small blocks would cost the
	// chunk's size once per block.
	est int64
	// tail is the previous chunk's blocks, the overlap's source.
	tail []blocks.Block
}

// sepTokens is what the blank line between two blocks may add to their
// counts: "\n\n" is one token, and a boundary may cost one more.
const sepTokens = 2

// estimateMargin is how close to the size an estimate may come before
// the chunk is counted exactly.
const estimateMargin = 8

func (s *splitter) text(lead string, bs []blocks.Block) string {
	body := blocks.Join(bs)
	if lead == "" {
		return body
	}
	if body == "" {
		return lead
	}
	return lead + "\n\n" + body
}

// fits reports whether the text of lead and bs has at most size tokens,
// and sets est to its count when it does.
func (s *splitter) fits(lead string, bs []blocks.Block) bool {
	n := tokens.Count(s.text(lead, bs))
	if n > s.size {
		return false
	}
	s.est = n
	return true
}

func (s *splitter) add(b blocks.Block) {
	next := append(s.cur[:len(s.cur):len(s.cur)], b)
	if len(s.cur) > 0 {
		if est := s.est + tokens.Count(b.Text) + sepTokens; est <= s.size-estimateMargin {
			s.cur, s.est = next, est
			return
		}
	}
	if s.fits(s.lead, next) {
		s.cur = next
		return
	}
	// The block starts a new chunk; headings at the end of this one go
	// with it, since a chunk should not end on a heading.
	var carry []blocks.Block
	for len(s.cur) > 0 && s.cur[len(s.cur)-1].Kind == blocks.Heading {
		carry = append([]blocks.Block{s.cur[len(s.cur)-1]}, carry...)
		s.cur = s.cur[:len(s.cur)-1]
	}
	if len(s.cur) > 0 {
		s.close()
	}
	s.cur = carry
	next = append(s.cur[:len(s.cur):len(s.cur)], b)
	if s.lead = s.overlapText(); s.fits(s.lead, next) {
		s.cur = next
		return
	}
	s.lead = ""
	if s.fits("", next) {
		s.cur = next
		return
	}
	// Too big even alone: the block is cut into pieces, small enough
	// that the headings it carries fit with the first. Only when they
	// leave too little room do they make a chunk of their own.
	room := s.size
	if len(s.cur) > 0 {
		if r := s.size - tokens.Count(blocks.Join(s.cur)+"\n\n"); r >= MinSize {
			room = r
		}
	}
	pieces := cutBlock(b, room)
	for i, p := range pieces {
		pb := blocks.Block{Kind: b.Kind, Text: p, Path: b.Path}
		next = append(s.cur[:len(s.cur):len(s.cur)], pb)
		if i == 0 && len(s.cur) > 0 && !s.fits("", next) {
			s.close()
			next = []blocks.Block{pb}
		}
		s.cur = next
		s.est = tokens.Count(s.text("", s.cur))
		if i < len(pieces)-1 {
			s.close()
		}
	}
}

// close ends the chunk being built.
func (s *splitter) close() {
	if len(s.cur) == 0 {
		return
	}
	text := s.text(s.lead, s.cur)
	path := headingPath(s.cur)
	n := tokens.Count(text)
	if n <= s.size {
		s.out = append(s.out, Chunk{HeadingPath: path, Tokens: n, Text: text})
	} else {
		// The estimate let through a chunk its exact count finds too
		// big; never seen, but the bound is a promise, so the chunk is
		// cut as an oversized paragraph would be.
		for _, p := range cutBlock(blocks.Block{Kind: blocks.Paragraph, Text: text}, s.size) {
			s.out = append(s.out, Chunk{HeadingPath: path, Tokens: tokens.Count(p), Text: p})
		}
	}
	s.tail = s.cur
	s.cur, s.lead, s.est = nil, "", 0
}

// headingPath is the path in effect where a chunk of bs starts: the first
// block's, which for a heading ends with the heading itself.
func headingPath(bs []blocks.Block) []string {
	if p := bs[0].Path; len(p) > 0 {
		return append([]string(nil), p...)
	}
	return []string{}
}

// overlapText returns the text from the end of the previous chunk that the
// next one repeats: whole blocks while they fit in
// overlap tokens, or else the last prose block's final words. Code and
// tables are repeated only whole, since a piece of either reads wrong
// without its fence or header.
func (s *splitter) overlapText() string {
	if s.overlap <= 0 || len(s.tail) == 0 {
		return ""
	}
	var kept []blocks.Block
	var est int64
	for i := len(s.tail) - 1; i >= 0; i-- {
		b := s.tail[i]
		est += tokens.Count(b.Text) + sepTokens
		if est > s.overlap {
			break
		}
		kept = append([]blocks.Block{b}, kept...)
	}
	// Headings alone repeat nothing worth reading.
	for len(kept) > 0 && kept[len(kept)-1].Kind == blocks.Heading {
		kept = kept[:len(kept)-1]
	}
	if len(kept) > 0 {
		return blocks.Join(kept)
	}
	last := s.tail[len(s.tail)-1]
	switch last.Kind {
	case blocks.Paragraph, blocks.List, blocks.Quote:
		return lastWords(last.Text, s.overlap)
	}
	return ""
}

// lastWords returns the longest suffix of text, starting at a word, that
// has at most n tokens.
func lastWords(text string, n int64) string {
	text = strings.TrimSpace(text)
	var starts []int // word starts, ascending
	prevSpace := true
	for i, r := range text {
		if !unicode.IsSpace(r) && prevSpace {
			starts = append(starts, i)
		}
		prevSpace = unicode.IsSpace(r)
	}
	// A longer suffix has more tokens: the first start whose suffix
	// fits is found by halving.
	k := sort.Search(len(starts), func(j int) bool { return tokens.Count(text[starts[j]:]) <= n })
	if k == len(starts) {
		return ""
	}
	return text[starts[k]:]
}

// cutBlock cuts a block that does not fit in size tokens into pieces that
// do: a code block's pieces are each fenced again, a table's repeat its
// header.
func cutBlock(b blocks.Block, size int64) []string {
	var head, foot, body string
	switch b.Kind {
	case blocks.Code:
		open, rest, _ := strings.Cut(b.Text, "\n")
		fence := blocks.FenceOf(strings.TrimSpace(open))
		head, foot = open+"\n", "\n"+fence
		lines := strings.Split(rest, "\n")
		if n := len(lines); n > 0 && strings.TrimSpace(lines[n-1]) != "" && strings.Trim(strings.TrimSpace(lines[n-1]), fence[:1]) == "" {
			lines = lines[:n-1]
		}
		body = strings.Join(lines, "\n")
	case blocks.Table:
		if h := blocks.TableHeader(b.Text); h != "" {
			head = h + "\n"
			body = strings.TrimPrefix(b.Text, h+"\n")
			// A header too big to leave room for a row is not repeated.
			if tokens.Count(head)*2 > size {
				head, body = "", b.Text
			}
		} else {
			body = b.Text
		}
	default:
		body = b.Text
	}
	// Code keeps its indentation and trailing spaces; other text is
	// trimmed at the cuts.
	trim := func(s string) string { return strings.TrimRightFunc(s, unicode.IsSpace) }
	if b.Kind == blocks.Code {
		trim = func(s string) string { return strings.TrimRight(s, "\n") }
	}
	var pieces []string
	for rest := body; strings.TrimSpace(rest) != ""; {
		piece := fitPiece(rest, head, foot, size, trim)
		pieces = append(pieces, head+trim(piece)+foot)
		rest = strings.TrimLeft(rest[len(piece):], "\n")
		if b.Kind != blocks.Code {
			rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
		}
	}
	return pieces
}

// fitPiece returns the longest prefix of s that, between head and foot,
// has at most size tokens, cut at a line break, else after a sentence,
// else between words, else between pre-tokens; never empty.
func fitPiece(s, head, foot string, size int64, trim func(string) string) string {
	room := size - tokens.Count(head) - tokens.Count(foot)
	for room > 0 {
		p := prefixAt(s, room)
		n := tokens.Count(head + trim(p) + foot)
		if n <= size {
			return p
		}
		// A piece's count can differ from its parts' by a token or two
		// where they join; the room shrinks by the miss.
		room -= n - size
	}
	// Nothing fits: one rune, so the cutting ends.
	_, n := utf8.DecodeRuneInString(s)
	return s[:n]
}

// prefixAt returns the longest prefix of s with about room tokens, cut at
// the best kind of boundary that has one.
func prefixAt(s string, room int64) string {
	k := tokens.Prefix(s, room)
	if k >= len(s) {
		return s
	}
	within := s[:k]
	if i := strings.LastIndexByte(within, '\n'); i > 0 {
		return s[:i+1]
	}
	if i := lastSentenceEnd(within); i > 0 {
		return s[:i]
	}
	if w, _ := tokens.Truncate(s, room); w != "" {
		return w
	}
	if k > 0 {
		return within
	}
	return longestRunes(s, room)
}

// maxTokenBytes bounds the bytes of one token, for the search below: the
// longest o200k tokens are runs of a few dozen characters.
const maxTokenBytes = 128

// longestRunes returns the longest prefix of s, cut between runes, that
// has at most room tokens: for a run with no boundary in it (a line of a
// hundred thousand brackets is one pre-token). At least one rune.
func longestRunes(s string, room int64) string {
	lo, hi := 1, min(len(s), int(room)*maxTokenBytes)
	_, first := utf8.DecodeRuneInString(s)
	best := first
	for lo <= hi {
		mid := (lo + hi) / 2
		for mid < len(s) && mid > 0 && !utf8.RuneStart(s[mid]) {
			mid--
		}
		if mid <= best {
			lo = best + 1
			continue
		}
		if tokens.Count(s[:mid]) <= room {
			best, lo = mid, mid+1
		} else {
			hi = mid - 1
		}
	}
	return s[:best]
}

// lastSentenceEnd returns the offset just after the last sentence end in
// s: a full stop, question or exclamation mark followed by a space, or the
// full stops of scripts written without spaces.
func lastSentenceEnd(s string) int {
	best := -1
	for i, r := range s {
		switch r {
		case '.', '!', '?', ';':
			j := i + 1
			if j < len(s) && (s[j] == ' ' || s[j] == '\t') {
				best = j + 1
			}
		case '。', '！', '？', '；':
			best = i + utf8.RuneLen(r)
		}
	}
	return best
}
