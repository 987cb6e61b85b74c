package extract

import (
	"context"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
	"distill.dev/services/extractor/pick"
	"distill.dev/services/extractor/readable"
)

// The bounds on a --selector are the pick package's, shared by every CSS
// selector the extractor runs.
const (
	MaxSelectorBytes    = pick.MaxSelectorBytes
	MaxSelectorNesting  = pick.MaxSelectorNesting
	MaxSelectorHasDepth = pick.MaxSelectorHasDepth
	MaxSelectorParts    = pick.MaxSelectorParts
)

// CheckSelector reports whether a --selector / selector option can be
// used: an error naming the problem when cascadia cannot parse it or it is
// over one of the bounds, nil for a usable or empty one. Every door calls
// it before fetching, and the extractor again before matching.
func CheckSelector(sel string) error {
	_, err := compileSelector(sel)
	return err
}

// compileSelector checks and parses options.selector; an empty one gives
// nil.
func compileSelector(sel string) (cascadia.Selector, error) { return pick.CompileCSS(sel) }

// selectAll gathers the elements sel matches into one container, in
// document order, without scripts, styles and hidden elements. A match
// inside another match comes with it and is not tried again. It tries sel
// on one element at a time so that ctx can stop it between two.
func selectAll(ctx context.Context, doc *html.Node, sel cascadia.Selector) (*html.Node, error) {
	var picked []*html.Node
	tick := newTicker(ctx)
	htmlnode.Walk(doc, func(n *html.Node) bool {
		if tick.stop() {
			return false
		}
		if n.Type != html.ElementNode {
			return n.Type == html.DocumentNode
		}
		if sel.Match(n) {
			picked = append(picked, n)
			return false
		}
		return true
	})
	if err := tick.err("matching the selector"); err != nil {
		return nil, err
	}
	container := htmlnode.NewElement("div")
	for _, n := range picked {
		readable.RemoveNonContent(n)
		htmlnode.Remove(n)
		container.AppendChild(n)
	}
	return container, nil
}
