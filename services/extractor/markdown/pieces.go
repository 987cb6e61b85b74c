package markdown

import (
	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// pieceNodes is about how many nodes one call of the converter renders.
// The converter's working set grows with the subtree it is given (it
// lists every node, then keeps the whole rendering and copies of it), so a
// large page is rendered a piece at a time and each piece is let go once
// rendered. Small content is one piece, rendered exactly as before.
var pieceNodes = 4096

// blockTags are the elements the converter always renders as blocks of
// their own, set off by blank lines. A piece only ends next to one of
// them, so rendering the pieces apart changes nothing but where the
// converter's memory goes.
var blockTags = map[string]bool{
	"p": true, "div": true, "section": true, "article": true, "main": true,
	"header": true, "footer": true, "aside": true, "nav": true, "form": true,
	"h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"ul": true, "ol": true, "table": true, "pre": true, "blockquote": true,
	"hr": true, "figure": true,
}

// containerTags are the blocks that render as nothing but their children,
// so a piece may be cut inside them as well as around them.
var containerTags = map[string]bool{
	"html": true, "body": true, "div": true, "section": true, "article": true,
	"main": true, "header": true, "footer": true, "aside": true, "nav": true,
}

// splitPieces cuts root's subtree into pieces to render in order, each of
// them a node holding a run of whole blocks, taken out of the tree: root
// is left empty, so what is rendered can be freed. A root too small to cut
// is returned as the one piece.
func splitPieces(root *html.Node) []*html.Node {
	if !isContainer(root) || countNodes(root, pieceNodes) < pieceNodes {
		return []*html.Node{root}
	}
	var pieces []*html.Node
	var run []*html.Node
	runSize := 0
	flush := func() {
		if len(run) == 0 {
			return
		}
		wrap := htmlnode.NewElement("div")
		for _, n := range run {
			htmlnode.Remove(n)
			wrap.AppendChild(n)
		}
		pieces = append(pieces, wrap)
		run, runSize = run[:0], 0
	}
	var cut func(n *html.Node)
	cut = func(n *html.Node) {
		for c := n.FirstChild; c != nil; {
			next := c.NextSibling
			size := countNodes(c, pieceNodes)
			switch {
			case size >= pieceNodes && isContainer(c):
				// A big container is cut in turn. It starts and ends a
				// block, so pieces may end on either side of it.
				flush()
				cut(c)
				flush()
			case runSize >= pieceNodes && isBlock(c):
				flush()
				run, runSize = append(run, c), size
			default:
				run, runSize = append(run, c), runSize+size
			}
			c = next
		}
	}
	cut(root)
	flush()
	return pieces
}

func isBlock(n *html.Node) bool { return n.Type == html.ElementNode && blockTags[n.Data] }

func isContainer(n *html.Node) bool {
	return n.Type == html.ElementNode && containerTags[n.Data] || n.Type == html.DocumentNode
}

// countNodes counts the nodes of n's subtree, stopping at limit.
func countNodes(n *html.Node, limit int) int {
	count := 0
	htmlnode.Walk(n, func(*html.Node) bool {
		count++
		return count < limit
	})
	return count
}
