package readable

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// block is a leaf block of the content: an element holding text and no
// other blocks.
type block struct {
	node    *html.Node
	s       textStats
	heading bool
}

// prose reports whether b reads as running text.
func (b block) prose() bool {
	return !b.heading && b.s.text >= proseMin && b.s.linkDensity() < 0.5
}

// trim removes the labels before the article's first paragraph of prose
// and after its last: kickers, bylines, datelines, share counts, "Tags:",
// "Filed under", and headings left with nothing under them. A label is a
// short block that does not end a sentence. List items are never labels:
// a list is the article's structure. After the last paragraph, a label
// that shares that paragraph's parent is kept too: the article's own
// blocks (a results table written as lines, a closing note) sit with its
// paragraphs, while furniture comes in wrappers of its own. Between the
// first and last paragraph nothing is touched: a short line there is as
// likely a subheading written as bold text as it is furniture.
func trim(content *html.Node, st treeStats) {
	blocks := leafBlocks(content, st)
	first, last := -1, -1
	for i, b := range blocks {
		if b.prose() {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return
	}
	var doomed []*html.Node
	firstParent := blocks[first].node.Parent
	for _, b := range blocks[:first] {
		if b.heading || !mayBeLabel(b) {
			continue
		}
		if isDateline(b) || b.node.Parent != firstParent && isLabel(b) {
			doomed = append(doomed, b.node)
		}
	}
	lastParent := blocks[last].node.Parent
	// Walking back from the end: a heading goes when nothing it heads is
	// left after it; after the last paragraph, labels go; anywhere, the
	// site's sign-offs go (a call to follow or subscribe, a reporting
	// credit, a copyright line), up to the article's last own block.
	headed := false
	for i := len(blocks) - 1; i >= first; i-- {
		b := blocks[i]
		if b.heading {
			if !headed {
				doomed = append(doomed, b.node)
			}
			continue
		}
		if i > last && (b.s.linkDensity() >= 0.5 || mayBeLabel(b) && b.node.Parent != lastParent) && isLabel(b) {
			doomed = append(doomed, b.node)
			continue
		}
		if b.s.text <= maxSignoff && isSignoff(htmlnode.Text(b.node)) {
			doomed = append(doomed, b.node)
			continue
		}
		if i <= last {
			break
		}
		headed = true
	}
	for _, n := range doomed {
		st.detach(n, content)
	}
}

// maxSignoff bounds the text, in non-space runes, of a sign-off block.
const maxSignoff = 300

// signoffPhrases mark the closing lines sites add to every article.
var signoffPhrases = []string{
	"follow us", "follow him", "follow her", "follow them", "follow me", "follow the",
	"on twitter", "on facebook", "on instagram", "newsletter", "subscribe", "sign up",
	"your inbox", "news tip", "have a tip", "contributed to this report",
	"contributed reporting", "reporting by", "editing by", "writing by",
	"all rights reserved", "copyright", "©", "share this", "like this story",
}

// isSignoff reports whether text reads as a site's sign-off.
func isSignoff(text string) bool {
	text = strings.ToLower(text)
	for _, p := range signoffPhrases {
		if strings.Contains(text, p) {
			return true
		}
	}
	return false
}

// leafBlocks lists the leaf blocks under root in document order. Tables,
// preformatted text and lists of definitions count as one block each.
func leafBlocks(root *html.Node, st treeStats) []block {
	var out []block
	htmlnode.Walk(root, func(n *html.Node) bool {
		if n.Type != html.ElementNode || n == root {
			return true
		}
		if inlineTags[n.Data] || n.Data == "br" {
			return false
		}
		s := st.of(n)
		if s.text == 0 {
			return false
		}
		switch n.Data {
		case "table", "pre", "dl", "blockquote":
			out = append(out, block{node: n, s: s})
			return false
		}
		if hasBlockChild(n) {
			return true
		}
		out = append(out, block{node: n, s: s, heading: isHeading(n)})
		return false
	})
	return out
}

func hasBlockChild(n *html.Node) bool {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && !inlineTags[c.Data] && c.Data != "br" && c.Data != "img" {
			return true
		}
	}
	return false
}

// mayBeLabel reports whether b is of a kind that can be a label: list
// items, quotes, tables and code are the article's own structure.
func mayBeLabel(b block) bool {
	switch b.node.Data {
	case "li", "blockquote", "table", "pre", "dl":
		return false
	}
	return b.s.text < proseMin
}

// isLabel reports whether b, short, does not read as a sentence.
func isLabel(b block) bool {
	r, _ := utf8.DecodeLastRuneInString(htmlnode.Text(b.node))
	return !endsSentence(r)
}

// isDateline reports whether b, short, is an author or date line: "By
// Jane Doe", "Updated 1:39 am EST, November 20, 2019".
func isDateline(b block) bool {
	text := htmlnode.Text(b.node)
	if byline(text) {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(text)
	return hasDate(text) && (!endsSentence(r) || r == '.' && b.s.text < maxLabel)
}

// hasDate reports whether text holds a year (four digits from 1900 to
// 2099) or a clock time.
func hasDate(text string) bool {
	digits := 0
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c >= '0' && c <= '9' {
			digits++
			continue
		}
		if c == ':' && digits > 0 && digits <= 2 && i+2 < len(text) && isDigit(text[i+1]) && isDigit(text[i+2]) && (i+3 == len(text) || !isDigit(text[i+3])) {
			return true
		}
		if digits == 4 && (text[i-4:i-2] == "19" || text[i-4:i-2] == "20") {
			return true
		}
		digits = 0
	}
	return digits == 4 && (text[len(text)-4:len(text)-2] == "19" || text[len(text)-4:len(text)-2] == "20")
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// endsSentence reports whether r can end a sentence, closing quotes and
// brackets included, or lead into what follows (a colon), as a label
// does not. Emoji end sentences on the informal web.
func endsSentence(r rune) bool {
	switch r {
	case '.', '!', '?', '…', '。', '！', '？', '"', '”', '’', '\'', ')', '»', '」', ':', '：':
		return true
	}
	return unicode.Is(unicode.So, r)
}

// byline reports whether text is an author line: "By Jane Doe", which
// can end in an initial's period.
func byline(text string) bool {
	rest, ok := strings.CutPrefix(text, "By ")
	if !ok {
		rest, ok = strings.CutPrefix(text, "by ")
	}
	if !ok || len(rest) == 0 {
		return false
	}
	r, _ := utf8.DecodeRuneInString(rest)
	return unicode.IsUpper(r)
}
