// Package cleanhtml writes a page's chosen content as clean HTML: the
// elements that carry meaning (headings, paragraphs, lists, tables, code,
// quotes, links, images, emphasis) with the few attributes they need,
// links and images made absolute; wrappers, classes, styles, scripts and
// hidden elements gone. It reads the tree without changing it, so it can
// run before the Markdown conversion rewrites it.
package cleanhtml

import (
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/blocks"
	"distill.dev/services/extractor/internal/htmlnode"
	"distill.dev/services/extractor/internal/weburl"
	"distill.dev/services/extractor/markdown"
)

// kept are the elements written out; every other element is unwrapped
// (its children written in its place) unless it is dropped.
var kept = set("p h1 h2 h3 h4 h5 h6 ul ol li table caption thead tbody tfoot tr th td pre code blockquote " +
	"a img em strong b i u br hr figure figcaption dl dt dd sup sub del s ins mark q cite abbr time kbd samp var small")

// blockTags are the kept elements that stand as blocks of their own at
// the top level.
var blockTags = set("p h1 h2 h3 h4 h5 h6 ul ol table pre blockquote figure dl hr")

// dropped are the elements left out with everything in them.
var dropped = set("script style noscript template iframe frame frameset svg math canvas form input button select " +
	"textarea option object embed video audio source track map area head meta link title base dialog")

// voids have no end tag.
var voids = set("img br hr")

func set(list string) map[string]bool {
	m := map[string]bool{}
	for _, t := range strings.Fields(list) {
		m[t] = true
	}
	return m
}

// Blocks renders content as clean HTML, one string per top-level block,
// in order: a budget can then cut between blocks and never inside a tag.
// Text that stands at the top level outside any block is wrapped in <p>.
func Blocks(content *html.Node, base *url.URL) []string {
	if content == nil {
		return nil
	}
	r := renderer{base: base}
	r.blocks(content)
	r.flushInline()
	return r.out
}

// Render is Blocks joined, one block a line.
func Render(content *html.Node, base *url.URL) string {
	return strings.Join(Blocks(content, base), "\n")
}

type renderer struct {
	base   *url.URL
	out    []string
	inline strings.Builder
}

func (r *renderer) flushInline() {
	if s := strings.TrimSpace(r.inline.String()); s != "" {
		r.out = append(r.out, "<p>"+s+"</p>")
	}
	r.inline.Reset()
}

// blocks walks n's children at the top level: kept blocks are written
// whole, wrappers are walked into, and text with inline elements gathers
// into a paragraph that any block-level element ends.
func (r *renderer) blocks(n *html.Node) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c.Type == html.TextNode:
			r.text(&r.inline, c, false)
		case c.Type != html.ElementNode, dropped[c.Data], htmlnode.IsHidden(c):
		case blockTags[c.Data]:
			r.flushInline()
			var b strings.Builder
			r.element(&b, c, false)
			if s := b.String(); s != "" {
				r.out = append(r.out, s)
			}
		case kept[c.Data] && htmlnode.Inline(c.Data) || c.Data == "img" || c.Data == "br":
			r.element(&r.inline, c, false)
		case htmlnode.Inline(c.Data):
			r.children(&r.inline, c, false)
		default:
			r.flushInline()
			r.blocks(c)
			r.flushInline()
		}
	}
}

// containers hold elements, not text: the space between their children
// is layout.
var containers = set("ul ol dl table thead tbody tfoot tr")

func (r *renderer) children(b *strings.Builder, n *html.Node, pre bool) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c.Type == html.TextNode && containers[n.Data] && strings.TrimSpace(c.Data) == "":
		case c.Type == html.TextNode:
			r.text(b, c, pre)
		case c.Type != html.ElementNode, dropped[c.Data], htmlnode.IsHidden(c):
		case kept[c.Data]:
			r.element(b, c, pre)
		case htmlnode.Inline(c.Data) || pre:
			r.children(b, c, pre)
		default:
			// A block wrapper inside a kept element: its text must not
			// run into its neighbour's.
			r.children(b, c, pre)
			if !strings.HasSuffix(b.String(), " ") {
				b.WriteString(" ")
			}
		}
	}
}

func (r *renderer) text(b *strings.Builder, n *html.Node, pre bool) {
	s := n.Data
	if !pre {
		s = collapse(s)
		// Runs of space meet across elements: "a <b> x</b>" has one.
		if strings.HasPrefix(s, " ") && (b.Len() == 0 || strings.HasSuffix(b.String(), " ")) {
			s = s[1:]
		}
	}
	b.WriteString(html.EscapeString(s))
}

func collapse(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\f' {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

func (r *renderer) element(b *strings.Builder, n *html.Node, pre bool) {
	attrs := r.attrs(n)
	if n.Data == "img" && attrs == nil {
		return // no real source: nothing to show
	}
	if n.Data == "a" && len(attrs) == 0 {
		// A link to nowhere (javascript:, a bad URL) is its text.
		r.children(b, n, pre)
		return
	}
	b.WriteString("<" + n.Data)
	for _, a := range attrs {
		b.WriteString(" " + a[0] + `="` + html.EscapeString(a[1]) + `"`)
	}
	b.WriteString(">")
	if voids[n.Data] {
		return
	}
	if htmlnode.Inline(n.Data) || pre || n.Data == "pre" {
		r.children(b, n, pre || n.Data == "pre")
	} else {
		// A block's content starts and ends without space.
		var inner strings.Builder
		r.children(&inner, n, false)
		b.WriteString(strings.TrimSpace(inner.String()))
	}
	b.WriteString("</" + n.Data + ">")
}

// attrs returns the attributes n keeps, in a fixed order. For an img it
// returns nil when the image has no real source.
func (r *renderer) attrs(n *html.Node) [][2]string {
	var out [][2]string
	switch n.Data {
	case "a":
		if href, ok := weburl.Resolve(r.base, htmlnode.Attr(n, "href"), "http", "https", "mailto"); ok {
			out = append(out, [2]string{"href", href})
		}
	case "img":
		src := markdown.ImageSource(n, r.base)
		if src == "" {
			return nil
		}
		out = append(out, [2]string{"src", src}, [2]string{"alt", strings.TrimSpace(htmlnode.Attr(n, "alt"))})
	case "th", "td":
		for _, name := range []string{"colspan", "rowspan"} {
			if v, err := strconv.Atoi(strings.TrimSpace(htmlnode.Attr(n, name))); err == nil && v > 1 && v <= 1000 {
				out = append(out, [2]string{name, strconv.Itoa(v)})
			}
		}
	case "ol":
		if v, err := strconv.Atoi(strings.TrimSpace(htmlnode.Attr(n, "start"))); err == nil && v != 1 {
			out = append(out, [2]string{"start", strconv.Itoa(v)})
		}
	case "pre":
		if lang := markdown.CodeLanguage(n); lang != "" {
			out = append(out, [2]string{"class", "language-" + lang})
		}
	case "time":
		if v := htmlnode.Attr(n, "datetime"); v != "" {
			out = append(out, [2]string{"datetime", v})
		}
	case "abbr":
		if v := htmlnode.Attr(n, "title"); v != "" {
			out = append(out, [2]string{"title", v})
		}
	}
	return out
}

// FromMarkdown writes Markdown blocks as simple HTML, for content that
// was never HTML (a PDF, a text file): headings as headings, code and
// tables as preformatted text, the rest as paragraphs.
func FromMarkdown(md string) []string {
	var out []string
	for _, b := range blocks.Parse(md) {
		switch b.Kind {
		case blocks.Heading:
			tag := "h" + strconv.Itoa(b.Level)
			out = append(out, "<"+tag+">"+html.EscapeString(b.HeadingText())+"</"+tag+">")
		case blocks.Code, blocks.Table:
			out = append(out, "<pre>"+html.EscapeString(b.Text)+"</pre>")
		case blocks.Rule:
			out = append(out, "<hr>")
		default:
			out = append(out, "<p>"+html.EscapeString(b.Text)+"</p>")
		}
	}
	return out
}
