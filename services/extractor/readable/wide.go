package readable

import (
	"strings"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// wideMain is the share of the page's text a main landmark needs to stand
// for the page: less, and the landmark is one block of several (a hero
// outside it, the listing inside).
const wideMain = 0.4

// wide returns the content of a page that is not one running text (a
// landing page, a list of cards, a product, a thread): the main landmark,
// or the body, with the page's chrome taken out (header, navigation,
// footers, asides, dialogs, forms and controls, furniture named as such)
// and everything else kept, short blocks and lists of links included,
// since there they are the content. keepComments keeps the blocks named
// as comments and replies: on a thread they are the posts.
func wide(body *html.Node, st treeStats, keepComments bool) *html.Node {
	return planWide(body, st, keepComments).draw(st)
}

// widePlan is a wide draw decided but not yet made: its root and the
// chrome under it. The block model's features are read from the page as
// it stands, and only for the blocks the draw keeps.
type widePlan struct {
	root      *html.Node
	doomed    []*html.Node
	doomedSet map[*html.Node]bool // doomed, built by keeps
}

// planWide decides a wide draw of body without editing the page.
func planWide(body *html.Node, st treeStats, keepComments bool) *widePlan {
	root := body
	pageText := st.of(body).text
	var best *html.Node
	htmlnode.Walk(body, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		if n.Data == "main" || strings.EqualFold(htmlnode.Attr(n, "role"), "main") {
			if best == nil || st.of(n).text > st.of(best).text {
				best = n
			}
			return false
		}
		return true
	})
	if best != nil && float64(st.of(best).text) >= wideMain*float64(pageText) {
		root = best
	}
	rootText := st.of(root).text
	plan := &widePlan{root: root}
	htmlnode.Walk(root, func(n *html.Node) bool {
		if n.Type != html.ElementNode || n == root {
			return n.Type == html.ElementNode
		}
		if isChrome(n, st, rootText, keepComments) {
			plan.doomed = append(plan.doomed, n)
			return false
		}
		return true
	})
	return plan
}

// keeps reports whether the draw keeps n: n is under its root and not
// under its chrome. (Recirculation blocks, found only once the chrome is
// gone, are kept here.)
func (p *widePlan) keeps(n *html.Node) bool {
	if p.doomedSet == nil {
		p.doomedSet = make(map[*html.Node]bool, len(p.doomed))
		for _, d := range p.doomed {
			p.doomedSet[d] = true
		}
	}
	for a := n; a != nil; a = a.Parent {
		if p.doomedSet[a] {
			return false
		}
		if a == p.root {
			return true
		}
	}
	return false
}

// draw makes the draw: the chrome, then the recirculation blocks, leave,
// and the root is the content.
func (p *widePlan) draw(st treeStats) *html.Node {
	for _, n := range p.doomed {
		st.detach(n, p.root)
	}
	dropRecirculation(p.root, st)
	return p.root
}

// isChrome reports whether n, under the content root holding rootText
// runes, is page chrome rather than content.
func isChrome(n *html.Node, st treeStats, rootText int, keepComments bool) bool {
	s := st.of(n)
	if s.hint&hintOffscreen != 0 {
		return true
	}
	// What holds most of the content is a wrapper, whatever its name.
	major := s.text*2 > rootText
	switch n.Data {
	case "button", "select", "input", "textarea":
		return true
	case "nav", "aside", "footer", "dialog", "menu":
		return true
	case "form":
		// Forum engines wrap a thread's posts in a form, for quoting
		// several at once: a form holding prose is not a search box.
		return !major && proseOf(n, st) < 2*proseMin
	case "header":
		return !major && htmlnode.Closest(n, "article", "section") == nil && htmlnode.First(n, "h1") == nil
	}
	if major {
		return false
	}
	if unlikelyRole(n) {
		return true
	}
	h := s.hint
	if h&hintComments != 0 && !keepComments {
		return true
	}
	if h&hintUnlikely == 0 || h&hintContent != 0 {
		return false
	}
	// A name is not enough against running text: landing pages put
	// their pitch in a "promo" container and their offices in a
	// "locations-menu", themes the page's columns in "sidebar-left".
	return s.linkDensity() >= 0.5 || proseOf(n, st) < 3*proseMin
}

// thinPickShare is the share of the page's content text below which the
// scorer's pick is one block among many rather than the page's text.
const thinPickShare = 0.4

// thinPickProse is the prose, in runes, from which the scorer's pick is
// an article whatever else the page holds.
const thinPickProse = 1200

// thinPick reports whether the scorer's pick holds less than
// thinPickShare of the text a wide draw of the page would keep, and not
// much more of its text outside links: a news page's sidebars are lists
// of links, a landing page's sections text.
func thinPick(body *html.Node, st treeStats, sc *scoring) bool {
	if sc.best == nil {
		return true
	}
	if sc.prose[sc.best] >= thinPickProse {
		return false
	}
	bodyText := st.of(body).text
	wideText, wideContent := bodyText, st.of(body).contentLen()
	htmlnode.Walk(body, func(n *html.Node) bool {
		if n.Type != html.ElementNode || n == body {
			return n.Type == html.ElementNode
		}
		if s := st.of(n); isChrome(n, st, bodyText, false) {
			wideText -= s.text
			wideContent -= s.contentLen()
			return false
		}
		return true
	})
	best := st.of(sc.best)
	return float64(best.text) < thinPickShare*float64(wideText) && float64(best.contentLen()) < thinContentShare*float64(wideContent)
}

// thinContentShare is thinPickShare for the text outside links.
const thinContentShare = 0.6

// recircPrefixes open the headings of the blocks that send a reader on to
// other pages: other products, other posts.
var recircPrefixes = []string{
	"related ", "you may also", "you might also", "customers also", "customers who",
	"recently viewed", "similar ", "more from", "frequently bought", "more like this",
	"other products", "explore more", "people also",
}

// isRecircHeading reports whether a heading's text opens a block of
// links to other pages: "Related products", "You may also like".
func isRecircHeading(text string) bool {
	text = strings.ToLower(strings.TrimSpace(text))
	if text == "related" || isFurnitureLabel(text) && text != "comments" && text != "comment" {
		return true
	}
	for _, p := range recircPrefixes {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// dropRecirculation removes from a wide draw the blocks a recirculation
// heading opens: the heading's nearest container that starts with it and
// holds less than half the content.
func dropRecirculation(root *html.Node, st treeStats) {
	rootText := st.of(root).text
	var doomed []*html.Node
	htmlnode.Walk(root, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return false
		}
		if !isHeading(n) {
			return true
		}
		if s := st.of(n); s.text == 0 || s.text > maxLabel || !isRecircHeading(htmlnode.Text(n)) {
			return false
		}
		block := n
		for p := n.Parent; p != nil && p != root && startsWith(p, block) && st.of(p).text*2 < rootText; p = p.Parent {
			block = p
		}
		if block != n {
			doomed = append(doomed, block)
		}
		return false
	})
	for _, n := range doomed {
		if n.Parent != nil {
			st.detach(n, root)
		}
	}
}

// startsWith reports whether the first child of p with text is, or
// holds, first.
func startsWith(p, first *html.Node) bool {
	for c := p.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c == first || htmlnode.Contains(c, first):
			return true
		case c.Type == html.TextNode && strings.TrimSpace(c.Data) != "",
			c.Type == html.ElementNode && htmlnode.TextLen(c) > 0:
			return false
		}
	}
	return false
}
