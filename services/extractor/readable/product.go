package readable

import (
	"strings"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// maxLDDescription bounds the structured description added to a product's
// content.
const maxLDDescription = 5000

// addProductFacts puts the product's structured name and description at
// the top of content when its markup does not show them: shops often keep
// the description in a collapsed tab or load it with scripts, while the
// JSON-LD carries it whole.
func addProductFacts(content *html.Node, p Product) {
	if content == nil {
		return
	}
	text := strings.ToLower(htmlnode.Text(content))
	// The facts go after the page's title, or open the content.
	at := content.FirstChild
	if h1 := htmlnode.First(content, "h1"); h1 != nil && h1.Parent != nil {
		content, at = h1.Parent, h1.NextSibling
	} else if p.Name != "" && !strings.Contains(text, strings.ToLower(htmlnode.CollapseSpace(p.Name))) {
		h := htmlnode.NewElement("h1")
		h.AppendChild(&html.Node{Type: html.TextNode, Data: p.Name})
		content.InsertBefore(h, at)
	}
	if d := htmlnode.CollapseSpace(p.Description); d != "" && len(d) <= maxLDDescription && !strings.Contains(text, strings.ToLower(lead(d))) {
		para := htmlnode.NewElement("p")
		para.AppendChild(&html.Node{Type: html.TextNode, Data: d})
		content.InsertBefore(para, at)
	}
}

// lead returns the first few words of s, enough to tell whether a page
// shows the text.
func lead(s string) string {
	words := strings.Fields(s)
	if len(words) > 8 {
		words = words[:8]
	}
	return strings.Join(words, " ")
}
