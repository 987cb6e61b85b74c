package readable

import (
	"context"
	"strings"
	"unicode"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// documentation draws a documentation page. Its sections, code, tables and
// notes are all content, so it is drawn wide, as a landing page is; but
// first the furniture documentation sites wrap every page in goes: the
// breadcrumbs, the table of contents ("On this page"), the "Edit this
// page" and "Was this helpful?" widgets, the previous and next page links
// and the "Last updated" line.
func documentation(ctx context.Context, body *html.Node, st treeStats) (*html.Node, error) {
	removeDocChrome(body, st)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return wide(body, st, false), ctx.Err()
}

// showTabPanels shows the hidden panels of tabbed blocks: documentation
// shows one example per language or platform at a time, and the others,
// hidden until their tab is picked, are as much the page's text.
func showTabPanels(body *html.Node) {
	htmlnode.Walk(body, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return n.Type == html.DocumentNode
		}
		if strings.EqualFold(htmlnode.Attr(n, "role"), "tabpanel") || namedAs(n, tabPanelWords) {
			htmlnode.DelAttr(n, "hidden")
			htmlnode.DelAttr(n, "aria-hidden")
			if htmlnode.StyleHidden(n) {
				htmlnode.DelAttr(n, "style")
			}
		}
		return true
	})
}

var tabPanelWords = map[string]bool{"tabpanel": true}

// removeDocChrome removes documentation furniture under root, keeping
// root's stats current. Nothing holding half of root's text goes: that is
// the page, whatever its name.
func removeDocChrome(root *html.Node, st treeStats) {
	rootText := st.of(root).text
	var doomed []*html.Node
	htmlnode.Walk(root, func(n *html.Node) bool {
		if n.Type != html.ElementNode || n == root {
			return n.Type == html.ElementNode
		}
		s := st.of(n)
		if s.text == 0 || s.text*2 > rootText {
			return s.text > 0
		}
		if isDocChrome(n, s) {
			doomed = append(doomed, n)
			return false
		}
		if isHeading(n) || n.Data == "p" || n.Data == "div" || n.Data == "span" || n.Data == "strong" {
			if s.text <= maxLabel && isTOCLabel(htmlnode.Text(n)) {
				if toc := tocAfter(n, root, st); toc != nil {
					doomed = append(doomed, toc)
					return false
				}
			}
		}
		return true
	})
	for _, n := range doomed {
		if n.Parent != nil {
			st.detach(n, root)
		}
	}
}

// docNavWords name documentation's navigation in classes, ids and ARIA
// labels; docWidgetWords its widgets.
var (
	docNavWords = map[string]bool{
		"breadcrumb": true, "breadcrumbs": true, "crumbs": true, "toc": true, "pagination": true,
		"pager": true, "paginator": true, "prevnext": true,
	}
	docWidgetWords = map[string]bool{"feedback": true, "helpful": true}
)

// docChromePrefixes open the text of a widget: "Edit this page", "Was this
// page helpful?", "Last updated on 3 May 2024".
var docChromePrefixes = []string{
	"edit this page", "edit on github", "edit page", "improve this page", "suggest an edit", "suggest edits",
	"report an issue", "report a problem", "view source", "view page source", "was this page helpful",
	"was this helpful", "was this article helpful", "is this page helpful", "did this page help",
	"did you find this", "how helpful", "rate this page", "last updated", "last modified", "page last updated",
	"last reviewed", "help us improve",
}

// isDocChrome reports whether n, which holds less than half the page, is a
// widget or navigation of a documentation site.
func isDocChrome(n *html.Node, s textStats) bool {
	// Headings and inline elements are content, even when a class says
	// they are linked from the table of contents.
	if isHeading(n) || n.Data == "a" || htmlnode.Inline(n.Data) {
		return false
	}
	if namedAs(n, docNavWords) && s.linkDensity() >= 0.5 || namedAs(n, docWidgetWords) && s.text <= 3*maxLabel {
		return true
	}
	if s.text > 3*maxLabel {
		return false
	}
	text := strings.ToLower(strings.TrimSpace(htmlnode.Text(n)))
	for _, p := range docChromePrefixes {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return isPager(n, s, text)
}

// isPager reports whether n, short, is the links to the previous and next
// pages: mostly links, each saying which way it goes.
func isPager(n *html.Node, s textStats, text string) bool {
	if s.linkDensity() < 0.6 || n.Data == "a" {
		return false
	}
	links := htmlnode.Elements(n, "a")
	if len(links) == 0 || len(links) > 4 {
		return false
	}
	for _, a := range links {
		t := strings.ToLower(strings.TrimSpace(htmlnode.Text(a)))
		t = strings.TrimLeftFunc(t, func(r rune) bool { return !unicode.IsLetter(r) })
		if !strings.HasPrefix(t, "next") && !strings.HasPrefix(t, "previous") && !strings.HasPrefix(t, "prev") {
			return false
		}
	}
	return true
}

// namedAs reports whether a word of n's class, id or ARIA label is in
// words.
func namedAs(n *html.Node, words map[string]bool) bool {
	for _, key := range []string{"class", "id", "aria-label"} {
		found := false
		for rest := htmlnode.Attr(n, key); rest != "" && !found; {
			var token string
			token, rest = nextField(rest)
			eachWord(token, func(w []byte) {
				if words[string(w)] {
					found = true
				}
			})
		}
		if found {
			return true
		}
	}
	return false
}

// tocLabels caption a page's table of contents.
var tocLabels = map[string]bool{
	"on this page": true, "in this article": true, "in this page": true, "table of contents": true,
	"contents": true, "page contents": true, "in this section": true,
	"jump to": true, "sections": true,
}

func isTOCLabel(text string) bool {
	text = strings.TrimFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r)
	})
	return tocLabels[text]
}

// tocAfter returns the table of contents label opens: the label's nearest
// container that starts with it, holds little of the page and is mostly
// links. It returns nil when there is none.
func tocAfter(label, root *html.Node, st treeStats) *html.Node {
	rootText := st.of(root).text
	var toc *html.Node
	block := label
	for p := label.Parent; p != nil && p != root && startsWith(p, block) && st.of(p).text*3 < rootText; p = p.Parent {
		block = p
		if s := st.of(p); s.text > st.of(label).text && float64(s.link) >= 0.6*float64(s.text-st.of(label).text) {
			toc = p
		}
	}
	return toc
}
