package readable

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// boilerplateTags are never part of an article's text.
var boilerplateTags = map[string]bool{
	"nav": true, "aside": true, "form": true, "button": true, "input": true,
	"select": true, "textarea": true, "dialog": true, "menu": true, "fieldset": true,
	"figcaption": true, "label": true,
}

// Sizes, in non-space runes, below which a block counts as a label.
const (
	// metaMax bounds what a byline, date or caption block can hold.
	metaMax = 300
	// linkyMax bounds a paragraph that is only a link ("Read more: ...").
	linkyMax = 300
)

// cleaner removes the furniture inside the chosen content.
type cleaner struct {
	st       treeStats
	sc       *scoring
	content  *html.Node
	core     *html.Node // the article's text, which no removal may take
	rootText int
	doomed   []*html.Node
	// trustNames says whether class and id names alone make furniture.
	trustNames bool
}

// clean removes the page furniture inside content: navigation, asides,
// forms, figures and captions, page headers and footers, landmark roles
// other than the main one, elements whose class or id names them as
// furniture, bylines and other labels, and lists of links.
//
// An element that wraps the article's text is kept whatever its name says:
// pages wrap whole articles in a form (ASP.NET) or in a div classed
// "l-sidebar-fixed l-article-body". The article's text is where the scorer
// puts it; without a scorer pick inside content, it is the opening text,
// when the element also holds half of all text.
func clean(content *html.Node, st treeStats, sc *scoring) {
	if content == nil {
		return
	}
	c := &cleaner{st: st, sc: sc, content: content, rootText: st.of(content).text}
	if sc.best != nil && sc.best != content && htmlnode.Contains(content, sc.best) {
		c.core = sc.best
	}
	var opening *html.Node
	if c.core == nil {
		opening = openingText(content)
	}
	wraps := func(n *html.Node) bool {
		if c.core != nil {
			return htmlnode.Contains(n, c.core)
		}
		return opening != nil && htmlnode.Contains(n, opening) && st.of(n).text*2 >= c.rootText
	}

	c.trustNames = true
	named, unnamed := c.collect(wraps)
	// Names that would take most of the text's prose with them are a
	// page's own vocabulary ("TestReport__Section--Ads" on every part of
	// the article), not furniture. The prose that goes whatever the names
	// say does not count: a "republish this story" dialog holding a copy
	// of the article must not outweigh the article in a div named
	// "sidebar-content".
	if prose := proseOf(content, st) - unnamed; prose >= 500 && named*2 > prose {
		c.trustNames = false
		c.doomed = c.doomed[:0]
		c.collect(wraps)
	}
	c.doomed = append(c.doomed, c.orphanLabels()...)
	for _, n := range c.doomed {
		if n.Data == "header" && htmlnode.Closest(n, "article", "main", "section") != nil {
			c.salvageHeadings(n)
		}
		st.detach(n, content)
	}
}

// orphanLabels returns the labels the removals leave with nothing to
// label: "More:", "DON'T MISS" or "Comments" above a list or a widget that
// is gone, "Advertisement" above an empty ad slot. A label is a short
// block that does not end a sentence.
func (c *cleaner) orphanLabels() []*html.Node {
	gone := make(map[*html.Node]bool, len(c.doomed))
	for _, n := range c.doomed {
		gone[n] = true
	}
	var out []*html.Node
	for _, n := range c.doomed {
		if n.Type != html.ElementNode {
			continue
		}
		for p := n.PrevSibling; p != nil; p = p.PrevSibling {
			if p.Type == html.TextNode && strings.TrimSpace(p.Data) == "" {
				continue
			}
			if p.Type != html.ElementNode || gone[p] {
				break
			}
			if c.isOrphanLabel(p, gone) {
				gone[p] = true
				out = append(out, p)
			}
			break
		}
	}
	return out
}

// A label is short: "Related posts:", "DON'T MISS". A colon after more
// words than that introduces the article's own next block.
const (
	maxLabel      = 40 // non-space runes
	maxLabelWords = 4
)

// isOrphanLabel reports whether n, just before something removed, is a
// label left with nothing to label.
func (c *cleaner) isOrphanLabel(n *html.Node, gone map[*html.Node]bool) bool {
	s := c.st.of(n)
	if s.text == 0 || s.text > maxLabel || n.Data == "li" || n.Data == "h1" || hasBlockChild(n) {
		return false
	}
	text := htmlnode.Text(n)
	r, _ := utf8.DecodeLastRuneInString(text)
	switch r {
	case '.', '!', '?', '…', '。', '！', '？':
		return false
	}
	// "More:" labels the block right after it. A heading heads everything
	// up to the next one, so it is an orphan only when all of that is gone.
	short := len(strings.Fields(text)) <= maxLabelWords
	if !isHeading(n) && !short {
		return false
	}
	lead := (r == ':' || r == '：' || !isHeading(n)) && short
	for f := n.NextSibling; f != nil; f = f.NextSibling {
		switch {
		case f.Type == html.TextNode:
			if strings.TrimSpace(f.Data) != "" {
				return false
			}
		case f.Type != html.ElementNode:
		case gone[f]:
			if lead {
				return true
			}
		case c.st.of(f).text == 0:
		case isHeading(f):
			return true
		default:
			return false
		}
	}
	return true
}

// collect gathers the furniture under the content into c.doomed and
// returns the prose that names alone doomed and the prose doomed for
// anything else.
func (c *cleaner) collect(wraps func(*html.Node) bool) (named, unnamed int) {
	htmlnode.Walk(c.content, func(n *html.Node) bool {
		if n.Type != html.ElementNode || n == c.content {
			return true
		}
		if n.Data == "figure" && !wraps(n) {
			c.doomed = append(c.doomed, captions(n, c.st)...)
			return false
		}
		furniture, byName := c.isFurniture(n)
		if !furniture || wraps(n) {
			return true
		}
		if byName {
			named += proseOf(n, c.st)
		} else {
			unnamed += proseOf(n, c.st)
		}
		c.doomed = append(c.doomed, n)
		return false
	})
	return named, unnamed
}

// proseOf returns the runes of running text under n: paragraphs long
// enough, and with few enough links, to be prose.
func proseOf(n *html.Node, st treeStats) int {
	prose := 0
	htmlnode.Walk(n, func(c *html.Node) bool {
		if c.Type != html.ElementNode {
			return false
		}
		if isParagraph(c) {
			if s := st.of(c); s.text >= proseMin && s.linkDensity() < 0.5 {
				prose += s.text
			}
			return false
		}
		return true
	})
	return prose
}

// salvageHeadings moves the title out of an article's header about to
// go: the title stays with the text, the kicker, dek, byline and date
// around it go. A page's header, with the site's name, goes whole.
func (c *cleaner) salvageHeadings(header *html.Node) {
	h := htmlnode.First(header, "h1")
	if h == nil {
		h = htmlnode.First(header, "h2", "h3")
	}
	if h == nil || c.st.of(h).text == 0 {
		return
	}
	c.st.detach(h, c.content)
	header.Parent.InsertBefore(h, header)
	c.st.shift(h, c.content, 1)
}

// isFurniture reports whether n is page furniture by its tag, role, class,
// id, size and links, and whether its class or id alone said so.
func (c *cleaner) isFurniture(n *html.Node) (furniture, byName bool) {
	s := c.st.of(n)
	if inlineTags[n.Data] && n.Parent != nil && c.st.of(n.Parent).text-s.text >= minSentence && !c.st.of(n.Parent).blocks {
		// Part of running text: "auto-tag" links to topic pages and the
		// like are words of the sentence, whatever their names say.
		return false, false
	}
	switch {
	case boilerplateTags[n.Data]:
		return true, false
	case n.Data == "header":
		return true, false
	case n.Data == "footer":
		return htmlnode.Closest(n, "article", "section", "main") == nil || s.text < metaMax, false
	case unlikelyRole(n):
		return true, false
	case s.hint&(hintComments|hintOffscreen) != 0:
		return true, false
	case c.trustNames && s.hint&(hintUnlikely|hintFurniture) != 0:
		if !c.holdsProse(n) && !isEmbeddedPost(n, s, c.st) {
			return true, true
		}
	case s.hint&hintMeta != 0 && s.text < metaMax && n.Data != "h1":
		// A heading named a dek or a subtitle is one; the title is kept.
		return true, false
	}
	if s.text <= maxLabel && !hasBlockChild(n) && isFurnitureLabel(htmlnode.Text(n)) {
		return true, false
	}
	// Links alone do not make furniture of what holds most of the text: a
	// page can be a list of links.
	return s.text*2 < c.rootText && (isLinkList(n, s) || isLinkParagraph(n, s)), false
}

// captions returns the text of a figure: captions and credits, which
// describe the picture rather than continue the text. The picture stays
// for the Markdown, and so do tables, code and quotes set as figures.
func captions(fig *html.Node, st treeStats) []*html.Node {
	var out []*html.Node
	htmlnode.Walk(fig, func(n *html.Node) bool {
		switch {
		case n == fig:
			return true
		case n.Type == html.TextNode:
			if strings.TrimSpace(n.Data) != "" {
				out = append(out, n)
			}
			return false
		case n.Type != html.ElementNode:
			return false
		}
		switch n.Data {
		case "table", "pre", "blockquote", "code", "img", "picture", "video":
			return false
		}
		if st.of(n).text > 0 && htmlnode.First(n, "img", "picture", "video") == nil {
			out = append(out, n)
			return false
		}
		return true
	})
	return out
}

// holdsProse reports whether n holds a good part of the content's prose,
// which a name alone does not make furniture.
func (c *cleaner) holdsProse(n *html.Node) bool {
	p := c.sc.prose[n]
	return p >= 2*proseMin && p*3 >= c.sc.prose[c.content]
}

// isEmbeddedPost reports whether n is mostly a quoted post, as social
// networks' embeds are (blockquote.twitter-tweet inside
// div.social-media-embed): the article quotes it.
func isEmbeddedPost(n *html.Node, s textStats, st treeStats) bool {
	q := htmlnode.First(n, "blockquote")
	return q != nil && st.of(q).text*2 >= s.text
}

// minSentence is the text, in non-space runes, around an inline element
// from which it counts as part of a sentence.
const minSentence = 20

// inlineTags are the elements that run within a line of text.
var inlineTags = map[string]bool{
	"a": true, "abbr": true, "b": true, "bdi": true, "bdo": true, "cite": true,
	"code": true, "data": true, "del": true, "dfn": true, "em": true, "font": true,
	"i": true, "ins": true, "kbd": true, "mark": true, "q": true, "s": true,
	"samp": true, "small": true, "span": true, "strong": true, "sub": true,
	"sup": true, "time": true, "u": true, "var": true,
}

func isHeading(n *html.Node) bool {
	switch n.Data {
	case "h1", "h2", "h3", "h4", "h5", "h6":
		return true
	}
	return false
}

// furnitureLabels are the captions of page furniture, which on their own
// are never content, in the languages where sites use them most.
var furnitureLabels = map[string]bool{
	"comment": true, "comments": true, "leave a comment": true, "leave a reply": true,
	"share": true, "share this": true, "share this article": true, "share this story": true,
	"tags": true, "tag": true, "topics": true, "related": true, "related posts": true,
	"related articles": true, "related stories": true, "related news": true,
	"related content": true, "you may also like": true, "you might also like": true,
	"recommended": true, "read more": true, "read next": true, "more stories": true,
	"don't miss": true, "most popular": true, "most read": true, "trending": true,
	"advertisement": true, "advert": true, "ad": true, "ads": true, "sponsored": true,
	"sponsored content": true, "anzeige": true, "werbung": true, "publicité": true,
	"publicidad": true, "pubblicità": true, "publicidade": true, "iklan": true,
	"реклама": true, "close": true, "print": true, "email": true, "loading": true,
	"newsletter": true, "subscribe": true, "follow us": true, "skip to content": true,
	"back to top": true, "previous post": true, "next post": true,
}

// isFurnitureLabel reports whether text, on its own in a block, is the
// caption of furniture: "Related posts:", "ADVERTISEMENT", "Comments".
func isFurnitureLabel(text string) bool {
	text = strings.TrimFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	text = strings.ReplaceAll(strings.ToLower(text), "’", "'")
	return furnitureLabels[text]
}

// isLinkList reports whether n is a block that is mostly links with little
// text of its own: tag clouds, "read next" lists, tables of contents.
func isLinkList(n *html.Node, s textStats) bool {
	switch n.Data {
	case "ul", "ol", "div", "section", "dl":
	default:
		return false
	}
	if s.text == 0 || s.linkDensity() <= 0.7 || s.contentLen() >= 200 {
		return false
	}
	links := 0
	htmlnode.Walk(n, func(c *html.Node) bool {
		if c.Type == html.ElementNode && c.Data == "a" {
			links++
			return false
		}
		return links < 3
	})
	return links >= 3
}

// isLinkParagraph reports whether n is a paragraph that is little more
// than a link: "Read more: ...", "SEE ALSO: ...", a teaser's headline.
func isLinkParagraph(n *html.Node, s textStats) bool {
	switch n.Data {
	case "p", "li", "div", "h2", "h3", "h4", "h5", "h6":
	default:
		return false
	}
	if s.text == 0 || s.text >= linkyMax || s.linkDensity() < 0.8 {
		return false
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && blockTags[c.Data] {
			return false
		}
	}
	return true
}

// openingText returns the first text node of content that reads as
// prose rather than a label: 20 or more runes outside a link.
func openingText(content *html.Node) *html.Node {
	var found *html.Node
	htmlnode.Walk(content, func(n *html.Node) bool {
		if found != nil {
			return false
		}
		switch n.Type {
		case html.ElementNode:
			return n.Data != "a"
		case html.TextNode:
			if utf8.RuneCountInString(strings.TrimSpace(n.Data)) >= 20 {
				found = n
			}
		}
		return true
	})
	return found
}
