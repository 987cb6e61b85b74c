// Package markdown renders cleaned HTML as compact Markdown for language
// models: absolute links, real image sources, fenced code with its language,
// GFM tables, and no empty links or runs of blank lines.
package markdown

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
	"distill.dev/services/extractor/internal/weburl"
)

// Converter turns HTML subtrees into Markdown. It is safe for concurrent
// use.
type Converter struct {
	conv *converter.Converter
}

// New returns a Converter.
func New() *Converter {
	conv := converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(),
		commonmark.NewCommonmarkPlugin(
			commonmark.WithListEndComment(false),
			commonmark.WithLinkEmptyContentBehavior(commonmark.LinkBehaviorSkip),
			commonmark.WithLinkEmptyHrefBehavior(commonmark.LinkBehaviorSkip),
		),
		table.NewTablePlugin(
			table.WithSpanCellBehavior(table.SpanBehaviorMirror),
			table.WithHeaderPromotion(true),
			table.WithSkipEmptyRows(true),
			table.WithCellPaddingBehavior(table.CellPaddingBehaviorMinimal),
		),
		strikethrough.NewStrikethroughPlugin(),
	))
	// Before every other renderer: once the call's context has ended, each
	// node renders as nothing, so the conversion of a huge page winds up
	// at once and Convert reports the context's error.
	conv.Register.Renderer(func(ctx converter.Context, _ converter.Writer, _ *html.Node) converter.RenderStatus {
		if ctx.Err() != nil {
			return converter.RenderSuccess
		}
		return converter.RenderTryNext
	}, converter.PriorityEarly-50)
	return &Converter{conv: conv}
}

// Convert renders n as Markdown, resolving links and images against base.
// It rewrites n's subtree while doing so, and takes a large subtree apart
// to render it a piece at a time: convert last, after everything else has
// read the tree.
func (c *Converter) Convert(ctx context.Context, n *html.Node, base *url.URL) (string, error) {
	if n == nil {
		return "", nil
	}
	prepare(n, base)
	pieces := splitPieces(n)
	var b strings.Builder
	for i, piece := range pieces {
		out, err := c.conv.ConvertNode(piece, converter.WithContext(ctx))
		if err == nil {
			err = ctx.Err()
		}
		if err != nil {
			return "", fmt.Errorf("convert to markdown: %w", err)
		}
		// Each piece is let go as soon as it is rendered: the tree shrinks
		// as the Markdown grows.
		pieces[i] = nil
		// Tidy's work, less trimming the piece's ends: the spaces of its
		// first and last lines are not the ends of the page.
		md := strings.Trim(tidy(string(out)), "\n")
		if strings.TrimSpace(md) == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(md)
	}
	return strings.TrimSpace(b.String()), nil
}

// prepare rewrites the subtree into the shape the converter renders well:
// absolute http(s) or mailto links, images with a real http(s) source, code
// blocks that name their language. Links to anything else become their
// text; images without a source go.
func prepare(root *html.Node, base *url.URL) {
	var doomed []*html.Node
	htmlnode.Walk(root, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		switch n.Data {
		case "a":
			htmlnode.DelAttr(n, "title")
			href, ok := weburl.Resolve(base, htmlnode.Attr(n, "href"), "http", "https", "mailto")
			if ok {
				htmlnode.SetAttr(n, "href", href)
			} else {
				htmlnode.DelAttr(n, "href")
			}
		case "img":
			htmlnode.DelAttr(n, "title")
			src := imageSource(n, base)
			if src == "" {
				doomed = append(doomed, n)
				return false
			}
			htmlnode.SetAttr(n, "src", src)
		case "table":
			limitSpans(n)
		case "pre":
			if lang := codeLanguage(n); lang != "" {
				htmlnode.SetAttr(n, "class", "language-"+lang)
			} else {
				htmlnode.DelAttr(n, "class")
			}
			return false
		}
		return true
	})
	for _, n := range doomed {
		htmlnode.Remove(n)
	}
}

// maxSpanCells bounds the cells a table's colspans and rowspans may add.
// The table renderer copies a spanning cell into every cell it covers, so
// a few hostile spans would otherwise make millions of cells.
const maxSpanCells = 20000

// limitSpans caps each span at the HTML limit of 1000, and drops a
// table's spans altogether when they would add more than maxSpanCells
// cells; the cells then render once.
func limitSpans(table *html.Node) {
	added := 0
	cells := htmlnode.Elements(table, "td", "th")
	for _, c := range cells {
		if len(c.Attr) == 0 {
			continue
		}
		cols, rows := span(c, "colspan"), span(c, "rowspan")
		if htmlnode.HasAttr(c, "colspan") {
			htmlnode.SetAttr(c, "colspan", strconv.Itoa(cols))
		}
		if htmlnode.HasAttr(c, "rowspan") {
			htmlnode.SetAttr(c, "rowspan", strconv.Itoa(rows))
		}
		added += cols*rows - 1
	}
	if added <= maxSpanCells {
		return
	}
	for _, c := range cells {
		htmlnode.DelAttr(c, "colspan")
		htmlnode.DelAttr(c, "rowspan")
	}
}

// span reads a span attribute as the table renderer does, capped at the
// HTML limit of 1000.
func span(cell *html.Node, attr string) int {
	raw := htmlnode.Attr(cell, attr)
	if raw == "" {
		return 1
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 {
		return 1
	}
	return min(n, 1000)
}

// lazySourceAttrs hold an image's real source on pages that load images
// lazily, most trusted first.
var lazySourceAttrs = []string{"data-src", "data-lazy-src", "data-original", "data-lazy", "data-url"}

// ImageSource is imageSource, for the other renderings of the content
// (clean HTML), so that every format names the same image.
func ImageSource(img *html.Node, base *url.URL) string { return imageSource(img, base) }

// CodeLanguage is codeLanguage, for the same reason.
func CodeLanguage(pre *html.Node) string { return codeLanguage(pre) }

// imageSource returns the absolute http(s) source of an img element: its
// src unless that is a placeholder, else a lazy-loading attribute, else the
// first srcset candidate. It returns "" when there is none.
func imageSource(img *html.Node, base *url.URL) string {
	src := strings.TrimSpace(htmlnode.Attr(img, "src"))
	if src != "" && !isPlaceholder(src) {
		if u, ok := weburl.Resolve(base, src, "http", "https"); ok {
			return u
		}
	}
	for _, attr := range lazySourceAttrs {
		if u, ok := weburl.Resolve(base, htmlnode.Attr(img, attr), "http", "https"); ok {
			return u
		}
	}
	for _, attr := range []string{"srcset", "data-srcset", "data-lazy-srcset"} {
		if u, ok := weburl.Resolve(base, firstSrcsetCandidate(htmlnode.Attr(img, attr)), "http", "https"); ok {
			return u
		}
	}
	return ""
}

// isPlaceholder reports whether src is a stand-in shown until a lazy
// image loads: an inline data URI or a blank or spacer image.
func isPlaceholder(src string) bool {
	lower := strings.ToLower(src)
	if strings.HasPrefix(lower, "data:") {
		return true
	}
	for _, hint := range []string{"blank.gif", "spacer.gif", "pixel.gif", "placeholder", "lazy.gif", "loading.gif", "1x1."} {
		if strings.Contains(lower, hint) {
			return true
		}
	}
	return false
}

// firstSrcsetCandidate returns the URL of a srcset's first candidate.
func firstSrcsetCandidate(srcset string) string {
	srcset = strings.TrimSpace(srcset)
	if srcset == "" {
		return ""
	}
	// A candidate is a URL, optional whitespace and a descriptor, then a
	// comma; URLs may themselves contain commas, so split on whitespace
	// first.
	fields := strings.Fields(srcset)
	return strings.TrimSuffix(fields[0], ",")
}

var (
	langClassRe = regexp.MustCompile(`(?i)(?:^|\s)(?:language|lang)-([\w+#.-]+)`)
	highlightRe = regexp.MustCompile(`(?i)(?:^|\s)highlight-(?:source-|text-)?([\w+#-]+)`)
	brushRe     = regexp.MustCompile(`(?i)brush:\s*([\w+#-]+)`)
)

// codeLanguage finds the language a code block declares, on the pre, its
// first code element or the wrapper around it, in any of the common
// spellings: language-go, lang-go, highlight-source-go, brush: go,
// data-lang="go".
func codeLanguage(pre *html.Node) string {
	nodes := []*html.Node{pre}
	if code := htmlnode.First(pre, "code"); code != nil && code != pre {
		nodes = append(nodes, code)
	}
	if pre.Parent != nil && pre.Parent.Type == html.ElementNode {
		nodes = append(nodes, pre.Parent)
	}
	for _, n := range nodes {
		for _, attr := range []string{"data-lang", "data-language"} {
			if v := strings.TrimSpace(htmlnode.Attr(n, attr)); isLangName(v) {
				return strings.ToLower(v)
			}
		}
		class := htmlnode.Attr(n, "class")
		for _, re := range []*regexp.Regexp{langClassRe, highlightRe, brushRe} {
			if m := re.FindStringSubmatch(class); m != nil && isLangName(m[1]) {
				return strings.ToLower(m[1])
			}
		}
	}
	return ""
}

func isLangName(s string) bool {
	if s == "" || len(s) > 30 {
		return false
	}
	switch strings.ToLower(s) {
	case "none", "plaintext", "text", "plain", "nohighlight":
		return false
	}
	return !strings.ContainsAny(s, " \t\n`")
}

// Tidy collapses runs of blank lines to one and trims the text, leaving
// fenced code blocks untouched.
func Tidy(md string) string { return strings.TrimSpace(tidy(md)) }

// tidy is Tidy without trimming the text's ends.
func tidy(md string) string {
	lines := strings.Split(md, "\n")
	out := make([]string, 0, len(lines))
	fence := ""
	blank := false
	for _, line := range lines {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			out = append(out, line)
			if ClosesFence(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if f := fenceOpening(trimmed); f != "" {
			fence = f
		}
		if trimmed == "" {
			if blank {
				continue
			}
			blank = true
			out = append(out, "")
			continue
		}
		blank = false
		out = append(out, strings.TrimRight(line, " \t")+hardBreak(line))
	}
	return strings.Join(out, "\n")
}

// hardBreak keeps the two trailing spaces that make a Markdown line break.
func hardBreak(line string) string {
	if strings.HasSuffix(line, "  ") && strings.TrimSpace(line) != "" {
		return "  "
	}
	return ""
}

// fenceOpening returns the fence a line opens (``` or ~~~ or longer), or "".
func fenceOpening(trimmed string) string {
	for _, ch := range []string{"`", "~"} {
		n := 0
		for n < len(trimmed) && trimmed[n] == ch[0] {
			n++
		}
		if n >= 3 {
			return trimmed[:n]
		}
	}
	return ""
}

// ClosesFence reports whether a trimmed line closes the code block that
// fence opened: it is a run of the fence's character at least as long.
func ClosesFence(trimmed, fence string) bool {
	return strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, fence[:1]) == ""
}

// OpenFence returns the fence of a code block md opens and never closes,
// or "" when every fence is closed.
func OpenFence(md string) string {
	fence := ""
	for _, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case fence == "":
			fence = fenceOpening(trimmed)
		case ClosesFence(trimmed, fence):
			fence = ""
		}
	}
	return fence
}
