package readable

import (
	"unicode"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// textStats are the text figures of one subtree, in non-space runes.
type textStats struct {
	text int // all visible text
	link int // text inside links
}

// contentLen is the text that is not link text.
func (s textStats) contentLen() int { return s.text - s.link }

// linkDensity is the share of the text that sits in links.
func (s textStats) linkDensity() float64 {
	if s.text == 0 {
		return 0
	}
	return float64(s.link) / float64(s.text)
}

// treeStats holds textStats for every element of a subtree, computed in one
// pass so the scorer never walks a subtree twice.
type treeStats map[*html.Node]textStats

func (t treeStats) of(n *html.Node) textStats { return t[n] }

// measure computes the stats of root's subtree. Nodes are listed in document
// order; walking the list backwards meets every node after all of its
// descendants, so each one adds its finished figures to its parent.
func measure(root *html.Node) treeStats {
	var order []*html.Node
	htmlnode.Walk(root, func(n *html.Node) bool {
		if n.Type == html.ElementNode && nonContent[n.Data] && n != root {
			return false
		}
		order = append(order, n)
		return true
	})
	st := make(treeStats, len(order)/2)
	for i := len(order) - 1; i >= 0; i-- {
		n := order[i]
		s := st[n]
		switch n.Type {
		case html.TextNode:
			for _, r := range n.Data {
				if !unicode.IsSpace(r) {
					s.text++
				}
			}
		case html.ElementNode:
			if n.Data == "a" {
				s.link = s.text
			}
		default:
			continue
		}
		if n.Type == html.ElementNode {
			st[n] = s
		}
		if n != root && n.Parent != nil {
			p := st[n.Parent]
			p.text += s.text
			p.link += s.link
			st[n.Parent] = p
		}
	}
	return st
}
