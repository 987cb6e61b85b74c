package extract

import (
	"slices"
	"strings"
	"unicode"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// visibleText is the text under root as a reader sees it, like
// htmlnode.Text: whitespace collapsed, block boundaries as spaces, scripts
// and other silent elements left out. It also passes over the subtrees of
// the skip tags (a label's select, a cell's nested table) and stops after
// limit runes, reporting the cut, so that naming an element that wraps a
// whole page costs no more than the name. A limit of 0 means none.
func visibleText(root *html.Node, limit int, skip ...string) (string, bool) {
	if root == nil {
		return "", false
	}
	var b strings.Builder
	runes := 0
	started, space := false, false
	// emit writes the words of s and reports false once the limit is hit.
	emit := func(s string) bool {
		for _, r := range s {
			if unicode.IsSpace(r) {
				space = started
				continue
			}
			extra := 1
			if space {
				extra = 2
			}
			if limit > 0 && runes+extra > limit {
				return false
			}
			if space {
				b.WriteByte(' ')
				space = false
			}
			b.WriteRune(r)
			runes += extra
			started = true
		}
		return true
	}
	skipped := func(n *html.Node) bool {
		return n != root && n.Type == html.ElementNode && (htmlnode.Silent(n.Data) || slices.Contains(skip, n.Data))
	}
	boundary := func(n *html.Node) {
		if n.Type == html.ElementNode && !htmlnode.Inline(n.Data) && !htmlnode.Silent(n.Data) {
			space = started
		}
	}

	n := root
	for {
		descend := true
		switch n.Type {
		case html.ElementNode:
			descend = !skipped(n)
			boundary(n)
		case html.TextNode:
			descend = false
			if !emit(n.Data) {
				return b.String(), true
			}
		}
		if descend && n.FirstChild != nil {
			n = n.FirstChild
			continue
		}
		for {
			boundary(n)
			if n == root || n.Parent == nil {
				return b.String(), false
			}
			if n.NextSibling != nil {
				n = n.NextSibling
				break
			}
			n = n.Parent
		}
	}
}
