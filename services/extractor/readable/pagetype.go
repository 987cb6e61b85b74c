package readable

import (
	"encoding/json"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// PageType is what kind of page a document is, which decides how its
// content is drawn: one running text, a thread of posts, a list of cards,
// a product, documentation, or a service's landing page.
type PageType string

// The page types, as diagnostics.page_type reports them.
const (
	TypeArticle       PageType = "article"
	TypeForum         PageType = "forum"
	TypeProduct       PageType = "product"
	TypeCollection    PageType = "collection"
	TypeListing       PageType = "listing"
	TypeDocumentation PageType = "documentation"
	TypeService       PageType = "service"
	TypeOther         PageType = "other"
)

// Page is what the classifier found out about a page.
type Page struct {
	Type PageType
	// Uncertain says the signals for Type were weak: an article so
	// classified is drawn wide when its best block holds little of the
	// page.
	Uncertain bool
	// Product holds what a product page's structured data says of the
	// product, for the parts its markup hides.
	Product Product
}

// Product is a product's structured data.
type Product struct {
	Name, Description string
}

// Bounds on the structured data the classifier reads.
const (
	maxLDBytes  = 1 << 20
	maxLDBlocks = 20
	maxLDDepth  = 12
)

// features are the signals a page gives about its type, read in one walk
// before anything edits the tree.
type features struct {
	// types are the schema.org types the page declares, in JSON-LD and
	// microdata, lower case.
	types map[string]int
	og    string
	path  []string // the URL's path segments, lower case
	// forumHost says the host is named as a forum's: forum.example.com,
	// community.example.org, examplebbs.net.
	forumHost bool

	text, prose, code int // runes of visible text, of prose paragraphs, of code
	sections          int // section elements that carry a heading
	headings          int
	times             int // time elements and date-stamped bylines
	authors           int // elements marked as a post's author
	prices            int // text runs that read as a price
	docChrome         int // "edit this page", "on this page" and the like
	// cards is the text of lists of cards: six or more siblings of one
	// tag and class, each with a link and a heading or an image.
	cards   int
	product Product
}

// Classify reads doc, before anything edits it, and says what kind of
// page it is. u is the page's URL, or nil.
func Classify(doc *html.Node, u *url.URL) Page {
	f := readFeatures(doc, u)
	t, weak := f.decide()
	return Page{Type: t, Uncertain: weak, Product: f.product}
}

func readFeatures(doc *html.Node, u *url.URL) *features {
	f := &features{types: map[string]int{}}
	if u != nil {
		host := strings.ToLower(u.Hostname())
		for _, w := range []string{"forum", "community", "discuss", "boards.", "bbs."} {
			if strings.Contains(host, w) {
				f.forumHost = true
			}
		}
		for _, s := range strings.Split(strings.ToLower(u.Path), "/") {
			if s != "" {
				f.path = append(f.path, s)
			}
		}
	}
	ldBlocks := 0
	htmlnode.Walk(doc, func(n *html.Node) bool {
		switch n.Type {
		case html.TextNode:
			f.readText(n)
			return false
		case html.ElementNode:
		default:
			return true
		}
		switch n.Data {
		case "script":
			if strings.EqualFold(strings.TrimSpace(htmlnode.Attr(n, "type")), "application/ld+json") && ldBlocks < maxLDBlocks && n.FirstChild != nil && len(n.FirstChild.Data) <= maxLDBytes {
				ldBlocks++
				f.readJSONLD(n.FirstChild.Data)
			}
			return false
		case "style", "template", "noscript", "svg":
			return false
		case "meta":
			if strings.EqualFold(htmlnode.Attr(n, "property"), "og:type") {
				f.og = strings.ToLower(strings.TrimSpace(htmlnode.Attr(n, "content")))
			}
		case "section":
			if htmlnode.First(n, "h1", "h2", "h3", "h4") != nil {
				f.sections++
			}
		case "h1", "h2", "h3", "h4":
			f.headings++
		case "time":
			f.times++
		case "p":
			if l := htmlnode.TextLen(n); l >= proseMin {
				f.prose += l
			}
		case "pre":
			f.code += htmlnode.TextLen(n)
			return false
		}
		if n.Data != "ul" && n.Data != "ol" && n.Data != "table" && n.Data != "tbody" && n.Data != "select" {
			if hasCards(n) {
				f.cards += htmlnode.TextLen(n)
			}
		}
		if t := htmlnode.Attr(n, "itemtype"); t != "" {
			for _, s := range strings.Fields(t) {
				f.types[strings.ToLower(s[strings.LastIndexAny(s, "/#")+1:])]++
			}
		}
		if ip := htmlnode.Attr(n, "itemprop"); ip == "author" || ip == "creator" {
			f.authors++
		} else if c := htmlnode.Attr(n, "class"); mayNameAuthor(c) && hasWord(n, authorWords) {
			f.authors++
		}
		return true
	})
	return f
}

var authorWords = map[string]bool{
	"author": true, "username": true, "poster": true, "postauthor": true, "userinfo": true,
	"usercard": true, "avatar": true,
}

// minCards is how many alike siblings make a list of cards.
const minCards = 6

// hasCards reports whether n's children include a list of cards: minCards
// or more elements in a row of one tag and class, the first of which hold
// a link and a heading or an image. The run is found by names first, so
// only the children of a long run are looked into.
func hasCards(n *html.Node) bool {
	var start *html.Node
	run := 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if start == nil || !alike(c, start) {
			start, run = c, 0
		}
		run++
		if run == minCards && cardsFrom(start) {
			return true
		}
	}
	return false
}

// alike reports whether a and b have one tag and one class.
func alike(a, b *html.Node) bool {
	return a.Data == b.Data && htmlnode.Attr(a, "class") == htmlnode.Attr(b, "class")
}

// cardsFrom reports whether the first minCards elements from start on,
// all alike, are cards.
func cardsFrom(start *html.Node) bool {
	seen := 0
	for c := start; c != nil && seen < minCards; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if !alike(c, start) || !isCard(c) {
			return false
		}
		seen++
	}
	return seen == minCards
}

func isCard(c *html.Node) bool {
	return htmlnode.First(c, "a") != nil && htmlnode.First(c, "h2", "h3", "h4", "h5", "img") != nil
}

// mayNameAuthor is a cheap test every class naming an author passes:
// splitting every class into words is the classifier's costliest step.
func mayNameAuthor(class string) bool {
	for _, frag := range []string{"uthor", "ser", "oster", "vatar"} {
		if strings.Contains(class, frag) {
			return true
		}
	}
	return false
}

// hasWord reports whether a word of n's class names is in words.
func hasWord(n *html.Node, words map[string]bool) bool {
	found := false
	for rest := htmlnode.Attr(n, "class"); rest != "" && !found; {
		var token string
		token, rest = nextField(rest)
		eachWord(token, func(w []byte) {
			if words[string(w)] {
				found = true
			}
		})
	}
	return found
}

func (f *features) readText(n *html.Node) {
	if n.Parent != nil && (n.Parent.Data == "script" || n.Parent.Data == "style" || n.Parent.Data == "noscript") {
		return
	}
	s := n.Data
	for _, r := range s {
		if !unicode.IsSpace(r) {
			f.text++
		}
	}
	if p := n.Parent; p != nil && p.Data != "p" && p.Data != "a" && len(s) >= proseMin {
		// Running text written straight into a div or between line
		// breaks, as older templates do.
		if l := nonSpace(s); l >= proseMin {
			f.prose += l
		}
	}
	// $, or the lead byte of £, ¥, € or ₹: most text has none.
	if (strings.IndexByte(s, '$') >= 0 || strings.IndexByte(s, 0xc2) >= 0 || strings.IndexByte(s, 0xe2) >= 0) && hasPrice(s) {
		f.prices++
	}
	if len(s) < 40 {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "edit this page", "edit on github", "improve this page", "on this page", "in this article",
			"table of contents", "was this page helpful?", "was this helpful?", "next topic", "previous topic":
			f.docChrome++
		}
	}
}

// hasPrice reports whether s holds an amount of money: a currency sign
// next to a digit.
func hasPrice(s string) bool {
	for i, r := range s {
		if !strings.ContainsRune("$€£¥₹", r) {
			continue
		}
		next := strings.TrimLeft(s[i+utf8.RuneLen(r):], " \u00a0")
		if next != "" && next[0] >= '0' && next[0] <= '9' {
			return true
		}
		before := strings.TrimRight(s[:i], " \u00a0")
		if before != "" && before[len(before)-1] >= '0' && before[len(before)-1] <= '9' {
			return true
		}
	}
	return false
}

func (f *features) readJSONLD(raw string) {
	var v any
	if err := json.Unmarshal([]byte(strings.TrimSpace(raw)), &v); err != nil {
		return
	}
	f.walkLD(v, 0)
}

// walkLD counts the types of every object in a JSON-LD value and keeps
// the first product's name and description.
func (f *features) walkLD(v any, depth int) {
	if depth > maxLDDepth {
		return
	}
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			f.walkLD(e, depth+1)
		}
	case map[string]any:
		isProduct := false
		for _, typ := range ldTypes(t["@type"]) {
			f.types[typ]++
			if typ == "product" || typ == "productgroup" {
				isProduct = true
			}
		}
		if isProduct && f.product.Name == "" {
			f.product.Name = str(t["name"])
			f.product.Description = str(t["description"])
		}
		for k, e := range t {
			if k == "@type" || k == "@context" {
				continue
			}
			switch e.(type) {
			case []any, map[string]any:
				f.walkLD(e, depth+1)
			}
		}
	}
}

func ldTypes(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{strings.ToLower(t[strings.LastIndexAny(t, "/:")+1:])}
	case []any:
		var out []string
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, strings.ToLower(s[strings.LastIndexAny(s, "/:")+1:]))
			}
		}
		return out
	}
	return nil
}

func str(v any) string {
	if s, ok := v.(string); ok {
		return strings.TrimSpace(s)
	}
	return ""
}

func (f *features) hasType(types ...string) bool {
	for _, t := range types {
		if f.types[t] > 0 {
			return true
		}
	}
	return false
}

// pathPrefix reports whether a path segment starts with one of prefixes.
func (f *features) pathPrefix(prefixes ...string) bool {
	for _, p := range f.path {
		for _, s := range prefixes {
			if strings.HasPrefix(p, s) {
				return true
			}
		}
	}
	return false
}

// forumScript reports whether the path names the page script of a classic
// forum engine, which shows one thread.
func (f *features) forumScript() bool {
	for _, p := range f.path {
		for _, s := range []string{"viewtopic.php", "showthread.php", "showtopic", "viewthread"} {
			if strings.HasPrefix(p, s) {
				return true
			}
		}
	}
	return false
}

func (f *features) pathHas(segs ...string) bool {
	for _, p := range f.path {
		for _, s := range segs {
			if p == s {
				return true
			}
		}
	}
	return false
}

// minTypedText is the visible text, in runes, a page needs to be of any
// type: less is an empty shell or an error page.
const minTypedText = 200

// decide weighs the signals into a type, and says whether the signals
// for it were weak.
func (f *features) decide() (PageType, bool) {
	proseShare := 0.0
	if f.text > 0 {
		proseShare = float64(f.prose) / float64(f.text)
	}
	codeShare := 0.0
	if f.text > 0 {
		codeShare = float64(f.code) / float64(f.text)
	}
	articleLD := f.hasType("article", "newsarticle", "blogposting", "reportagenewsarticle", "analysisnewsarticle", "opinionnewsarticle", "scholarlyarticle")
	switch {
	case f.text < minTypedText:
		return TypeOther, true
	case f.hasType("discussionforumposting", "qapage") || f.types["comment"] >= 3 && !articleLD:
		return TypeForum, false
	case f.forumScript():
		return TypeForum, false
	case (f.forumHost || f.pathHas("t", "d", "comments", "questions", "post") || f.pathPrefix("thread", "topic", "forum", "discussion", "community", "board")) && (f.authors >= 2 || f.times >= 2) && !articleLD:
		return TypeForum, false
	case articleLD && proseShare >= 0.25:
		return TypeArticle, false
	case f.hasType("product", "productgroup") && f.types["product"] <= 2 || f.og == "product" || f.og == "og:product":
		return TypeProduct, false
	case f.hasType("techarticle", "apireference"),
		f.pathHas("docs", "doc", "documentation", "api", "reference", "manual", "handbook") && !articleLD,
		f.docChrome >= 1 && codeShare >= 0.05 && !articleLD:
		return TypeDocumentation, false
	case articleLD || f.datedPath():
		return TypeArticle, false
	case f.og == "article" && proseShare >= 0.2 || f.pathHas("blog", "news", "article", "articles", "story", "stories", "post", "posts"):
		return TypeArticle, true
	case f.hasType("collectionpage", "offercatalog") || f.types["product"] > 2 || f.prices >= 6 && proseShare < 0.3:
		return TypeCollection, false
	case f.cards*10 >= f.text*4 && proseShare < 0.5:
		if f.prices >= minCards {
			return TypeCollection, false
		}
		return TypeListing, false
	case f.hasType("itemlist", "searchresultspage"):
		return TypeListing, false
	case proseShare >= 0.5:
		return TypeArticle, true
	case f.sections >= 4:
		return TypeService, false
	case proseShare < 0.25:
		return TypeService, true
	}
	return TypeArticle, true
}

func nonSpace(s string) int {
	n := 0
	for _, r := range s {
		if !unicode.IsSpace(r) {
			n++
		}
	}
	return n
}

// datedPath reports whether the URL's path files the page under a year,
// as news sites and blogs do: /2019/11/18/slug.
func (f *features) datedPath() bool {
	for _, p := range f.path {
		if len(p) == 4 && (strings.HasPrefix(p, "19") || strings.HasPrefix(p, "20")) && isDigit(p[2]) && isDigit(p[3]) {
			return true
		}
	}
	return false
}
