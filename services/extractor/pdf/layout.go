package pdf

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// run is a stretch of text in one font on one line, as PDFium finds it,
// in points from the page's top left.
type run struct {
	text           string
	x0, x1, y0, y1 float64
	size           float64
	bold           bool
}

type page struct {
	width, height float64
	runs          []run
}

// line is the runs of one line of one column, left to right.
type line struct {
	text           string
	x0, x1, y0, y1 float64
	size           float64
	bold           bool
}

// block is a paragraph or a heading.
type block struct {
	lines  []line
	text   string
	size   float64
	bold   bool
	level  int // heading level, 0 for a paragraph
	page   int
	nlines int
}

// content is a document's text laid out.
type content struct {
	md, text string
	heading  string // the first heading, "" when there is none
}

// pageBlocks lays out one page, the number-th: its blocks in reading
// order, and the count of letters and digits on it.
func pageBlocks(p page, number int) ([]block, int) {
	chars := 0
	for _, r := range p.runs {
		for _, c := range r.text {
			if unicode.IsLetter(c) || unicode.IsDigit(c) {
				chars++
			}
		}
	}
	blocks := paragraphs(order(lines(p.runs), p.width))
	for i := range blocks {
		blocks[i].page = number
		// Only the text is kept past the page, so that a long document
		// costs its text and not its glyph boxes.
		blocks[i].nlines = len(blocks[i].lines)
		blocks[i].lines = nil
	}
	return blocks, chars
}

// layout writes the blocks of a document of pages pages as Markdown and
// plain text, with headings where the fonts say so.
func layout(blocks []block, pages int) content {
	headed := markHeadings(blocks)
	var mdb, tb strings.Builder
	write := func(md, plain string) {
		if mdb.Len() > 0 {
			mdb.WriteString("\n\n")
			tb.WriteString("\n\n")
		}
		mdb.WriteString(md)
		tb.WriteString(plain)
	}
	// Without headings from the fonts, a document of several pages gets one
	// section a page, so that a reader can still tell where it is.
	perPage := !headed && pages > 1
	current := 0
	heading := ""
	for _, b := range blocks {
		if b.level > 0 && heading == "" {
			heading = b.text
		}
		if perPage && b.page != current {
			current = b.page
			h := fmt.Sprintf("Page %d", b.page)
			write("## "+h, h)
		}
		if b.level > 0 {
			write(strings.Repeat("#", b.level)+" "+b.text, b.text)
			continue
		}
		write(escape(b.text), b.text)
	}
	return content{md: mdb.String(), text: tb.String(), heading: heading}
}

// lines groups runs into lines: runs that share a baseline band and follow
// each other without a gap wider than a column gutter.
func lines(runs []run) []line {
	if len(runs) == 0 {
		return nil
	}
	sorted := slices.Clone(runs)
	slices.SortStableFunc(sorted, func(a, b run) int {
		return cmp.Compare(a.y0+a.y1, b.y0+b.y1)
	})
	// Bands of runs whose vertical middles lie within each other's extent.
	var bands [][]run
	for _, r := range sorted {
		mid := (r.y0 + r.y1) / 2
		if n := len(bands); n > 0 {
			last := bands[n-1]
			lo, hi := last[0].y0, last[0].y1
			for _, o := range last[1:] {
				lo, hi = min(lo, o.y0), max(hi, o.y1)
			}
			if mid >= lo && mid <= hi {
				bands[n-1] = append(last, r)
				continue
			}
		}
		bands = append(bands, []run{r})
	}
	var out []line
	for _, band := range bands {
		slices.SortStableFunc(band, func(a, b run) int { return cmp.Compare(a.x0, b.x0) })
		var cur []run
		flush := func() {
			if len(cur) > 0 {
				out = append(out, joinRuns(cur))
				cur = nil
			}
		}
		for _, r := range band {
			if n := len(cur); n > 0 {
				prev := cur[n-1]
				if r.x0-prev.x1 > 1.5*max(prev.size, r.size) {
					flush()
				}
			}
			cur = append(cur, r)
		}
		flush()
	}
	return out
}

func joinRuns(runs []run) line {
	l := line{x0: runs[0].x0, x1: runs[0].x1, y0: runs[0].y0, y1: runs[0].y1, bold: true}
	var b strings.Builder
	// The line's size and weight are those of most of its letters.
	weights := map[float64]int{}
	boldChars, allChars := 0, 0
	for i, r := range runs {
		if i > 0 {
			prev := runs[i-1]
			gap := r.x0 - prev.x1
			if gap > 0.15*r.size && !strings.HasSuffix(b.String(), " ") && !strings.HasPrefix(r.text, " ") {
				b.WriteByte(' ')
			}
		}
		b.WriteString(r.text)
		n := utf8.RuneCountInString(strings.TrimSpace(r.text))
		weights[math.Round(r.size*2)/2] += n
		allChars += n
		if r.bold {
			boldChars += n
		}
		l.x0, l.x1 = min(l.x0, r.x0), max(l.x1, r.x1)
		l.y0, l.y1 = min(l.y0, r.y0), max(l.y1, r.y1)
	}
	l.text = strings.Join(strings.Fields(b.String()), " ")
	l.size = mode(weights)
	l.bold = allChars > 0 && boldChars*2 > allChars
	return l
}

// mode returns the key with the greatest weight, the larger key on a tie.
func mode(weights map[float64]int) float64 {
	best, bestN := 0.0, -1
	for k, n := range weights {
		if n > bestN || (n == bestN && k > best) {
			best, bestN = k, n
		}
	}
	return best
}

// order puts a page's lines in reading order. A page with a gutter (an
// empty vertical strip near the middle that lines on both sides keep
// clear of) is read as two columns, left before right, between the lines
// that span the gutter, such as a title above the columns or a figure
// across them. Any other page is read top to bottom.
func order(ls []line, width float64) []line {
	slices.SortStableFunc(ls, func(a, b line) int {
		if c := cmp.Compare(a.y0, b.y0); c != 0 {
			return c
		}
		return cmp.Compare(a.x0, b.x0)
	})
	g, ok := gutter(ls, width)
	if !ok {
		return ls
	}
	out := make([]line, 0, len(ls))
	var left, right []line
	flush := func() {
		out = append(out, left...)
		out = append(out, right...)
		left, right = left[:0], right[:0]
	}
	for _, l := range ls {
		switch {
		case l.x1 <= g:
			left = append(left, l)
		case l.x0 >= g:
			right = append(right, l)
		default:
			flush()
			out = append(out, l)
		}
	}
	flush()
	return out
}

// gutter finds the x of a column gutter, if the page has one: the widest
// vertical strip in the middle of the page that few lines cross, with a
// fair share of the other lines on either side of it.
func gutter(ls []line, width float64) (float64, bool) {
	if len(ls) < 6 || width <= 0 {
		return 0, false
	}
	lo, hi := int(width*0.3), int(width*0.7)
	cover := make([]int, hi-lo+1)
	for _, l := range ls {
		for x := max(lo, int(math.Ceil(l.x0))); x <= min(hi, int(l.x1)); x++ {
			cover[x-lo]++
		}
	}
	// Lines that cross a gutter must be few: titles, figures, footers.
	crossing := len(ls) / 6
	best, bestWidth := 0.0, 0
	for i := 0; i < len(cover); {
		if cover[i] > crossing {
			i++
			continue
		}
		j := i
		for j < len(cover) && cover[j] <= crossing {
			j++
		}
		g := float64(lo+i) + float64(j-i)/2
		if j-i >= 4 && j-i > bestWidth && balanced(ls, g) {
			best, bestWidth = g, j-i
		}
		i = j
	}
	return best, bestWidth > 0
}

// balanced reports whether both sides of x hold a fair share of the lines
// that keep to one side: a column, not a stray right-aligned date.
func balanced(ls []line, x float64) bool {
	var nl, nr int
	for _, l := range ls {
		switch {
		case l.x1 <= x:
			nl++
		case l.x0 >= x:
			nr++
		}
	}
	return min(nl, nr) >= max(3, (nl+nr)/5)
}

// paragraphs joins consecutive lines of the same style that sit close
// under each other.
func paragraphs(ls []line) []block {
	var out []block
	for _, l := range ls {
		if n := len(out); n > 0 && continues(out[n-1], l) {
			out[n-1].lines = append(out[n-1].lines, l)
			continue
		}
		out = append(out, block{lines: []line{l}, size: l.size, bold: l.bold})
	}
	for i := range out {
		out[i].text = joinLines(out[i].lines)
	}
	return out
}

func continues(b block, l line) bool {
	prev := b.lines[len(b.lines)-1]
	if l.bold != b.bold || math.Abs(l.size-b.size) > 0.1*b.size {
		return false
	}
	gap := l.y0 - prev.y1
	if gap < -0.2*b.size || gap > 0.6*b.size {
		return false
	}
	// Stays in the same column.
	return l.x0 < prev.x1 && l.x1 > prev.x0
}

// joinLines makes one paragraph of lines, undoing hyphenation at a line's
// end and joining lines of scripts written without spaces directly.
func joinLines(ls []line) string {
	var b strings.Builder
	for i, l := range ls {
		t := l.text
		if i > 0 {
			prev := b.String()
			last, _ := utf8.DecodeLastRuneInString(prev)
			first, _ := utf8.DecodeRuneInString(t)
			switch {
			case strings.HasSuffix(prev, "-") && unicode.IsLower(first) && len(prev) > 1 && unicode.IsLetter(beforeLast(prev)):
				b.Reset()
				b.WriteString(strings.TrimSuffix(prev, "-"))
			case unspaced(last) && unspaced(first):
			default:
				b.WriteByte(' ')
			}
		}
		b.WriteString(t)
	}
	return b.String()
}

func beforeLast(s string) rune {
	_, n := utf8.DecodeLastRuneInString(s)
	r, _ := utf8.DecodeLastRuneInString(s[:len(s)-n])
	return r
}

// unspaced reports whether r is of a script written without spaces
// between words.
func unspaced(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar)
}

// markHeadings sets the level of blocks whose font sets them apart from
// the body text (larger, or bold where the body is not) and that are short
// enough to be headings. The largest such size is level 1. It reports
// whether any heading was found.
func markHeadings(blocks []block) bool {
	sizes := map[float64]int{}
	boldChars, allChars := 0, 0
	for _, b := range blocks {
		n := utf8.RuneCountInString(b.text)
		sizes[math.Round(b.size*2)/2] += n
		allChars += n
		if b.bold {
			boldChars += n
		}
	}
	body := mode(sizes)
	bodyBold := boldChars*2 > allChars
	isHeading := func(b block) bool {
		n := utf8.RuneCountInString(b.text)
		if n == 0 || n > 200 || b.nlines > 3 || !unicode.IsLetter(firstLetterOrDigit(b.text)) && !unicode.IsDigit(firstLetterOrDigit(b.text)) {
			return false
		}
		return b.size >= body*1.2 || (b.bold && !bodyBold && b.size >= body*0.95 && n <= 120)
	}
	var levels []float64
	for _, b := range blocks {
		if isHeading(b) {
			levels = append(levels, math.Round(b.size*2)/2)
		}
	}
	if len(levels) == 0 {
		return false
	}
	slices.Sort(levels)
	levels = slices.Compact(levels)
	slices.Reverse(levels)
	for i := range blocks {
		if !isHeading(blocks[i]) {
			continue
		}
		rank := slices.Index(levels, math.Round(blocks[i].size*2)/2)
		blocks[i].level = min(rank+1, 4)
	}
	return true
}

func firstLetterOrDigit(s string) rune {
	for _, r := range s {
		if !unicode.IsSpace(r) && !unicode.IsPunct(r) {
			return r
		}
	}
	return 0
}

// escape keeps a paragraph from reading as Markdown syntax it does not
// mean: a leading #, >, list marker or numbered-list dot.
func escape(s string) string {
	switch {
	case s == "":
		return s
	case strings.HasPrefix(s, "#"), strings.HasPrefix(s, ">"),
		strings.HasPrefix(s, "- "), strings.HasPrefix(s, "+ "), strings.HasPrefix(s, "* "):
		return `\` + s
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i+1 < len(s) && (s[i] == '.' || s[i] == ')') && s[i+1] == ' ' {
		return s[:i] + `\` + s[i:]
	}
	return s
}
