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
// list item; never a cell, whose row is the item) is a candidate item;
// the rest of the way down to ex is the path inside the item, tags and
// classes, and a cell keeps its column. The candidate that finds the most
// elements wins, the innermost on a tie: the product cards of a grid
// rather than the lines of one card, the rows of a table rather than the
// cells of one row. The selector is then the shortest end of
// item > ... > ex that picks the same elements, else the list's step
// before it, else the list's unique path; last, each class past a step's
// first that it can do without is dropped.
func similar(ctx context.Context, doc *html.Node, pt *paths, ex *html.Node) (string, []*html.Node, error) {
	tick := halt.NewTicker(ctx)
	type candidate struct {
		steps   []step // item step first, ex's step last
		anchor  string // the list's unique path
		parent  step   // the list's own step
		matches []*html.Node
	}
	var best *candidate
	var inner []step // the steps below the level, down to ex
	for level := ex; level != nil && level.Type == html.ElementNode && level.Data != "body" && level.Data != "html"; level = level.Parent {
		parent := level.Parent
		if parent == nil || parent.Type != html.ElementNode {
			break
		}
		// The cells of a row are its columns, not items like each other:
		// the rows are the table's items.
		if items := likeSiblings(level); len(items) >= 2 && level.Data != "td" && level.Data != "th" {
			steps := append([]step{itemStep(level, items)}, inner...)
			anchor, err := pt.unique(ctx, parent)
			if err != nil {
				return "", nil, err
			}
			matches, err := query(tick, doc, selector(anchor, steps))
			if err != nil {
				return "", nil, err
			}
			if slices.Contains(matches, ex) && (best == nil || len(matches) > len(best.matches)) {
				best = &candidate{steps: steps, anchor: anchor, parent: classStep(parent), matches: matches}
			}
		}
		inner = append([]step{pathStep(level)}, inner...)
	}
	if best == nil {
		sel, err := pt.unique(ctx, ex)
		return sel, []*html.Node{ex}, err
	}
	picksThem := func(anchor string, steps []step) (bool, error) {
		got, err := query(tick, doc, selector(anchor, steps))
		return slices.Equal(got, best.matches), err
	}
	// The shortest form that picks them all.
	anchor, steps := best.anchor, best.steps
	for k := len(best.steps) - 1; k >= -1; k-- {
		try := best.steps[max(k, 0):]
		if k < 0 {
			try = append([]step{best.parent}, best.steps...)
		}
		ok, err := picksThem("", try)
		if err != nil {
			return "", nil, err
		}
		if ok {
			anchor, steps = "", try
			break
		}
	}
	// Then without the classes it can do without (page builders give an
	// element a dozen), but for one a step: a class says what the element
	// is, so the selector still holds on the site's next page.
	// The first class stays: it is most often the one a person named, the
	// later ones a framework's.
	for i := range steps {
		for j := len(steps[i].classes) - 1; j >= 1; j-- {
			lighter := slices.Clone(steps)
			lighter[i].classes = slices.Delete(slices.Clone(steps[i].classes), j, j+1)
			ok, err := picksThem(anchor, lighter)
			if err != nil {
				return "", nil, err
			}
			if ok {
				steps = lighter
			}
		}
	}
	return selector(anchor, steps), best.matches, nil
}

// step is one compound selector of a similar selector: a tag, classes,
// and for a cell its column.
type step struct {
	tag     string
	classes []string
	column  int
}

func (s step) String() string {
	var b strings.Builder
	b.WriteString(cssIdent(s.tag))
	for _, c := range s.classes {
		b.WriteString("." + cssIdent(c))
	}
	if s.column > 0 {
		fmt.Fprintf(&b, ":nth-child(%d)", s.column)
	}
	return b.String()
}

// selector joins steps with child combinators after anchor, a unique path
// or "".
func selector(anchor string, steps []step) string {
	parts := make([]string, 0, len(steps)+1)
	if anchor != "" {
		parts = append(parts, anchor)
	}
	for _, s := range steps {
		parts = append(parts, s.String())
	}
	return strings.Join(parts, " > ")
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
func itemStep(n *html.Node, items []*html.Node) step {
	shared := classes(n)
	for _, it := range items {
		cs := classes(it)
		shared = slices.DeleteFunc(shared, func(c string) bool { return !slices.Contains(cs, c) })
	}
	return step{tag: n.Data, classes: unique(shared)}
}

// classStep is a step of an element's tag and classes.
func classStep(n *html.Node) step { return step{tag: n.Data, classes: unique(classes(n))} }

// pathStep is a step inside an item: its tag and classes, and for a cell
// its column, so that the same column is picked in every row.
func pathStep(n *html.Node) step {
	s := classStep(n)
	if n.Data == "td" || n.Data == "th" {
		for c := n; c != nil; c = c.PrevSibling {
			if c.Type == html.ElementNode {
				s.column++
			}
		}
	}
	return s
}

func unique(cs []string) []string {
	var out []string
	for _, c := range cs {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
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
