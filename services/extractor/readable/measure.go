package readable

import (
	"unicode"
	"unicode/utf8"

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
// pass so that no later step walks a subtree to measure it. It holds an
// entry per element, which on a page of megabytes is the largest thing
// the scorer keeps beside the tree, so entries are kept packed.
type treeStats map[*html.Node]packedStats

// packedStats is textStats in half the space: no element holds more than
// 2^31 runes, since a page is at most a few tens of megabytes.
type packedStats struct {
	text, link, commas int32
	hint               hint
	blocks             bool
}

func pack(s textStats) packedStats {
	return packedStats{text: int32(s.text), link: int32(s.link), commas: int32(s.commas), hint: s.hint, blocks: s.blocks}
}

func (t treeStats) of(n *html.Node) textStats {
	p := t[n]
	return textStats{text: int(p.text), link: int(p.link), commas: int(p.commas), hint: p.hint, blocks: p.blocks}
}

// measure computes the stats of root's subtree in one pass, writing each
// element's figures once, when its subtree is done.
func measure(root *html.Node) treeStats {
	// Sized once: growing a map of a million entries copies it and
	// briefly holds both copies.
	elements := 0
	htmlnode.Walk(root, func(n *html.Node) bool {
		if n.Type == html.ElementNode {
			elements++
		}
		return true
	})
	st := make(treeStats, elements)
	open := []textStats{{}}
	hints := newHintCache()
	skipped := func(n *html.Node) bool {
		return n.Type != html.ElementNode || nonContent[n.Data] && n != root
	}
	htmlnode.WalkAround(root, func(n *html.Node) bool {
		switch {
		case n.Type == html.TextNode:
			top := &open[len(open)-1]
			s := n.Data
			for i := 0; i < len(s); {
				c := s[i]
				if c < utf8.RuneSelf {
					if c == ',' {
						top.commas++
					}
					if !asciiSpace[c] {
						top.text++
					}
					i++
					continue
				}
				r, size := utf8.DecodeRuneInString(s[i:])
				switch {
				case r == '，' || r == '、':
					top.commas++
					top.text++
				case !unicode.IsSpace(r):
					top.text++
				}
				i += size
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
		s.hint = hints.of(n)
		st[n] = pack(s)
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
		cs := t.of(c)
		s.text += cs.text
		s.link += cs.link
		s.commas += cs.commas
	}
	t[container] = pack(s)
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
		as.text += int32(sign) * s.text
		as.link += int32(sign) * s.link
		as.commas += int32(sign) * s.commas
		t[a] = as
		if a == root {
			break
		}
	}
}
