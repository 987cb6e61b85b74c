package cleanhtml

import (
	"strings"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Unlike Blocks, which rewrites the chosen content, Page keeps the whole
// page's markup as it is and only leaves out what is not content. These
// are its lists: what is never content, and the page's furniture.
var (
	pageDropped   = map[atom.Atom]bool{atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true, atom.Iframe: true, atom.Object: true, atom.Embed: true}
	pageFurniture = map[atom.Atom]bool{atom.Header: true, atom.Nav: true, atom.Footer: true, atom.Aside: true}
)

// Page renders the page doc as HTML without comments, scripts, styles,
// frames and embedded objects and, with furniture, its header,
// navigation, footer and asides; with only, just the elements it selects,
// one after another. doc is left as it was: what is left out is taken out
// for the rendering and put back after it.
func Page(doc *html.Node, furniture bool, only cascadia.Matcher) string {
	restore := detach(doc, func(n *html.Node) bool {
		return n.Type == html.CommentNode ||
			n.Type == html.ElementNode && (pageDropped[n.DataAtom] || furniture && only == nil && pageFurniture[n.DataAtom])
	})
	defer restore()
	var b strings.Builder
	if only == nil {
		_ = html.Render(&b, doc)
		return b.String()
	}
	for _, n := range cascadia.QueryAll(doc, only) {
		_ = html.Render(&b, n)
	}
	return b.String()
}

// detach takes the nodes under doc that drop says out of the tree, and
// returns what puts them back where they were.
func detach(doc *html.Node, drop func(*html.Node) bool) (restore func()) {
	var out []*html.Node
	for n := range doc.Descendants() {
		if drop(n) {
			out = append(out, n)
		}
	}
	type place struct{ n, parent, next *html.Node }
	undo := make([]place, 0, len(out))
	for _, n := range out {
		if n.Parent != nil {
			undo = append(undo, place{n, n.Parent, n.NextSibling})
			n.Parent.RemoveChild(n)
		}
	}
	return func() {
		for i := len(undo) - 1; i >= 0; i-- {
			u := undo[i]
			u.parent.InsertBefore(u.n, u.next)
		}
	}
}
