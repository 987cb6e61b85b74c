package readable

import (
	"regexp"
	"strings"
	"unicode/utf8"

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
func mainContent(body *html.Node) *html.Node {
	st := measure(body)
	best, scores := score(body, st)

	bestLen := 0
	if best != nil {
		bestLen = st.of(best).contentLen()
	}
	for _, tier := range semanticTiers(body) {
		cand := largest(tier, st)
		if cand == nil {
			continue
		}
		s := st.of(cand)
		if s.contentLen() < minArticleText || s.linkDensity() > 0.5 {
			continue
		}
		// A scorer pick that contains the candidate is the less specific
		// choice; one elsewhere with far more text means the candidate is a
		// teaser or a card.
		if best != nil && !htmlnode.Contains(best, cand) && !htmlnode.Contains(cand, best) && s.contentLen()*2 < bestLen {
			continue
		}
		return cand
	}
	if best == nil {
		return body
	}
	return withSiblings(best, scores, st)
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
		case hasToken(htmlnode.Attr(n, "itemprop"), "articlebody"):
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

func hasToken(list, token string) bool {
	for _, f := range strings.Fields(list) {
		if strings.EqualFold(f, token) {
			return true
		}
	}
	return false
}

func largest(nodes []*html.Node, st treeStats) *html.Node {
	var best *html.Node
	bestLen := -1
	for _, n := range nodes {
		if l := st.of(n).contentLen(); l > bestLen {
			best, bestLen = n, l
		}
	}
	return best
}

var (
	// unlikelyRe and likelyRe follow Mozilla Readability's class/id hints.
	unlikelyRe = regexp.MustCompile(`(?i)-ad-|ai2html|banner|breadcrumbs|combx|comment|community|cover-wrap|disqus|extra|footer|gdpr|header|legends|menu|related|remark|replies|rss|shoutbox|sidebar|skyscraper|social|sponsor|supplemental|ad-break|agegate|pagination|pager|popup|yom-remote|cookie|newsletter|share`)
	likelyRe   = regexp.MustCompile(`(?i)and|article|body|column|content|main|shadow`)
	positiveRe = regexp.MustCompile(`(?i)article|body|content|entry|hentry|h-entry|main|page|pagination|post|text|blog|story`)
	negativeRe = regexp.MustCompile(`(?i)-ad-|hidden|^hid$| hid$| hid |^hid |banner|combx|comment|com-|contact|footer|gdpr|masthead|media|meta|outbrain|promo|related|scroll|share|shoutbox|sidebar|skyscraper|sponsor|shopping|tags|widget`)
)

// unlikelyRoles are ARIA landmarks that are never the article.
var unlikelyRoles = map[string]bool{
	"navigation": true, "complementary": true, "banner": true, "contentinfo": true,
	"menu": true, "menubar": true, "dialog": true, "alertdialog": true, "search": true,
}

// isUnlikely reports whether n's subtree should not feed the scorer.
func isUnlikely(n *html.Node) bool {
	switch n.Data {
	case "body", "html", "main", "article", "a":
		return false
	case "nav", "aside", "footer", "dialog":
		return true
	case "header":
		return htmlnode.Closest(n, "article", "main") == nil
	}
	if unlikelyRoles[strings.ToLower(htmlnode.Attr(n, "role"))] {
		return true
	}
	hint := htmlnode.Attr(n, "class") + " " + htmlnode.Attr(n, "id")
	return unlikelyRe.MatchString(hint) && !likelyRe.MatchString(hint)
}

// classWeight rewards and penalises class and id names.
func classWeight(n *html.Node) float64 {
	w := 0.0
	for _, hint := range []string{htmlnode.Attr(n, "class"), htmlnode.Attr(n, "id")} {
		if hint == "" {
			continue
		}
		if negativeRe.MatchString(hint) {
			w -= 25
		}
		if positiveRe.MatchString(hint) {
			w += 25
		}
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

// maxScoredRunes bounds the text the scorer reads: a paragraph's text is
// read once, but the loose text of containers can be read again by a
// container around them, and hostile nesting must not make that quadratic.
const maxScoredRunes = 16 << 20

// score runs the Readability scoring: every paragraph of 25 or more runes
// gives its ancestors points for its length and commas, the nearer the
// more; a container's score is then scaled down by its link density. Text
// written loose in a container, between its blocks, counts as a paragraph
// of that container. It returns the best container and every container's
// score.
func score(root *html.Node, st treeStats) (*html.Node, map[*html.Node]float64) {
	scores := map[*html.Node]float64{}
	var order []*html.Node
	budget := maxScoredRunes
	credit := func(from *html.Node, text string) {
		budget -= len(text)
		points := 1.0 + float64(strings.Count(text, ",")+strings.Count(text, "，")+strings.Count(text, "、"))
		points += float64(min(utf8.RuneCountInString(text)/100, 3))
		level := 0
		for a := from; a != nil && a.Type == html.ElementNode && level < 5; a = a.Parent {
			if _, ok := scores[a]; !ok {
				scores[a] = tagWeight(a.Data) + classWeight(a)
				order = append(order, a)
			}
			divider := 1.0
			switch {
			case level == 1:
				divider = 2
			case level > 1:
				divider = float64(level) * 3
			}
			scores[a] += points / divider
			level++
			if a == root {
				break
			}
		}
	}
	htmlnode.Walk(root, func(n *html.Node) bool {
		if n.Type != html.ElementNode || budget <= 0 {
			return false
		}
		if n != root && isUnlikely(n) {
			return false
		}
		if isParagraph(n) {
			// Paragraphs are scored whole and not entered, so each text
			// node is read once however the page nests its markup.
			if text := htmlnode.Text(n); len(text) >= 25 {
				credit(n.Parent, text)
			}
			return false
		}
		if looseContainers[n.Data] {
			if text := looseText(n); len(text) >= 25 {
				credit(n, text)
			}
		}
		return true
	})

	var best *html.Node
	bestScore := 0.0
	for _, n := range order {
		s := scores[n] * (1 - st.of(n).linkDensity())
		scores[n] = s
		if best == nil || s > bestScore {
			best, bestScore = n, s
		}
	}
	return best, scores
}

// looseContainers are the block elements whose loose text is scored.
var looseContainers = map[string]bool{
	"div": true, "section": true, "article": true, "main": true, "td": true,
	"body": true, "blockquote": true, "center": true,
}

// looseText returns the text n holds outside its block children: its own
// text nodes and inline elements.
func looseText(n *html.Node) string {
	var b strings.Builder
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		switch {
		case c.Type == html.TextNode:
			b.WriteString(c.Data)
		case c.Type == html.ElementNode && !blockTags[c.Data] && !nonContent[c.Data] && c.Data != "br":
			b.WriteString(" " + htmlnode.Text(c) + " ")
		}
	}
	return htmlnode.CollapseSpace(b.String())
}

// withSiblings gathers top and the siblings that look like more of the
// article into one container, as Readability does: articles often spread
// their paragraphs over sibling elements. It returns top itself when no
// sibling qualifies.
func withSiblings(top *html.Node, scores map[*html.Node]float64, st treeStats) *html.Node {
	parent := top.Parent
	if parent == nil || top.Data == "body" {
		return top
	}
	threshold := max(10, scores[top]*0.2)
	topClass := htmlnode.Attr(top, "class")
	var keep []*html.Node
	for s := parent.FirstChild; s != nil; s = s.NextSibling {
		if s == top {
			keep = append(keep, s)
			continue
		}
		if s.Type != html.ElementNode || isUnlikely(s) {
			continue
		}
		bonus := 0.0
		if topClass != "" && htmlnode.Attr(s, "class") == topClass {
			bonus = scores[top] * 0.2
		}
		if sc, ok := scores[s]; ok && sc+bonus >= threshold {
			keep = append(keep, s)
			continue
		}
		if s.Data == "p" {
			ts := st.of(s)
			text := htmlnode.Text(s)
			switch {
			case ts.text > 80 && ts.linkDensity() < 0.25:
				keep = append(keep, s)
			case ts.text > 0 && ts.text <= 80 && ts.link == 0 && strings.Contains(text, ". "):
				keep = append(keep, s)
			}
		}
	}
	if len(keep) == 1 {
		return top
	}
	container := htmlnode.NewElement("div")
	for _, s := range keep {
		parent.RemoveChild(s)
		container.AppendChild(s)
	}
	return container
}
