package extract

import (
	"slices"
	"strings"

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
	var b strings.Builder
	runes, cut := 0, false
	var skipped func(*html.Node) bool
	if len(skip) > 0 {
		skipped = func(n *html.Node) bool { return slices.Contains(skip, n.Data) }
	}
	// A word is written a rune at a time until the limit is hit, the space
	// before it together with its first rune.
	htmlnode.Words(root, skipped, func(w string, space bool) bool {
		for i, r := range w {
			spaced := space && i == 0
			extra := 1
			if spaced {
				extra = 2
			}
			if limit > 0 && runes+extra > limit {
				cut = true
				return false
			}
			if spaced {
				b.WriteByte(' ')
			}
			b.WriteRune(r)
			runes += extra
		}
		return true
	})
	return b.String(), cut
}
