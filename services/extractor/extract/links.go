package extract

import (
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/html"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/internal/htmlnode"
	"distill.dev/services/extractor/internal/weburl"
)

// linksIn returns the http(s) links under root, absolute against base,
// one per href in the order they first appear. The result is never nil.
func linksIn(root *html.Node, base *url.URL) []*distillv1.Link {
	links := []*distillv1.Link{}
	seen := map[string]bool{}
	for _, a := range htmlnode.Elements(root, "a", "area") {
		href, ok := weburl.Resolve(base, htmlnode.Attr(a, "href"), "http", "https")
		if !ok || seen[href] {
			continue
		}
		seen[href] = true
		links = append(links, &distillv1.Link{Href: href, Text: linkText(a)})
	}
	return links
}

// linkText is a link's visible text, or for an image link the image's alt,
// or the link's label.
func linkText(a *html.Node) string {
	if t := htmlnode.Text(a); t != "" {
		return t
	}
	if img := htmlnode.First(a, "img"); img != nil {
		if alt := htmlnode.CollapseSpace(htmlnode.Attr(img, "alt")); alt != "" {
			return alt
		}
	}
	for _, attr := range []string{"aria-label", "title", "alt"} {
		if t := htmlnode.CollapseSpace(htmlnode.Attr(a, attr)); t != "" {
			return t
		}
	}
	return ""
}

// Bounds on table extraction: HTML caps colspan at 1000, and a hostile
// table must not make millions of cells.
const (
	maxColspan  = 1000
	maxRowCells = 1000
)

// tablesIn returns every table under root, nested tables included, as
// headers and rows of cell text. A cell spanning columns repeats its text
// in each. The result is never nil.
func tablesIn(root *html.Node) []*distillv1.Table {
	tables := []*distillv1.Table{}
	for _, t := range htmlnode.Elements(root, "table") {
		tables = append(tables, tableOf(t))
	}
	return tables
}

func tableOf(t *html.Node) *distillv1.Table {
	var head, body [][]string
	for _, sec := range rowGroups(t) {
		for _, tr := range sec.rows {
			cells, allTH := rowCells(tr)
			if len(cells) == 0 {
				continue
			}
			if sec.head || (len(head) == 0 && len(body) == 0 && allTH) {
				head = append(head, cells)
				continue
			}
			body = append(body, cells)
		}
	}
	out := &distillv1.Table{}
	if len(head) > 0 {
		out.Headers = head[0]
		// Further header rows are data the reader still needs.
		for _, h := range head[1:] {
			out.Rows = append(out.Rows, &distillv1.TableRow{Cells: h})
		}
	}
	for _, r := range body {
		out.Rows = append(out.Rows, &distillv1.TableRow{Cells: r})
	}
	return out
}

type rowGroup struct {
	head bool
	rows []*html.Node
}

// rowGroups returns the table's own rows, by section, in document order;
// rows of nested tables are theirs, not this one's.
func rowGroups(t *html.Node) []rowGroup {
	var groups []rowGroup
	for c := t.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		switch c.Data {
		case "tr":
			groups = append(groups, rowGroup{rows: []*html.Node{c}})
		case "thead", "tbody", "tfoot":
			g := rowGroup{head: c.Data == "thead"}
			for r := c.FirstChild; r != nil; r = r.NextSibling {
				if r.Type == html.ElementNode && r.Data == "tr" {
					g.rows = append(g.rows, r)
				}
			}
			groups = append(groups, g)
		}
	}
	return groups
}

// rowCells returns a row's cell texts and whether every cell is a th.
func rowCells(tr *html.Node) ([]string, bool) {
	var cells []string
	allTH := true
	for c := tr.FirstChild; c != nil && len(cells) < maxRowCells; c = c.NextSibling {
		if c.Type != html.ElementNode || (c.Data != "td" && c.Data != "th") {
			continue
		}
		allTH = allTH && c.Data == "th"
		text := cellText(c)
		span, err := strconv.Atoi(strings.TrimSpace(htmlnode.Attr(c, "colspan")))
		if err != nil || span < 1 {
			span = 1
		}
		span = min(span, maxColspan, maxRowCells-len(cells))
		for range span {
			cells = append(cells, text)
		}
	}
	return cells, allTH && len(cells) > 0
}

// cellText is a cell's text without the text of tables nested in it,
// which are tables of their own.
func cellText(cell *html.Node) string {
	var parts []string
	htmlnode.Walk(cell, func(n *html.Node) bool {
		switch n.Type {
		case html.ElementNode:
			return n.Data != "table" && n.Data != "script" && n.Data != "style"
		case html.TextNode:
			parts = append(parts, n.Data)
		}
		return true
	})
	return htmlnode.CollapseSpace(strings.Join(parts, ""))
}
