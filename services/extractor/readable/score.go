package readable

import (
	"strings"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// minArticleText is the least non-link text, in non-space runes, a
// semantic container needs before it is trusted as the article.
const minArticleText = 200

// mainContent returns the element of body that holds the main content.
//
// Containers the page itself marks as the content (itemprop=articleBody,
// article, main, role=main) win when they hold enough text; otherwise, or
// when the scorer finds clearly more text elsewhere, the scorer's pick is
// used, joined with the siblings that look like more of the same text.
func mainContent(body *html.Node, st treeStats, sc *scoring) *html.Node {
	best := sc.best
	if best != nil && isFeed(best, sc) {
		// A list of other posts' teasers out-scores a short post; the
		// post is the article that holds the page's headline.
		if h1 := htmlnode.First(body, "h1"); h1 != nil {
			if titled := htmlnode.Closest(h1, "article"); titled != nil && !htmlnode.Contains(best, titled) && st.of(titled).contentLen() >= minArticleText {
				return titled
			}
		}
	}
	bestProse := 0
	if best != nil {
		bestProse = sc.prose[best]
	}
	for _, tier := range semanticTiers(body) {
		cand := mostProse(tier, sc)
		if cand == nil {
			continue
		}
		s := st.of(cand)
		if s.contentLen() < minArticleText || s.linkDensity() > 0.5 {
			continue
		}
		// A scorer pick that contains the candidate is the less specific
		// choice; one elsewhere with far more prose means the candidate is
		// a teaser or a card, or one of several parts of the text.
		if best != nil && !htmlnode.Contains(cand, best) && sc.prose[cand]*4 < bestProse*3 {
			continue
		}
		return cand
	}
	if best == nil {
		return body
	}
	return withSiblings(best, sc, st)
}

// isFeed reports whether n lists posts: three or more article elements
// inside it hold most of its prose.
func isFeed(n *html.Node, sc *scoring) bool {
	count, prose := 0, 0
	htmlnode.Walk(n, func(c *html.Node) bool {
		if c != n && c.Type == html.ElementNode && c.Data == "article" {
			count++
			prose += sc.prose[c]
			return false
		}
		return true
	})
	return count >= 3 && prose*2 >= sc.prose[n]
}

// semanticTiers returns the containers the markup names as content, most
// specific first.
func semanticTiers(body *html.Node) [][]*html.Node {
	var articleBody, article, main []*html.Node
	htmlnode.Walk(body, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		switch {
		case htmlnode.HasToken(htmlnode.Attr(n, "itemprop"), "articlebody"):
			articleBody = append(articleBody, n)
		case n.Data == "article":
			article = append(article, n)
		case n.Data == "main" || strings.EqualFold(htmlnode.Attr(n, "role"), "main"):
			main = append(main, n)
		}
		return true
	})
	return [][]*html.Node{articleBody, article, main}
}

// mostProse returns the node of nodes with the most prose that is not a
// list of posts.
func mostProse(nodes []*html.Node, sc *scoring) *html.Node {
	var best *html.Node
	bestLen := -1
	for _, n := range nodes {
		if l := sc.prose[n]; l > bestLen && !isFeed(n, sc) {
			best, bestLen = n, l
		}
	}
	return best
}

// isUnlikely reports whether n's subtree should not feed the scorer. An
// element holding most of the page's text is read whatever its name: a
// layout wrapper named for the sidebar next to the article, or for the ad
// margins around it.
func isUnlikely(n *html.Node, s textStats, pageText int) bool {
	if s.text*2 > pageText {
		return false
	}
	h := s.hint
	switch n.Data {
	case "body", "html", "main", "article", "a":
		return false
	case "nav", "aside", "footer", "dialog":
		return true
	case "header":
		return htmlnode.Closest(n, "article", "main") == nil
	}
	if h&hintComments != 0 {
		return true
	}
	if h&hintUnlikely != 0 && h&hintContent == 0 {
		return true
	}
	return unlikelyRole(n)
}

// classWeight rewards and penalises what class and id names say.
func classWeight(h hint) float64 {
	w := 0.0
	if h&(hintUnlikely|hintFurniture|hintComments|hintMeta) != 0 {
		w -= 25
	}
	if h&hintContent != 0 {
		w += 25
	}
	return w
}

func tagWeight(tag string) float64 {
	switch tag {
	case "div", "article", "main":
		return 5
	case "pre", "td", "blockquote":
		return 3
	case "address", "ol", "ul", "dl", "dd", "dt", "li", "form":
		return -3
	case "h1", "h2", "h3", "h4", "h5", "h6", "th":
		return -5
	}
	return 0
}

// blockTags are elements that break a div's text into separate blocks.
var blockTags = map[string]bool{
	"address": true, "article": true, "aside": true, "blockquote": true, "dl": true,
	"div": true, "figure": true, "footer": true, "form": true, "h1": true, "h2": true,
	"h3": true, "h4": true, "h5": true, "h6": true, "header": true, "hr": true,
	"main": true, "nav": true, "ol": true, "p": true, "pre": true, "section": true,
	"table": true, "ul": true, "img": true, "select": true,
}

// isParagraph reports whether n is a unit of running text: a paragraph-like
// element, div or section that holds only inline content.
func isParagraph(n *html.Node) bool {
	switch n.Data {
	case "p", "pre", "td", "blockquote", "div", "section":
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && blockTags[c.Data] {
				return false
			}
		}
		return true
	}
	return false
}

// proseMin is the length, in runes, from which a paragraph reads as prose
// rather than a label.
const proseMin = 80

// scoring is the scorer's view of a page.
type scoring struct {
	// best is the container with the highest score.
	best *html.Node
	// score is every scored container's Readability score.
	score map[*html.Node]float64
	// prose is, for every ancestor of a prose paragraph, the runes of
	// prose below it: the text of paragraphs long enough and with few
	// enough links to be running text.
	prose map[*html.Node]int
}

// minPickProse is the prose, in non-space runes, below which the scorer's
// pick is checked against the alternatives.
const minPickProse = 500

// paragraph is one unit of running text the scorer credits.
type paragraph struct {
	from   *html.Node // the first container it credits
	node   *html.Node // the paragraph, or the container of loose text
	runes  int
	commas int
	prose  bool
	// skip says why the scorer may pass it over: it sits in an unlikely
	// element, or in a comment section.
	skip uint8
}

const (
	skipNone uint8 = iota
	skipUnlikely
	skipComments
)

// minScoredRunes is the least text, in non-space runes, a paragraph needs
// to be scored.
const minScoredRunes = 20

// score runs the Readability scoring: every paragraph of 20 or more runes
// gives its ancestors points for its length and commas, the nearer the
// more; a container's score is then scaled down by its link density. Text
// written loose in a container, between its blocks, counts as a paragraph
// of that container.
//
// Paragraphs inside elements named as furniture are passed over, unless
// that leaves the pick with little of the page's prose: then the name was
// wrong (a "sticky sidebar" plugin wrapping the article) and everything
// but comment sections is scored.
func score(root *html.Node, st treeStats) *scoring {
	paras, allProse := paragraphs(root, st)
	sc := credit(root, st, paras, skipUnlikely)
	if sc.best == nil || sc.prose[sc.best] < minPickProse || sc.prose[sc.best]*3 < allProse {
		if retry := credit(root, st, paras, skipComments); retry.best != nil && (sc.best == nil || retry.prose[retry.best] > sc.prose[sc.best]) {
			sc = retry
		}
	}
	sc.best = proseOverNames(sc, paras)
	if sc.best != nil {
		sc.best = ascend(sc.best, root, sc, st)
	}
	return sc
}

// proseOverNames returns the pick, or, when the pick holds little prose,
// the container with twice as much: on a short page, the points a name
// like "text" earns outweigh those of a few paragraphs, and a boilerplate
// box so named beats the article.
func proseOverNames(sc *scoring, paras []paragraph) *html.Node {
	best := sc.best
	if best == nil || sc.prose[best] >= minPickProse {
		return best
	}
	most := max(sc.prose[best]*2, 1)
	for _, p := range paras {
		// Only prose the scorer read counts: what it passed over sits in
		// comment sections and furniture.
		if p.prose && sc.prose[p.from] >= most {
			best, most = p.from, sc.prose[p.from]
		}
	}
	return best
}

// paragraphs lists the paragraphs under root in document order and counts
// the prose outside comment sections.
func paragraphs(root *html.Node, st treeStats) ([]paragraph, int) {
	var paras []paragraph
	allProse := 0
	skip := map[*html.Node]uint8{}
	pageText := st.of(root).text
	htmlnode.Walk(root, func(n *html.Node) bool {
		if n.Type != html.ElementNode || len(paras) >= maxParagraphs {
			return false
		}
		s := st.of(n)
		k := skip[n.Parent]
		if n != root && k == skipNone && isUnlikely(n, s, pageText) {
			k = skipUnlikely
		}
		if n != root && s.hint&hintComments != 0 && s.text*2 <= pageText {
			k = skipComments
		}
		if isParagraph(n) {
			// Paragraphs are scored whole and not entered, so each text
			// node is read once however the page nests its markup.
			if s.text >= minScoredRunes {
				p := paragraph{from: n.Parent, node: n, runes: s.text, commas: s.commas, skip: k}
				p.prose = s.text >= proseMin && s.linkDensity() < 0.5
				if p.prose && k != skipComments {
					allProse += p.runes
				}
				paras = append(paras, p)
			}
			return false
		}
		if k != skipNone {
			skip[n] = k
		}
		if looseContainers[n.Data] {
			if runes, commas := looseText(n, st); runes >= minScoredRunes {
				paras = append(paras, paragraph{from: n, node: n, runes: runes, commas: commas, prose: runes >= proseMin, skip: k})
				if runes >= proseMin && k != skipComments {
					allProse += runes
				}
			}
		}
		return true
	})
	return paras, allProse
}

// maxParagraphs bounds the scorer's work on hostile pages.
const maxParagraphs = 1 << 16

// credit scores the paragraphs not skipped for a reason of at least
// level skip, and picks the best container.
func credit(root *html.Node, st treeStats, paras []paragraph, skip uint8) *scoring {
	sc := &scoring{score: map[*html.Node]float64{}, prose: map[*html.Node]int{}}
	var order []*html.Node
	for _, p := range paras {
		if p.skip >= skip {
			continue
		}
		points := 1.0 + float64(p.commas) + float64(min(p.runes/100, 3))
		level := 0
		for a := p.from; a != nil && a.Type == html.ElementNode && level < 5; a = a.Parent {
			if _, ok := sc.score[a]; !ok {
				sc.score[a] = tagWeight(a.Data) + classWeight(st.of(a).hint)
				order = append(order, a)
			}
			divider := 1.0
			switch {
			case level == 1:
				divider = 2
			case level > 1:
				divider = float64(level) * 3
			}
			sc.score[a] += points / divider
			level++
			if a == root {
				break
			}
		}
		if p.prose {
			for a := p.node; a != nil; a = a.Parent {
				sc.prose[a] += p.runes
				if a == root {
					break
				}
			}
		}
	}
	bestScore := 0.0
	for _, n := range order {
		s := sc.score[n] * (1 - st.of(n).linkDensity())
		sc.score[n] = s
		if sc.best == nil || s > bestScore {
			sc.best, bestScore = n, s
		}
	}
	return sc
}

// ascend moves the pick up to the ancestor that gathers the article when
// its text is split over several deep wrappers (text, pull quote, text,
// image, text), which sibling merging, one level only, cannot join. An
// ancestor qualifies when it holds a third more prose than the pick and
// the extra prose sits in blocks that read like the pick's: several
// paragraphs, not a teaser's line.
func ascend(best, root *html.Node, sc *scoring, st treeStats) *html.Node {
	cur := best
	below := best // the child of a on the way down to cur
	for a := best.Parent; a != nil && a != root && a.Type == html.ElementNode; below, a = a, a.Parent {
		extra := sc.prose[a] - sc.prose[cur]
		if extra*3 < sc.prose[cur] {
			continue
		}
		if !hasArticleBlock(a, below, cur, sc, st) {
			break
		}
		cur = a
	}
	return cur
}

// hasArticleBlock reports whether a child of a other than below, the one
// holding cur, holds prose of the article's kind: at least two prose
// paragraphs' worth, or a fifth of cur's.
func hasArticleBlock(a, below, cur *html.Node, sc *scoring, st treeStats) bool {
	for c := a.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode || c == below {
			continue
		}
		p := sc.prose[c]
		if p < 2*proseMin || p*5 < sc.prose[cur] {
			continue
		}
		// Teaser lists also hold prose, but between headlines, dates and
		// "read more" links; a part of the article is nearly all prose.
		if s := st.of(c); p*100 >= s.text*85 && s.linkDensity() <= 0.1 {
			return true
		}
	}
	return false
}

// looseContainers are the block elements whose loose text is scored.
var looseContainers = map[string]bool{
	"div": true, "section": true, "article": true, "main": true, "td": true,
	"body": true, "blockquote": true, "center": true,
}

// looseText measures the text n holds outside its block children: its
// own text nodes and inline elements.
func looseText(n *html.Node, st treeStats) (runes, commas int) {
	s := st.of(n)
	runes, commas = s.text, s.commas
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && blockTags[c.Data] {
			cs := st.of(c)
			runes -= cs.text
			commas -= cs.commas
		}
	}
	return runes, commas
}

// withSiblings gathers top and the siblings that look like more of the
// article into one container, as Readability does: articles often spread
// their paragraphs over sibling elements. It returns top itself when no
// sibling qualifies.
func withSiblings(top *html.Node, sc *scoring, st treeStats) *html.Node {
	parent := top.Parent
	if parent == nil || top.Data == "body" {
		return top
	}
	topScore := sc.score[top]
	threshold := max(10, topScore*0.2)
	topClass := htmlnode.Attr(top, "class")
	var keep []*html.Node
	for s := parent.FirstChild; s != nil; s = s.NextSibling {
		if s == top {
			keep = append(keep, s)
			continue
		}
		if s.Type != html.ElementNode || isUnlikely(s, st.of(s), st.of(parent).text) {
			continue
		}
		bonus := 0.0
		if topClass != "" && htmlnode.Attr(s, "class") == topClass {
			bonus = topScore * 0.2
		}
		if v, ok := sc.score[s]; ok && v+bonus >= threshold {
			keep = append(keep, s)
			continue
		}
		// A paragraph beside the pick continues it; so does a div written
		// as one (a summary or lead paragraph in a box of its own).
		if s.Data == "p" || s.Data == "div" && isParagraph(s) {
			ts := st.of(s)
			switch {
			case ts.text > 80 && ts.linkDensity() < 0.25:
				keep = append(keep, s)
			case ts.text > 0 && ts.text <= 80 && ts.link == 0 && strings.Contains(htmlnode.Text(s), ". "):
				keep = append(keep, s)
			}
		}
	}
	if len(keep) == 1 {
		return top
	}
	container := htmlnode.NewElement("div")
	prose := 0
	for _, s := range keep {
		prose += sc.prose[s]
		parent.RemoveChild(s)
		container.AppendChild(s)
	}
	sc.prose[container] = prose
	st.add(container)
	return container
}
