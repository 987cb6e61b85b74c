// Package plaintext renders an HTML subtree as readable plain text: headings
// on their own lines, paragraphs separated by blank lines, list items
// marked "- " (or numbered in ordered lists), table cells joined with " | ",
// links as their text and no Markdown syntax.
package plaintext

import (
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// Render returns the plain text of n's subtree.
func Render(n *html.Node) string {
	if n == nil {
		return ""
	}
	w := &writer{}
	htmlnode.WalkAround(n, w.enter, w.leave)
	return tidy(w.buf.String())
}

// skipped elements carry no readable text.
var skipped = map[string]bool{
	"script": true, "style": true, "noscript": true, "template": true, "head": true,
	"svg": true, "canvas": true, "iframe": true, "object": true, "embed": true,
	"img": true, "picture": true, "video": true, "audio": true, "input": true,
	"select": true, "textarea": true, "button": true,
}

// breaks says how many line breaks separate a block element from its
// neighbours: 2 for a blank line, 1 for a line break.
var breaks = map[string]int{
	"p": 2, "h1": 2, "h2": 2, "h3": 2, "h4": 2, "h5": 2, "h6": 2, "pre": 2,
	"blockquote": 2, "table": 2, "ul": 2, "ol": 2, "dl": 2, "figure": 2, "hr": 2,
	"address": 2, "header": 2, "footer": 2, "section": 2, "article": 2, "main": 2,
	"aside": 2, "nav": 2, "details": 2, "form": 2, "fieldset": 2,
	"div": 1, "li": 1, "tr": 1, "dt": 1, "dd": 1, "figcaption": 1, "caption": 1,
	"br": 1, "summary": 1, "legend": 1, "tbody": 1, "thead": 1, "tfoot": 1,
}

type list struct {
	ordered bool
	next    int
}

type writer struct {
	buf       strings.Builder
	pending   int    // line breaks owed before the next text
	space     bool   // a space is owed before the next word
	marker    string // list marker owed at the start of the next text
	cellSep   bool   // a cell separator is owed before the next text
	lineStart bool
	pre       int // depth inside pre elements
	lists     []list
}

func (w *writer) enter(n *html.Node) bool {
	switch n.Type {
	case html.TextNode:
		w.text(n.Data)
		return false
	case html.ElementNode, html.DocumentNode:
	default:
		return false
	}
	// A skipped element's children are never entered, so no text under
	// it is written.
	if skipped[n.Data] {
		return false
	}
	w.block(n)
	switch n.Data {
	case "pre":
		w.pre++
	case "ul", "ol":
		w.lists = append(w.lists, list{ordered: n.Data == "ol", next: startOf(n)})
	case "li":
		w.marker = w.listMarker()
	case "td", "th":
		if prevCell(n) {
			w.cellSep = true
		}
	}
	return true
}

func (w *writer) leave(n *html.Node) {
	if n.Type != html.ElementNode {
		return
	}
	if skipped[n.Data] {
		return
	}
	switch n.Data {
	case "pre":
		w.pre--
	case "ul", "ol":
		if len(w.lists) > 0 {
			w.lists = w.lists[:len(w.lists)-1]
		}
	case "li":
		w.marker = ""
	}
	if n.Data != "br" {
		w.block(n)
	}
}

// block owes the line breaks a block element puts around itself. A list
// nested in a list item is set off by a line break only.
func (w *writer) block(n *html.Node) {
	b := breaks[n.Data]
	if (n.Data == "ul" || n.Data == "ol") && len(w.lists) > 0 {
		b = 1
	}
	if n.Data == "br" {
		// A br breaks the line even when nothing has been written since the
		// last break, but never opens a paragraph.
		w.buf.WriteByte('\n')
		w.lineStart = true
		w.space = false
		return
	}
	w.pending = max(w.pending, b)
}

func (w *writer) listMarker() string {
	indent := strings.Repeat("  ", max(len(w.lists)-1, 0))
	if len(w.lists) == 0 {
		return "- "
	}
	l := &w.lists[len(w.lists)-1]
	if !l.ordered {
		return indent + "- "
	}
	m := indent + strconv.Itoa(l.next) + ". "
	l.next++
	return m
}

// startOf returns the number an ordered list starts at, 1 unless its start
// attribute says otherwise.
func startOf(n *html.Node) int {
	if v, err := strconv.Atoi(strings.TrimSpace(htmlnode.Attr(n, "start"))); err == nil {
		return v
	}
	return 1
}

func prevCell(n *html.Node) bool {
	for s := n.PrevSibling; s != nil; s = s.PrevSibling {
		if s.Type == html.ElementNode && (s.Data == "td" || s.Data == "th") {
			return true
		}
	}
	return false
}

func (w *writer) text(s string) {
	if w.pre > 0 {
		if s == "" {
			return
		}
		w.flush()
		w.buf.WriteString(s)
		w.lineStart = strings.HasSuffix(s, "\n")
		return
	}
	start := -1
	for i, r := range s {
		if unicode.IsSpace(r) {
			if start >= 0 {
				w.word(s[start:i])
				start = -1
			}
			w.space = true
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		w.word(s[start:])
	}
}

// flush writes the line breaks, list marker and cell separator owed before
// new text.
func (w *writer) flush() {
	if w.pending > 0 && w.buf.Len() > 0 {
		have := trailingNewlines(w.buf.String())
		for i := have; i < w.pending; i++ {
			w.buf.WriteByte('\n')
		}
		w.lineStart = true
	}
	if w.buf.Len() == 0 {
		w.lineStart = true
	}
	w.pending = 0
	if w.marker != "" {
		w.buf.WriteString(w.marker)
		w.marker = ""
		w.lineStart = true
		w.space = false
		w.cellSep = false
	}
	if w.cellSep {
		if !w.lineStart {
			w.buf.WriteString(" | ")
		}
		w.cellSep = false
		w.space = false
	}
}

func (w *writer) word(s string) {
	w.flush()
	if w.space && !w.lineStart {
		w.buf.WriteByte(' ')
	}
	w.buf.WriteString(s)
	w.space = false
	w.lineStart = false
}

func trailingNewlines(s string) int {
	n := 0
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case '\n':
			n++
		case ' ', '\t':
		default:
			return n
		}
	}
	return n
}

// tidy trims trailing space off lines, collapses runs of blank lines to one
// and trims the text.
func tidy(s string) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	blank := false
	for _, l := range lines {
		l = strings.TrimRightFunc(l, unicode.IsSpace)
		if l == "" {
			if blank {
				continue
			}
			blank = true
		} else {
			blank = false
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}
