package readable

import (
	"unicode"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// textStats are the figures of one subtree, text in non-space runes.
type textStats struct {
	text   int // all visible text
	link   int // text inside links
	commas int // commas in the text, which mark sentences of prose
	hint   hint
	// blocks says whether the element has children that are blocks, as
	// measured, before any removal.
	blocks bool
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
// pass so that no later step walks a subtree to measure it.
type treeStats map[*html.Node]textStats

func (t treeStats) of(n *html.Node) textStats { return t[n] }

// measure computes the stats of root's subtree in one pass, writing each
// element's figures once, when its subtree is done.
func measure(root *html.Node) treeStats {
	st := make(treeStats, 256)
	open := []textStats{{}}
	skipped := func(n *html.Node) bool {
		return n.Type != html.ElementNode || nonContent[n.Data] && n != root
	}
	htmlnode.WalkAround(root, func(n *html.Node) bool {
		switch {
		case n.Type == html.TextNode:
			top := &open[len(open)-1]
			for _, r := range n.Data {
				switch {
				case r == ',' || r == '，' || r == '、':
					top.commas++
					top.text++
				case !unicode.IsSpace(r):
					top.text++
				}
			}
			return false
		case skipped(n):
			return false
		}
		open = append(open, textStats{})
		return true
	}, func(n *html.Node) {
		if skipped(n) {
			return
		}
		s := open[len(open)-1]
		open = open[:len(open)-1]
		if n.Data == "a" {
			s.link = s.text
		}
		s.hint = hintOf(n)
		st[n] = s
		top := &open[len(open)-1]
		if !inlineTags[n.Data] && n.Data != "br" && n.Data != "img" {
			top.blocks = true
		}
		top.text += s.text
		top.link += s.link
		top.commas += s.commas
	})
	return st
}

// add records the figures of a container built from elements already
// measured.
func (t treeStats) add(container *html.Node) {
	var s textStats
	for c := container.FirstChild; c != nil; c = c.NextSibling {
		cs := t[c]
		s.text += cs.text
		s.link += cs.link
		s.commas += cs.commas
	}
	t[container] = s
}

// detach removes n from the tree and its figures from those of its
// ancestors up to root.
func (t treeStats) detach(n, root *html.Node) {
	if n.Type == html.ElementNode {
		t.shift(n, root, -1)
	}
	htmlnode.Remove(n)
}

// shift adds the figures of n, times sign (1 when n has just been inserted,
// -1 when it is leaving), to those of its ancestors up to root.
func (t treeStats) shift(n, root *html.Node, sign int) {
	s := t[n]
	if s.text == 0 && s.link == 0 {
		return
	}
	for a := n.Parent; a != nil; a = a.Parent {
		as := t[a]
		as.text += sign * s.text
		as.link += sign * s.link
		as.commas += sign * s.commas
		t[a] = as
		if a == root {
			break
		}
	}
}
