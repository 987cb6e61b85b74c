package readable

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"distill.dev/services/extractor/internal/htmlnode"
)

// Thresholds, in non-space runes, for reading a page's noscript markup.
const (
	// noscriptThin is the visible text under which a page may be an app
	// shell whose real content waits in noscript for crawlers and readers
	// without JavaScript (forum engines serve whole threads so).
	noscriptThin = 1000
	// noscriptMin is the least text a noscript block needs to be read.
	noscriptMin = 200
)

// ShowNoscript does on doc what ArticleOf does first: a thin page's
// noscript blocks are replaced with the markup they hold. Call it before
// Classify, so the classifier reads what the reader will get.
func ShowNoscript(doc *html.Node) {
	body := htmlnode.First(doc, "body")
	if body == nil {
		return
	}
	text := 0
	htmlnode.Words(body, func(n *html.Node) bool { return n.Data == "noscript" }, func(w string, _ bool) bool {
		text += utf8.RuneCountInString(w)
		return text < noscriptThin
	})
	unwrapNoscript(body, text)
}

// unwrapNoscript replaces the noscript blocks of a thin page with the
// markup they hold, when that markup has more text than the rest of the
// page: the parser keeps noscript content as raw text, since it runs as a
// browser with scripting on, so without this the page reads empty. It
// reports whether it changed the tree.
func unwrapNoscript(body *html.Node, pageText int) bool {
	if pageText >= noscriptThin {
		return false
	}
	var blocks []*html.Node
	htmlnode.Walk(body, func(n *html.Node) bool {
		if n.Type == html.ElementNode && n.Data == "noscript" {
			if t := n.FirstChild; t != nil && t.Type == html.TextNode && t.NextSibling == nil && strings.Contains(t.Data, "<") {
				blocks = append(blocks, n)
			}
			return false
		}
		return true
	})
	changed := false
	for _, n := range blocks {
		ctx := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
		nodes, err := html.ParseFragment(strings.NewReader(n.FirstChild.Data), ctx)
		if err != nil {
			continue
		}
		wrap := htmlnode.NewElement("div")
		for _, c := range nodes {
			wrap.AppendChild(c)
		}
		if l := htmlnode.TextLen(wrap); l < noscriptMin || l <= pageText {
			continue
		}
		n.Parent.InsertBefore(wrap, n)
		htmlnode.Remove(n)
		changed = true
	}
	return changed
}
