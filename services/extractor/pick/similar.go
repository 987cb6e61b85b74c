package pick

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"

	"distill.dev/proto/failure"
	"distill.dev/services/extractor/internal/halt"
	"distill.dev/services/extractor/internal/htmlnode"
)

// similar returns every element like ex and one CSS selector that picks
// exactly them, ex among them, in document order.
//
// Like means in the same place of another item of the list, grid or table
// ex sits in. Going up from ex, each ancestor whose parent holds other
// children like it (same tag, sharing a class when it has any; any row or
// list item; never a cell, whose row is the item) is a candidate item; the rest of the way down to ex
// is the path inside the item, tags and classes, and a cell keeps its
// column. The candidate that finds the most elements wins, the innermost
// on a tie: the product cards of a grid rather than the lines of one
// card, the rows of a table rather than the cells of one row. The
// selector is then the shortest end of item > ... > ex that picks the
// same elements, else one anchored on the list's own unique path.
func similar(ctx context.Context, doc *html.Node, pt *paths, ex *html.Node) (string, []*html.Node, error) {
	tick := halt.NewTicker(ctx)
	type candidate struct {
		steps   []string // item step first, ex's step last
		anchor  string   // the list's unique path
		parent  string   // the list's own step
		matches []*html.Node
	}
	var best *candidate
	var inner []string // the steps below the level, down to ex
	for level := ex; level != nil && level.Type == html.ElementNode && level.Data != "body" && level.Data != "html"; level = level.Parent {
		parent := level.Parent
		if parent == nil || parent.Type != html.ElementNode {
			break
		}
		// The cells of a row are its columns, not items like each other:
		// the rows are the table's items.
		if items := likeSiblings(level); len(items) >= 2 && level.Data != "td" && level.Data != "th" {
			steps := append([]string{itemStep(level, items)}, inner...)
			anchor, err := pt.unique(ctx, parent)
			if err != nil {
				return "", nil, err
			}
			matches, err := query(tick, doc, anchor+" > "+strings.Join(steps, " > "))
			if err != nil {
				return "", nil, err
			}
			if slices.Contains(matches, ex) && (best == nil || len(matches) > len(best.matches)) {
				best = &candidate{steps: steps, anchor: anchor, parent: classStep(parent), matches: matches}
			}
		}
		inner = append([]string{pathStep(level)}, inner...)
	}
	if best == nil {
		sel, err := pt.unique(ctx, ex)
		return sel, []*html.Node{ex}, err
	}
	var tries []string
	for k := len(best.steps) - 1; k >= 0; k-- {
		tries = append(tries, strings.Join(best.steps[k:], " > "))
	}
	tries = append(tries, best.parent+" > "+strings.Join(best.steps, " > "))
	for _, sel := range tries {
		got, err := query(tick, doc, sel)
		if err != nil {
			return "", nil, err
		}
		if slices.Equal(got, best.matches) {
			return sel, best.matches, nil
		}
	}
	return best.anchor + " > " + strings.Join(best.steps, " > "), best.matches, nil
}

// likeSiblings returns the children of n's parent like n, n included.
func likeSiblings(n *html.Node) []*html.Node {
	var out []*html.Node
	for c := n.Parent.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && alike(c, n) {
			out = append(out, c)
		}
	}
	return out
}

// repeating are the elements made to repeat, alike whatever their classes
// (odd and even rows, the active item of a menu).
var repeating = map[string]bool{"tr": true, "li": true, "td": true, "th": true, "dt": true, "dd": true, "option": true}

func alike(a, b *html.Node) bool {
	if a.Data != b.Data {
		return false
	}
	if a == b || repeating[a.Data] {
		return true
	}
	ca, cb := classes(a), classes(b)
	if len(ca) == 0 && len(cb) == 0 {
		return true
	}
	for _, c := range ca {
		if slices.Contains(cb, c) {
			return true
		}
	}
	return false
}

func classes(n *html.Node) []string {
	return strings.Fields(htmlnode.Attr(n, "class"))
}

// itemStep is the step that picks the items: their tag and the classes
// they all share.
func itemStep(n *html.Node, items []*html.Node) string {
	shared := classes(n)
	for _, it := range items {
		cs := classes(it)
		shared = slices.DeleteFunc(shared, func(c string) bool { return !slices.Contains(cs, c) })
	}
	return tagWithClasses(n.Data, shared)
}

// classStep is a step of an element's tag and classes.
func classStep(n *html.Node) string { return tagWithClasses(n.Data, classes(n)) }

// pathStep is a step inside an item: its tag and classes, and for a cell
// its column, so that the same column is picked in every row.
func pathStep(n *html.Node) string {
	s := classStep(n)
	if n.Data == "td" || n.Data == "th" {
		col := 0
		for c := n; c != nil; c = c.PrevSibling {
			if c.Type == html.ElementNode {
				col++
			}
		}
		s += fmt.Sprintf(":nth-child(%d)", col)
	}
	return s
}

func tagWithClasses(tag string, cs []string) string {
	var b strings.Builder
	b.WriteString(cssIdent(tag))
	seen := map[string]bool{}
	for _, c := range cs {
		if !seen[c] {
			seen[c] = true
			b.WriteString("." + cssIdent(c))
		}
	}
	return b.String()
}

// query returns the elements of doc sel matches, in document order. sel is
// one this package wrote, so it is compiled without the bounds users'
// selectors get.
func query(tick *halt.Ticker, doc *html.Node, sel string) ([]*html.Node, error) {
	s, err := cascadia.Compile(sel)
	if err != nil {
		return nil, failure.Wrap(failure.Internal, err, "similar: wrote a selector it cannot parse, %q", sel)
	}
	var out []*html.Node
	htmlnode.Walk(doc, func(n *html.Node) bool {
		if tick.Stop() {
			return false
		}
		if n.Type == html.ElementNode && s.Match(n) {
			out = append(out, n)
		}
		return true
	})
	return out, tick.Err("finding similar elements")
}
