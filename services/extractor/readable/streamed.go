package readable

import (
	"strings"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// ShowStreamed puts the segments of a page rendered by streaming React
// (Next.js's app router and others) where the page's inline scripts put
// them in a browser. Such a page sends its shell first, with a <template
// id="B:n"> or <template id="P:n"> holding each part still to come, and
// each part later, at the end of the body, in a <div hidden id="S:n">: on a
// page that waits for its data, that is every word of it. A segment whose
// placeholder is missing is shown where it stands. Call it before anything
// reads the page's text.
func ShowStreamed(doc *html.Node) {
	var segments []*html.Node
	placeholders := map[string]*html.Node{}
	htmlnode.Walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		id := htmlnode.Attr(n, "id")
		switch {
		case n.Data == "template" && (strings.HasPrefix(id, "B:") || strings.HasPrefix(id, "P:")):
			placeholders[id] = n
		case n.Data == "div" && strings.HasPrefix(id, "S:") && htmlnode.HasAttr(n, "hidden"):
			segments = append(segments, n)
		}
		return true
	})
	// In document order, so a segment that lands inside an earlier one's
	// children moves with them first.
	for _, s := range segments {
		suffix := strings.TrimPrefix(htmlnode.Attr(s, "id"), "S:")
		at := placeholders["B:"+suffix]
		if at == nil {
			at = placeholders["P:"+suffix]
		}
		if at == nil || at.Parent == nil || htmlnode.Contains(s, at) {
			htmlnode.DelAttr(s, "hidden")
			continue
		}
		if strings.HasPrefix(htmlnode.Attr(at, "id"), "B:") {
			dropFallback(at)
		}
		for c := s.FirstChild; c != nil; {
			next := c.NextSibling
			s.RemoveChild(c)
			at.Parent.InsertBefore(c, at)
			c = next
		}
		htmlnode.Remove(at)
		htmlnode.Remove(s)
	}
}

// dropFallback removes what a pending boundary shows until its content
// comes: the nodes after its template up to the comment closing the
// boundary, <!--/$-->. React removes them when it puts the content in.
// Without that comment nothing is taken to be the fallback.
func dropFallback(template *html.Node) {
	end := template.NextSibling
	for end != nil && !(end.Type == html.CommentNode && end.Data == "/$") {
		end = end.NextSibling
	}
	if end == nil {
		return
	}
	for n := template.NextSibling; n != end; {
		next := n.NextSibling
		htmlnode.Remove(n)
		n = next
	}
}
