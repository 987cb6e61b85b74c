package pick

import (
	"strings"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// visibleText is an element's text as a reader sees it: whitespace
// collapsed, blocks apart, without scripts, styles and what its markup
// hides.
func visibleText(n *html.Node) string {
	var b strings.Builder
	htmlnode.Words(n, htmlnode.IsHidden, func(w string, space bool) bool {
		if space {
			b.WriteByte(' ')
		}
		b.WriteString(w)
		return true
	})
	return b.String()
}

// ownText is ::text: the element's own text nodes, without its children's
// text, as the page writes them (a code block keeps its lines), trimmed.
func ownText(n *html.Node) string {
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.TextNode {
			b.WriteString(c.Data)
		}
	}
	return strings.TrimSpace(b.String())
}

// outerHTML is ::html: the element's markup.
func outerHTML(n *html.Node) string {
	var b strings.Builder
	if err := html.Render(&b, n); err != nil {
		return ""
	}
	return b.String()
}
