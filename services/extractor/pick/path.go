package pick

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/halt"
	"distill.dev/services/extractor/internal/htmlnode"
)

// paths writes CSS selectors that pick one element alone: the element's
// path from its nearest ancestor whose id is unique on the page, or from
// the root, each step its tag and, among siblings of the same tag, its
// :nth-of-type. Each path is checked by running it.
type paths struct {
	doc *html.Node
	ids map[string]int
	// level lists the page's elements by tag and depth: a path of child
	// steps can pick only elements of its last tag at its depth.
	level map[tagDepth][]*html.Node
	depth map[*html.Node]int
	// checks is what is left of the run's budget for running paths
	// against other elements; see picksAlone.
	checks int
}

type tagDepth struct {
	tag   string
	depth int
}

// maxPathChecks bounds, over one run, how many elements the paths are run
// against besides their own. A selector's :nth-of-type counts the
// siblings of each element it is tried on, so ten thousand paths run
// against ten thousand list items would take minutes; past the budget a
// path is checked against its own element only, and picks it alone by
// construction.
const maxPathChecks = 20_000

func newPaths(doc *html.Node) *paths {
	p := &paths{doc: doc, ids: map[string]int{}, level: map[tagDepth][]*html.Node{}, depth: map[*html.Node]int{}, checks: maxPathChecks}
	htmlnode.Walk(doc, func(n *html.Node) bool {
		if n.Type == html.ElementNode {
			if id := htmlnode.Attr(n, "id"); id != "" {
				p.ids[id]++
			}
			d := p.depth[n.Parent] + 1
			p.depth[n] = d
			k := tagDepth{n.Data, d}
			p.level[k] = append(p.level[k], n)
		}
		return true
	})
	return p
}

// uniqueID returns n's id when no other element of the page has it.
func (p *paths) uniqueID(n *html.Node) (string, bool) {
	id := htmlnode.Attr(n, "id")
	return id, id != "" && p.ids[id] == 1
}

// path is n's selector from its nearest ancestor with a unique id (when
// fromID) or from the root.
func (p *paths) path(n *html.Node, fromID bool) string {
	var steps []string
	for e := n; e != nil && e.Type == html.ElementNode; e = e.Parent {
		if id, ok := p.uniqueID(e); ok && fromID {
			steps = append(steps, "#"+cssIdent(id))
			break
		}
		steps = append(steps, positionStep(e))
	}
	slices.Reverse(steps)
	return strings.Join(steps, " > ")
}

// positionStep is one step of a path: the tag, with :nth-of-type when a
// sibling shares it.
func positionStep(e *html.Node) string {
	tag := cssIdent(e.Data)
	if e.Parent == nil || e.Parent.Type != html.ElementNode {
		return tag
	}
	index, count := 0, 0
	for c := e.Parent.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && c.Data == e.Data {
			count++
			if c == e {
				index = count
			}
		}
	}
	if count == 1 {
		return tag
	}
	return fmt.Sprintf("%s:nth-of-type(%d)", tag, index)
}

// unique returns a selector that picks n alone, checked by running it: the
// path from the nearest unique id, else the path from the root.
func (p *paths) unique(ctx context.Context, n *html.Node) (string, error) {
	tick := halt.NewTicker(ctx)
	sel := p.path(n, true)
	if p.picksAlone(tick, sel, n) {
		return sel, nil
	}
	if err := tick.Err("checking a selector"); err != nil {
		return "", err
	}
	// The path from the root picks n alone by construction; an id path
	// can only fail it through an id that cascadia reads otherwise.
	return p.path(n, false), tick.Err("checking a selector")
}

// picksAlone reports whether sel picks n and, as far as the run's budget
// goes, nothing else.
func (p *paths) picksAlone(tick *halt.Ticker, sel string, n *html.Node) bool {
	s, err := cascadia.Compile(sel)
	if err != nil || !s.Match(n) {
		return false
	}
	for _, e := range p.level[tagDepth{n.Data, p.depth[n]}] {
		if e == n {
			continue
		}
		if p.checks <= 0 || tick.Stop() {
			break
		}
		p.checks--
		if s.Match(e) {
			return false
		}
	}
	return !tick.Stopped()
}

// cssIdent escapes s as a CSS identifier (CSSOM's serialize an
// identifier), so any id or tag name can stand in a selector.
func cssIdent(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == 0:
			b.WriteRune('\uFFFD')
		case r >= 0x1 && r <= 0x1f || r == 0x7f,
			i == 0 && r >= '0' && r <= '9',
			i == 1 && r >= '0' && r <= '9' && s[0] == '-':
			fmt.Fprintf(&b, `\%x `, r)
		case i == 0 && r == '-' && len(s) == 1:
			b.WriteString(`\-`)
		case r >= 0x80 || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
			b.WriteRune(r)
		default:
			b.WriteByte('\\')
			b.WriteRune(r)
		}
	}
	return b.String()
}
