package pick

import (
	"context"
	"net/url"
	"strings"

	"github.com/antchfx/htmlquery"
	"github.com/antchfx/xpath"
	"golang.org/x/net/html"
	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/internal/halt"
	"distill.dev/services/extractor/internal/htmlnode"
)

// run is one Picker run over one page.
type run struct {
	p    *Picker
	ctx  context.Context
	doc  *html.Node
	base *url.URL
	tick *halt.Ticker
	// budget pays for every XPath evaluation of the run.
	budget *budget
	paths  *paths
}

func (r *run) pick() (*distillv1.Picked, error) {
	r.tick = halt.NewTicker(r.ctx)
	r.budget = &budget{tick: r.tick, limit: r.p.moves}
	switch r.p.which {
	case pickCSS:
		matches, err := r.cssMatches(r.doc, r.p.css.sel, -1)
		if err != nil {
			return nil, err
		}
		if r.p.similar {
			return r.similar(first(matches))
		}
		return r.elementPicks(matches)
	case pickXPath:
		return r.xpathPick()
	default:
		root := htmlnode.First(r.doc, "body")
		if root == nil {
			root = r.doc
		}
		found, text, err := find(r.ctx, root, r.p.find)
		if err != nil {
			return nil, err
		}
		if r.p.similar {
			return r.similar(first(found))
		}
		out := &distillv1.Picked{Kind: distillv1.PickedKind_PICKED_KIND_ELEMENTS}
		kept := r.cut(found, out)
		for _, n := range kept {
			sel, err := r.unique(n)
			if err != nil {
				return nil, err
			}
			out.Elements = append(out.Elements, &distillv1.PickedElement{Selector: sel, Text: text.text(n)})
		}
		return out, nil
	}
}

func first(nodes []*html.Node) *html.Node {
	if len(nodes) == 0 {
		return nil
	}
	return nodes[0]
}

// cut keeps the first max of nodes and counts the rest in out.omitted.
func (r *run) cut(nodes []*html.Node, out *distillv1.Picked) []*html.Node {
	if len(nodes) > r.p.max {
		out.Omitted = int32(len(nodes) - r.p.max)
		return nodes[:r.p.max]
	}
	return nodes
}

func (r *run) unique(n *html.Node) (string, error) {
	if r.paths == nil {
		r.paths = newPaths(r.doc)
	}
	return r.paths.unique(r.ctx, n)
}

// elementPicks is what select gives: each match's value, or with fields
// its record.
func (r *run) elementPicks(matches []*html.Node) (*distillv1.Picked, error) {
	out := &distillv1.Picked{Kind: distillv1.PickedKind_PICKED_KIND_VALUES}
	if len(r.p.fields) > 0 {
		out.Kind = distillv1.PickedKind_PICKED_KIND_RECORDS
		for _, m := range r.cut(matches, out) {
			rec, err := r.cssRecord(m)
			if err != nil {
				return nil, err
			}
			out.Records = append(out.Records, rec)
		}
		return out, nil
	}
	// A match without the attribute asked for has no value, so the cap
	// counts values, not matches.
	for _, m := range matches {
		v, ok := r.value(m, r.p.css)
		if !ok {
			continue
		}
		if len(out.Values) == r.p.max {
			out.Omitted++
			continue
		}
		out.Values = append(out.Values, v)
	}
	return out, nil
}

// cssMatches returns the elements under root (root left out) that sel
// matches, in document order, stopping after limit when limit >= 0.
func (r *run) cssMatches(root *html.Node, sel func(*html.Node) bool, limit int) ([]*html.Node, error) {
	var out []*html.Node
	htmlnode.Walk(root, func(n *html.Node) bool {
		if r.tick.Stop() || limit >= 0 && len(out) >= limit {
			return false
		}
		if n.Type == html.ElementNode && n != root && sel(n) {
			out = append(out, n)
		}
		return n.Type == html.ElementNode || n.Type == html.DocumentNode
	})
	return out, r.tick.Err("matching the selector")
}

// value is what c takes of n; false when n lacks the attribute.
func (r *run) value(n *html.Node, c cssPick) (string, bool) {
	switch c.take {
	case takeOwn:
		return ownText(n), true
	case takeHTML:
		return outerHTML(n), true
	case takeAttr:
		for _, a := range n.Attr {
			if a.Namespace == "" && a.Key == c.attr {
				return r.attrValue(a.Key, a.Val), true
			}
		}
		return "", false
	default:
		return visibleText(n), true
	}
}

// attrValue makes the links that href and src hold absolute.
func (r *run) attrValue(name, v string) string {
	if name != "href" && name != "src" || r.base == nil {
		return v
	}
	ref := strings.TrimSpace(strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(v))
	u, err := url.Parse(ref)
	if err != nil {
		return v
	}
	return r.base.ResolveReference(u).String()
}

// cssRecord runs the CSS fields inside m: each takes the first value it
// finds, or none.
func (r *run) cssRecord(m *html.Node) (*distillv1.PickedRecord, error) {
	rec := &distillv1.PickedRecord{}
	for _, f := range r.p.fields {
		pf := &distillv1.PickedField{Name: f.name}
		if f.css.sel == nil {
			if v, ok := r.value(m, f.css); ok {
				pf.Value = proto.String(v)
			}
		} else {
			var found bool
			_, err := r.cssMatches(m, func(n *html.Node) bool {
				if found || !f.css.sel(n) {
					return false
				}
				if v, ok := r.value(n, f.css); ok {
					pf.Value, found = proto.String(v), true
				}
				return found
			}, 1)
			if err != nil {
				return nil, err
			}
		}
		rec.Fields = append(rec.Fields, pf)
	}
	return rec, nil
}

// xpathPick is what xpath gives: its nodes' values or records, or its one
// scalar.
func (r *run) xpathPick() (*distillv1.Picked, error) {
	limit := r.p.max
	if r.p.similar {
		limit = 1
	}
	nodes, total, scalar, err := evaluate(r.p.xpath, r.navigator(), limit)
	if err != nil {
		return nil, err
	}
	if scalar != nil {
		if r.p.similar {
			return nil, failure.New(failure.InvalidArgument, "--similar: XPath %s gives a %s, not nodes", quote(r.p.xpath.String()), kindOf(scalar))
		}
		if len(r.p.fields) > 0 {
			return nil, failure.New(failure.InvalidArgument, "--field: XPath %s gives a %s, not nodes to make records of", quote(r.p.xpath.String()), kindOf(scalar))
		}
		out := &distillv1.Picked{Kind: distillv1.PickedKind_PICKED_KIND_SCALAR}
		switch v := scalar.(type) {
		case float64:
			out.Scalar = &distillv1.Picked_Number{Number: v}
		case string:
			out.Scalar = &distillv1.Picked_String_{String_: v}
		case bool:
			out.Scalar = &distillv1.Picked_Boolean{Boolean: v}
		}
		return out, nil
	}
	if r.p.similar {
		var ex *html.Node
		if len(nodes) > 0 {
			ex = nodes[0].Current()
			if ex.Type != html.ElementNode {
				ex = ex.Parent
			}
		}
		return r.similar(ex)
	}
	out := &distillv1.Picked{Kind: distillv1.PickedKind_PICKED_KIND_VALUES, Omitted: int32(total - len(nodes))}
	if len(r.p.fields) > 0 {
		out.Kind = distillv1.PickedKind_PICKED_KIND_RECORDS
		for _, n := range nodes {
			rec := &distillv1.PickedRecord{}
			for _, f := range r.p.fields {
				pf := &distillv1.PickedField{Name: f.name}
				got, _, s, err := evaluate(f.xpath, n.Copy().(*navigator), 1)
				if err != nil {
					return nil, err
				}
				switch {
				case s != nil:
					pf.Value = proto.String(scalarString(s))
				case len(got) > 0:
					pf.Value = proto.String(r.nodeValue(got[0]))
				}
				rec.Fields = append(rec.Fields, pf)
			}
			out.Records = append(out.Records, rec)
		}
		return out, nil
	}
	for _, n := range nodes {
		out.Values = append(out.Values, r.nodeValue(n))
	}
	return out, nil
}

func (r *run) navigator() *navigator {
	return &navigator{NodeNavigator: htmlquery.CreateXPathNavigator(r.doc), b: r.budget}
}

// nodeValue is an XPath node's value: an element's visible text, a text
// node's text, an attribute's value.
func (r *run) nodeValue(n *navigator) string {
	switch n.NodeType() {
	case xpath.AttributeNode:
		return r.attrValue(n.LocalName(), n.Value())
	case xpath.TextNode:
		return htmlnode.CollapseSpace(n.Value())
	case xpath.CommentNode:
		return n.Value()
	default:
		return visibleText(n.Current())
	}
}

func kindOf(scalar any) string {
	switch scalar.(type) {
	case float64:
		return "number"
	case bool:
		return "boolean"
	default:
		return "string"
	}
}

// similar is what similar gives: from ex, the elements like it with the
// selector that picks them, as elements or, with fields, records.
func (r *run) similar(ex *html.Node) (*distillv1.Picked, error) {
	out := &distillv1.Picked{Kind: distillv1.PickedKind_PICKED_KIND_ELEMENTS, Similar: true}
	if len(r.p.fields) > 0 {
		out.Kind = distillv1.PickedKind_PICKED_KIND_RECORDS
	}
	if ex == nil {
		return out, nil
	}
	if r.paths == nil {
		r.paths = newPaths(r.doc)
	}
	sel, matches, err := similar(r.ctx, r.doc, r.paths, ex)
	if err != nil {
		return nil, err
	}
	out.Selector = &sel
	for _, m := range r.cut(matches, out) {
		if len(r.p.fields) > 0 {
			rec, err := r.cssRecord(m)
			if err != nil {
				return nil, err
			}
			out.Records = append(out.Records, rec)
			continue
		}
		path, err := r.unique(m)
		if err != nil {
			return nil, err
		}
		out.Elements = append(out.Elements, &distillv1.PickedElement{Selector: path, Text: visibleText(m)})
	}
	return out, nil
}
