package extract

import (
	"fmt"
	"strings"

	"distill.dev/services/extractor/markdown"
	"distill.dev/services/extractor/tokens"
)

// Output over options.max_output_tokens is cut at the end of a block: a
// paragraph, list item, table row, line of code or line of a paragraph
// that has line breaks. It never ends on a heading, on a table's header or
// in an open code fence, which is closed instead. Only when not even the
// first block fits is it cut, between words, so that the output is never
// empty. A marker paragraph says the output was cut; it counts against the budget
// like the rest.

// markerFor returns the marker line for a budget: the full one when it
// takes at most a quarter of the budget, so that the marker does not crowd
// out the content, shorter ones otherwise.
func markerFor(budget int64) string {
	full := fmt.Sprintf("[… truncated: output exceeded %d tokens]", budget)
	if tokens.Count(full)*4 <= budget {
		return full
	}
	if short := "[… truncated]"; tokens.Count(short) <= budget {
		return short
	}
	return "…" // one token
}

// truncate cuts s, Markdown when md is set and plain text otherwise, to
// budget tokens and reports whether it cut. A budget of 0 or less is no
// budget.
func truncate(s string, budget int64, md bool) (string, bool) {
	if budget <= 0 || tokens.Prefix(s, budget) == len(s) {
		return s, false
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	marker := markerFor(budget)
	room := budget - tokens.Count("\n\n"+marker)
	// A prefix's count can differ from its pieces' by a token where the
	// cut splits one; each miss shrinks the room by what it missed.
	for range 4 {
		out := withMarker(cut(s, room, md), marker)
		n := tokens.Count(out)
		if n <= budget {
			return out, true
		}
		room -= n - budget
	}
	return marker, true
}

func withMarker(content, marker string) string {
	if content == "" {
		return marker
	}
	return content + "\n\n" + marker
}

// cut returns the longest prefix of s, cut as the rules at the top of this
// file say, that has about room tokens.
func cut(s string, room int64, md bool) string {
	if room <= 0 {
		return ""
	}
	limit := tokens.Prefix(s, room)
	lines := scanLines(s, limit, md)

	// fenceLimit is limit for a cut that must also close a fence.
	fenceLimit := map[string]int{}
	best := -1
	for i, l := range lines {
		if l.end > limit {
			break
		}
		if !cuttable(l.kind) || strings.TrimSpace(s[l.start:l.end]) == "" {
			continue
		}
		if l.fence != "" {
			at, ok := fenceLimit[l.fence]
			if !ok {
				at = tokens.Prefix(s, room-tokens.Count(closingFence(l.fence)))
				fenceLimit[l.fence] = at
			}
			if l.end > at {
				continue
			}
		}
		best = i
	}

	// Whatever leads up to the next text that can be cut between words
	// comes with it: blank lines and headings, and when nothing else fits,
	// a fence opening or a table's header too.
	next := 0
	if best >= 0 {
		next = best + 1
	}
	for next < len(lines) && leadIn(lines[next].kind, best < 0) {
		next++
	}
	if best < 0 && next < len(lines) {
		l := lines[next]
		head := s[:l.start]
		closing := closingFence(l.fence)
		if rest := room - tokens.Count(head) - tokens.Count(closing); rest > 0 {
			if words, _ := tokens.Truncate(s[l.start:l.end], rest); strings.TrimSpace(words) != "" {
				return head + words + closing
			}
		}
	}
	if best < 0 {
		return ""
	}
	return strings.TrimRight(s[:lines[best].end], " \t") + closingFence(lines[best].fence)
}

type lineKind int

const (
	lineBlank lineKind = iota
	lineProse          // paragraph, list item, quote: what can be cut between words
	lineHeading
	lineFenceOpen
	lineCode // inside a fence, the closing fence included
	lineTableHead
	lineTableRow
)

// line is one line of the output with what a cut after it needs to know.
type line struct {
	start, end int // of its text, without the line break
	kind       lineKind
	// fence is the fence still open after the line; a cut after it closes
	// it.
	fence string
}

// scanLines classifies the lines of s that start up to limit, and the
// lines after them up to one that is not a lead-in.
func scanLines(s string, limit int, md bool) []line {
	var lines []line
	fence := ""
	for start := 0; start < len(s); {
		end := strings.IndexByte(s[start:], '\n')
		next := len(s)
		if end < 0 {
			end = len(s)
		} else {
			end += start
			next = end + 1
		}
		l := line{start: start, end: end, kind: lineProse}
		trimmed := strings.TrimSpace(s[start:end])
		switch {
		case trimmed == "" && fence == "":
			l.kind = lineBlank
		case !md:
		case fence != "":
			l.kind = lineCode
			if markdown.ClosesFence(trimmed, fence) {
				fence = ""
			}
		case fenceOf(trimmed) != "":
			l.kind = lineFenceOpen
			fence = fenceOf(trimmed)
		case isHeading(trimmed):
			l.kind = lineHeading
		case strings.HasPrefix(trimmed, "|"):
			l.kind = lineTableRow
			if isTableDelimiter(trimmed) {
				l.kind = lineTableHead
				if n := len(lines); n > 0 && lines[n-1].kind == lineTableRow {
					lines[n-1].kind = lineTableHead
				}
			}
		}
		l.fence = fence
		lines = append(lines, l)
		if start > limit && !leadIn(l.kind, true) {
			break
		}
		start = next
	}
	return lines
}

// leadIn reports whether a line of kind k goes with the text after it:
// always for blank lines and headings, and for a fence opening or a
// table's header when nothing before fits.
func leadIn(k lineKind, nothingFits bool) bool {
	return k == lineBlank || k == lineHeading || nothingFits && (k == lineFenceOpen || k == lineTableHead)
}

// cuttable reports whether output may end after a line of kind k.
func cuttable(k lineKind) bool {
	switch k {
	case lineBlank, lineHeading, lineFenceOpen, lineTableHead:
		return false
	}
	return true
}

func closingFence(fence string) string {
	if fence == "" {
		return ""
	}
	return "\n" + fence
}

// fenceOf returns the fence a trimmed line opens (``` or ~~~, or longer),
// or "".
func fenceOf(trimmed string) string {
	for _, ch := range []byte{'`', '~'} {
		n := 0
		for n < len(trimmed) && trimmed[n] == ch {
			n++
		}
		if n >= 3 && (ch == '~' || !strings.ContainsRune(trimmed[n:], '`')) {
			return trimmed[:n]
		}
	}
	return ""
}

func isHeading(trimmed string) bool {
	n := 0
	for n < len(trimmed) && trimmed[n] == '#' {
		n++
	}
	return n >= 1 && n <= 6 && (n == len(trimmed) || trimmed[n] == ' ')
}

// isTableDelimiter reports whether a trimmed line is a GFM table's
// delimiter row, | --- | :-: |.
func isTableDelimiter(trimmed string) bool {
	return strings.Contains(trimmed, "-") && strings.Trim(trimmed, "|-: ") == ""
}
