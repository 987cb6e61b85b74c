// Package tables reads the data tables of a page as rows of text, one cell
// per column, leaving out the tables that only lay the page out.
package tables

import (
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/internal/htmlnode"
)

// Bounds on a table's grid. HTML caps colspan at 1000 and browsers clamp
// rowspan to the rows there are; on top of that a hostile table must not
// make millions of cells, so columns and cells are capped too. A table
// beyond maxTableCells keeps its first rows.
const (
	maxColspan    = 1000
	maxRowspan    = 1000
	maxRowCells   = 1000
	maxTableCells = 200_000
)

// longCellRunes is the text length from which a cell reads as prose
// rather than as a value.
const longCellRunes = 200

// Read returns the data tables under root, nested ones included, in
// document order. The result is never nil.
func Read(root *html.Node) []*distillv1.Table {
	tables := []*distillv1.Table{}
	for _, t := range htmlnode.Elements(root, "table") {
		if tb := tableOf(t); tb != nil {
			tables = append(tables, tb)
		}
	}
	return tables
}

// tableOf returns t as data, or nil when t lays out a page rather than
// holds data. Every row has one cell per column: a cell spanning columns
// or rows repeats its text in each slot it covers, short rows are padded
// with "", and stacked header rows are joined per column with " / ".
func tableOf(t *html.Node) *distillv1.Table {
	if role := strings.ToLower(strings.TrimSpace(htmlnode.Attr(t, "role"))); role == "presentation" || role == "none" {
		return nil
	}
	g := buildGrid(t)
	caption := captionOf(t)
	if g.isLayout(caption != "") {
		return nil
	}

	out := &distillv1.Table{Headers: joinHeaders(g.head, g.width)}
	if caption != "" {
		out.Caption = &caption
	}
	for _, r := range g.body {
		cells := make([]string, g.width)
		copy(cells, r)
		out.Rows = append(out.Rows, &distillv1.TableRow{Cells: cells})
	}
	return out
}

// grid is a table laid out as rows of cell text, with the table's own
// cells kept for judging what the table is for.
type grid struct {
	head, body [][]string
	width      int
	cells      []cell // the table's own td and th, nested tables' excluded
	hasTH      bool
	hasTHead   bool
}

// buildGrid lays t out the way the HTML table model does: row groups in
// rendering order, a rowspan ending with its row group, rowspan="0"
// reaching the group's end.
func buildGrid(t *html.Node) grid {
	var g grid
	total := 0
	bodyStarted := false
	for _, grp := range rowGroups(t) {
		g.hasTHead = g.hasTHead || grp.head
		// above[c] holds the cell that a rowspan from an earlier row of
		// this group carries into column c, until row index until.
		var above []carried
		for i, tr := range grp.rows {
			row, own, allTH := placeRow(tr, i, len(grp.rows), &above)
			if own == nil {
				continue
			}
			g.cells = append(g.cells, own...)
			g.hasTH = g.hasTH || slices.ContainsFunc(own, func(c cell) bool { return c.n.Data == "th" })
			if total+len(row) > maxTableCells {
				return g.bounded()
			}
			total += len(row)
			g.width = max(g.width, len(row))
			if !bodyStarted && (grp.head || allTH) {
				g.head = append(g.head, row)
				continue
			}
			bodyStarted = true
			g.body = append(g.body, row)
		}
	}
	// A table of nothing but th is data written with the wrong tag, not
	// a header as tall as the table.
	if len(g.body) == 0 && len(g.head) > 1 {
		g.body, g.head = g.head[1:], g.head[:1]
	}
	return g.bounded()
}

// bounded drops the last body rows that padding every row to the width
// would take past maxTableCells.
func (g grid) bounded() grid {
	if g.width == 0 {
		return g
	}
	if room := maxTableCells/g.width - len(g.head); len(g.body) > room {
		g.body = g.body[:max(room, 0)]
	}
	return g
}

// cell is one of a table's own td and th, with its text once it is read.
type cell struct {
	n    *html.Node
	text string
	// read says whether text was read; a cell past the column cap takes
	// no slot and is not.
	read bool
}

// carried is a cell that spans down into later rows.
type carried struct {
	text  string
	until int // the row index, within the group, it no longer covers
}

// placeRow lays out row i of a group of n rows, filling the slots that
// rowspans above carry into it. It returns the row, the row's own cells
// (nil when it has none; cells past the column cap count, though they take
// no slot) and whether they are all th.
func placeRow(tr *html.Node, i, n int, above *[]carried) ([]string, []cell, bool) {
	var row []string
	var own []cell
	allTH := true
	set := func(col int, text string) {
		for len(row) <= col {
			row = append(row, "")
		}
		row[col] = text
	}
	covered := func(col int) bool { return col < len(*above) && (*above)[col].until > i }

	col := 0
	for c := tr.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode || (c.Data != "td" && c.Data != "th") {
			continue
		}
		allTH = allTH && c.Data == "th"
		for covered(col) {
			set(col, (*above)[col].text)
			col++
		}
		if col >= maxRowCells {
			own = append(own, cell{n: c})
			continue
		}
		text, _ := htmlnode.VisibleText(c, 0, "table")
		own = append(own, cell{n: c, text: text, read: true})
		colspan := htmlnode.CountAttr(c, "colspan", 1, maxColspan)
		rowspan := htmlnode.CountAttr(c, "rowspan", 0, maxRowspan)
		if rowspan == 0 {
			rowspan = n - i
		}
		for k := range min(colspan, maxRowCells-col) {
			set(col+k, text)
			if rowspan > 1 {
				for len(*above) <= col+k {
					*above = append(*above, carried{})
				}
				(*above)[col+k] = carried{text: text, until: i + rowspan}
			}
		}
		col += colspan
	}
	for c := col; c < len(*above) && c < maxRowCells; c++ {
		if covered(c) {
			set(c, (*above)[c].text)
		}
	}
	return row, own, allTH && len(own) > 0
}

type rowGroup struct {
	head bool
	rows []*html.Node
}

// rowGroups returns the table's own rows, by group, in the order they are
// shown: a tfoot is drawn last wherever it is written, and only the first
// thead is a header. Rows of nested tables are theirs, not this one's.
func rowGroups(t *html.Node) []rowGroup {
	var groups, foot []rowGroup
	seenHead := false
	for c := t.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		switch c.Data {
		case "tr":
			groups = append(groups, rowGroup{rows: []*html.Node{c}})
		case "thead", "tbody", "tfoot":
			g := rowGroup{head: c.Data == "thead" && !seenHead}
			seenHead = seenHead || c.Data == "thead"
			for r := c.FirstChild; r != nil; r = r.NextSibling {
				if r.Type == html.ElementNode && r.Data == "tr" {
					g.rows = append(g.rows, r)
				}
			}
			if c.Data == "tfoot" {
				foot = append(foot, g)
				continue
			}
			groups = append(groups, g)
		}
	}
	return append(groups, foot...)
}

// joinHeaders joins the header rows per column with " / ", passing over
// empty slots and text repeated down a column by a span. It returns nil
// when the header rows say nothing.
func joinHeaders(head [][]string, width int) []string {
	out := make([]string, width)
	said := false
	for c := range width {
		var parts []string
		for _, r := range head {
			if c < len(r) && r[c] != "" && !slices.Contains(parts, r[c]) {
				parts = append(parts, r[c])
			}
		}
		out[c] = strings.Join(parts, " / ")
		said = said || out[c] != ""
	}
	if !said {
		return nil
	}
	return out
}

func captionOf(t *html.Node) string {
	for c := t.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.Data == "caption" {
			text, _ := htmlnode.VisibleText(c, 0, "table")
			return text
		}
	}
	return ""
}

// isLayout reports whether the table lays out a page rather than holds
// data. A grid of one column or one cell relates nothing to anything. A
// table that marks no header (no th, thead or caption) is layout when it
// nests a table or holds a form, or when most of its non-empty cells hold
// block content or prose: data tables hold values, layout tables hold the
// page.
func (g grid) isLayout(hasCaption bool) bool {
	if g.width <= 1 || len(g.cells) <= 1 {
		return true
	}
	if g.hasTH || g.hasTHead || hasCaption {
		return false
	}
	filled, heavy := 0, 0
	for _, c := range g.cells {
		k := cellContent(c)
		if k.nested || k.form {
			return true
		}
		if k.empty {
			continue
		}
		filled++
		if k.block || k.long {
			heavy++
		}
	}
	return heavy*2 > filled
}

type cellKind struct {
	empty, nested, form, block, long bool
}

// blockContent are the elements that make a cell a box of page rather than
// a value.
var blockContent = map[string]bool{
	"p": true, "div": true, "ul": true, "ol": true, "dl": true, "blockquote": true,
	"pre": true, "section": true, "article": true, "nav": true, "header": true,
	"footer": true, "aside": true, "main": true, "figure": true, "iframe": true,
	"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
}

// formContent are the elements that make a cell part of a form's layout.
var formContent = map[string]bool{
	"form": true, "input": true, "select": true, "textarea": true, "button": true, "fieldset": true,
}

func cellContent(c cell) cellKind {
	var k cellKind
	htmlnode.Walk(c.n, func(n *html.Node) bool {
		if n == c.n || n.Type != html.ElementNode {
			return true
		}
		switch {
		case n.Data == "table":
			k.nested = true
			return false
		case formContent[n.Data]:
			k.form = true
		case blockContent[n.Data]:
			k.block = true
		}
		return !htmlnode.Silent(n.Data)
	})
	text, cut := c.text, false
	if !c.read {
		text, cut = htmlnode.VisibleText(c.n, longCellRunes+1, "table")
	}
	k.empty = text == ""
	k.long = cut || utf8.RuneCountInString(text) > longCellRunes
	return k
}
