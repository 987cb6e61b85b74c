package readable

import (
	"encoding/json"
	"math"
	"net/url"
	"slices"
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

	query                                    bool // the URL has a query
	linkText, chromeText, mainText, listText int  // runes in links, navigation, main content, lists
	allSections, h1, paras, longParas        int
	pres, inlineCode, forms, inputs, buttons int
	images, tables, items, articles, quotes  int
	dls, links                               int
	cardLists, cardRun                       int // lists of cards; the longest's length
	datedCards, pricedCards                  int // runes in lists of cards with dates, with prices
	shopWords, forumWords, ctas, readMore    int // short runs of text that are a shop's, a forum's, a landing page's, a feed's
	pager, facets                            int
}

// Classify reads doc, before anything edits it, and says what kind of
// page it is. u is the page's URL, or nil.
func Classify(doc *html.Node, u *url.URL) Page {
	f := readFeatures(doc, u)
	page := typeModel.Page(f.vector())
	page.Product = f.product
	return page
}

// readFeatures reads the features of doc, at URL u (or nil), in one walk.
func readFeatures(doc *html.Node, u *url.URL) *features {
	r := &pageReader{f: &features{types: map[string]int{}}, authorClass: map[string]bool{}}
	r.f.readURL(u)
	htmlnode.WalkAround(doc, r.enter, r.leave)
	return r.f
}

// readURL reads the signals of the page's URL u, which may be nil: a
// forum's host, the path's segments, a query.
func (f *features) readURL(u *url.URL) {
	if u == nil {
		return
	}
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
	f.query = u.RawQuery != ""
}

// pageReader is the walk that reads a page's features: what it has
// counted, and where in the page it is.
type pageReader struct {
	f        *features
	ldBlocks int // JSON-LD blocks read, up to maxLDBlocks
	// depth holds, by partOf, the depths of the enclosing links,
	// navigation, main content and lists, kept as the walk enters and
	// leaves them.
	depth [inListCtx + 1]int
	// authorClass says of each class name read whether it names a
	// post's author: pages repeat their class names, and each is read
	// once.
	authorClass map[string]bool
}

// enter reads node n as the walk enters it, and says whether the walk
// goes into its children.
func (r *pageReader) enter(n *html.Node) bool {
	switch n.Type {
	case html.TextNode:
		r.measureText(n)
		return false
	case html.ElementNode:
	default:
		return true
	}
	if !r.readElement(n) {
		return false
	}
	part := partOf(n)
	r.depth[part]++
	if part == inLinkCtx {
		r.f.links++
	}
	r.f.readCards(n)
	r.f.readItemType(n)
	r.readAuthor(n)
	return true
}

// leave closes the part of the page element n opened.
func (r *pageReader) leave(n *html.Node) {
	if n.Type != html.ElementNode {
		return
	}
	r.depth[partOf(n)]--
}

// measureText counts text node n's runes, and adds them to the parts of the
// page it lies in.
func (r *pageReader) measureText(n *html.Node) {
	l := r.f.readText(n)
	if r.depth[inLinkCtx] > 0 {
		r.f.linkText += l
	}
	if r.depth[inChromeCtx] > 0 {
		r.f.chromeText += l
	}
	if r.depth[inMainCtx] > 0 {
		r.f.mainText += l
	}
	if r.depth[inListCtx] > 0 {
		r.f.listText += l
	}
}

// readElement counts element n by its name, and says whether the walk
// goes on into it: not into scripts, which it reads the JSON-LD of,
// styles and the like, nor preformatted code, which it counts whole.
func (r *pageReader) readElement(n *html.Node) bool {
	switch n.Data {
	case "script":
		if strings.EqualFold(strings.TrimSpace(htmlnode.Attr(n, "type")), "application/ld+json") && r.ldBlocks < maxLDBlocks && n.FirstChild != nil && len(n.FirstChild.Data) <= maxLDBytes {
			r.ldBlocks++
			r.f.readJSONLD(n.FirstChild.Data)
		}
		return false
	case "style", "template", "noscript", "svg":
		return false
	case "pre":
		r.f.code += htmlnode.TextLen(n)
		r.f.pres++
		return false
	}
	r.f.countElement(n)
	return true
}

// countElement counts element n among the kinds of element the
// classifier weighs: headings, paragraphs, forms, images, tables, list
// items and the like.
func (f *features) countElement(n *html.Node) {
	switch n.Data {
	case "meta":
		if strings.EqualFold(htmlnode.Attr(n, "property"), "og:type") {
			f.og = strings.ToLower(strings.TrimSpace(htmlnode.Attr(n, "content")))
		}
	case "section":
		f.allSections++
		if htmlnode.First(n, "h1", "h2", "h3", "h4") != nil {
			f.sections++
		}
	case "h1":
		f.h1++
		f.headings++
	case "h2", "h3", "h4":
		f.headings++
	case "time":
		f.times++
	case "p":
		f.paras++
		if l := htmlnode.TextLen(n); l >= proseMin {
			f.prose += l
			f.longParas++
		}
	case "code", "kbd", "samp":
		f.inlineCode++
	case "form":
		f.forms++
	case "input", "select", "textarea":
		if !strings.EqualFold(htmlnode.Attr(n, "type"), "hidden") {
			f.inputs++
		}
	case "button":
		f.buttons++
	case "img", "picture":
		f.images++
	case "table":
		f.tables++
	case "li":
		f.items++
	case "article":
		f.articles++
	case "blockquote":
		f.quotes++
	case "dl":
		f.dls++
	}
}

// readCards counts the lists of cards element n holds, and the text of
// those with dates and prices. Lists and tables are not read as cards:
// their rows are items.
func (f *features) readCards(n *html.Node) {
	if n.Data == "ul" || n.Data == "ol" || n.Data == "table" || n.Data == "tbody" || n.Data == "select" {
		return
	}
	c, ok := cardsIn(n)
	if !ok {
		return
	}
	l := htmlnode.TextLen(n)
	f.cards += l
	f.cardLists++
	f.cardRun = max(f.cardRun, c.run)
	if c.dated {
		f.datedCards += l
	}
	if c.priced {
		f.pricedCards += l
	}
}

// readItemType counts the schema.org types element n's microdata
// declares.
func (f *features) readItemType(n *html.Node) {
	if t := htmlnode.Attr(n, "itemtype"); t != "" {
		for _, s := range strings.Fields(t) {
			f.types[strings.ToLower(s[strings.LastIndexAny(s, "/#")+1:])]++
		}
	}
}

// readAuthor counts element n if it is marked as a post's author, by its
// microdata or by a class that names one.
func (r *pageReader) readAuthor(n *html.Node) {
	if ip := htmlnode.Attr(n, "itemprop"); ip == "author" || ip == "creator" {
		r.f.authors++
		return
	}
	c := htmlnode.Attr(n, "class")
	if c == "" {
		return
	}
	author, ok := r.authorClass[c]
	if !ok {
		author = mayNameAuthor(c) && hasWord(n, authorWords)
		r.authorClass[c] = author
	}
	if author {
		r.f.authors++
	}
}

// The parts of a page the classifier measures the text of.
const (
	noCtx = iota
	inLinkCtx
	inChromeCtx
	inMainCtx
	inListCtx
)

// partOf says which part of the page element n opens.
func partOf(n *html.Node) int {
	switch n.Data {
	case "a":
		return inLinkCtx
	case "nav", "aside", "footer":
		return inChromeCtx
	case "main", "article":
		return inMainCtx
	case "ul", "ol":
		return inListCtx
	}
	switch strings.ToLower(htmlnode.Attr(n, "role")) {
	case "navigation":
		return inChromeCtx
	case "main":
		return inMainCtx
	}
	return noCtx
}

var authorWords = map[string]bool{
	"author": true, "username": true, "poster": true, "postauthor": true, "userinfo": true,
	"usercard": true, "avatar": true,
}

// minCards is how many alike siblings make a list of cards.
const minCards = 6

// cardRun is what a list of cards holds.
type cardRun struct {
	run           int  // the cards in the longest run
	dated, priced bool // its first cards carry a date, a price
}

// cardsIn reports whether n's children include a list of cards: minCards
// or more elements in a row of one tag and class, the first of which hold
// a link and a heading or an image. The run is found by names first, so
// only the children of a long run are looked into.
func cardsIn(n *html.Node) (cardRun, bool) {
	var start, found *html.Node
	run, best := 0, 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		if start == nil || !alike(c, start) {
			start, run = c, 0
		}
		run++
		if run == minCards && found == nil && cardsFrom(start) {
			found = start
		}
		if found == start {
			best = run
		}
	}
	if found == nil {
		return cardRun{}, false
	}
	cr := cardRun{run: best}
	seen := 0
	for c := found; c != nil && seen < minCards; c = c.NextSibling {
		if c.Type != html.ElementNode {
			continue
		}
		seen++
		text := htmlnode.Text(c)
		if htmlnode.First(c, "time") != nil || namesDate(text) {
			cr.dated = true
		}
		if hasPrice(text) {
			cr.priced = true
		}
	}
	return cr, true
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

// namesDate reports whether s reads as holding a date: a month's name or
// its abbreviation next to a number, or a numeric date such as 2024-05-01
// or 01/05/2024.
func namesDate(s string) bool {
	if len(s) > 600 {
		s = s[:600]
	}
	ls := strings.ToLower(s)
	for _, m := range monthNames {
		for i := 0; ; {
			j := strings.Index(ls[i:], m)
			if j < 0 {
				break
			}
			j += i
			i = j + len(m)
			word := ls[j:]
			if k := strings.IndexFunc(word, func(r rune) bool { return r < 'a' || r > 'z' }); k >= 0 {
				word = word[:k]
			}
			// The month is a word of its own, named in full or cut short.
			if j > 0 && ls[j-1] >= 'a' && ls[j-1] <= 'z' || word != m && !slices.Contains(fullMonths, word) {
				continue
			}
			before := strings.TrimRight(ls[:j], " .,")
			after := strings.TrimLeft(ls[j+len(word):], ". ,")
			if before != "" && isDigit(before[len(before)-1]) || after != "" && isDigit(after[0]) {
				return true
			}
		}
	}
	for i := 0; i+5 <= len(s); i++ {
		if isDigit(s[i]) && (i == 0 || !isDigit(s[i-1])) && numericDate(s[i:]) {
			return true
		}
	}
	return false
}

var (
	monthNames = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
	fullMonths = []string{"january", "february", "march", "april", "june", "july", "august", "sept", "september",
		"october", "november", "december"}
)

// numericDate reports whether s opens with three groups of digits split
// by one separator, one of them a year, as 2024-05-01 and 1.5.2024 do.
func numericDate(s string) bool {
	sep := byte(0)
	i, year := 0, false
	for group := range 3 {
		n := 0
		for i < len(s) && isDigit(s[i]) && n < 4 {
			i++
			n++
		}
		if n == 0 {
			return false
		}
		year = year || n == 4
		if group == 2 {
			// A year tells a date from a version number.
			return year && (i == len(s) || !isDigit(s[i]))
		}
		if i >= len(s) || s[i] != '-' && s[i] != '/' && s[i] != '.' || sep != 0 && s[i] != sep {
			return false
		}
		sep = s[i]
		i++
	}
	return false
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

// readText counts n's text and what it says, and returns its length in
// runes, spaces left out.
func (f *features) readText(n *html.Node) int {
	if n.Parent != nil && (n.Parent.Data == "script" || n.Parent.Data == "style" || n.Parent.Data == "noscript") {
		return 0
	}
	s := n.Data
	l := nonSpace(s)
	f.text += l
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
		f.readLabel(s)
	}
	return l
}

// readLabel counts the short runs of text that are a kind of page's own:
// documentation's chrome, a shop's, a forum's, a landing page's calls to
// action, a feed's and a list's controls.
func (f *features) readLabel(s string) {
	s = strings.Trim(strings.TrimSpace(s), ":!?.»›→←«‹ ")
	if s == "" {
		return
	}
	switch strings.ToLower(s) {
	case "edit this page", "edit on github", "improve this page", "on this page", "in this article",
		"table of contents", "was this page helpful", "was this helpful", "next topic", "previous topic",
		"contents", "in this section", "edit", "view source", "suggest an edit", "report an issue":
		f.docChrome++
	case "add to cart", "add to basket", "add to bag", "buy now", "in stock", "out of stock", "add to wishlist",
		"sku", "quantity", "qty", "select size", "size guide", "specifications", "reviews":
		f.shopWords++
	case "reply", "quote", "report", "permalink", "posts", "joined", "member", "like", "share", "replies",
		"registered", "thread starter", "original poster", "solved", "accepted answer", "answers", "votes":
		f.forumWords++
	case "contact us", "get started", "book a demo", "request a demo", "get a quote", "request a quote",
		"free trial", "start free trial", "pricing", "learn more", "book now", "schedule a call", "get in touch",
		"our services", "services", "what we do", "testimonials", "our clients", "faq", "faqs", "contact", "sign up":
		f.ctas++
	case "read more", "continue reading", "read full article", "view all", "load more", "show more":
		f.readMore++
	case "next", "previous", "prev", "older posts", "newer posts", "next page", "previous page", "older", "newer", "2", "3":
		f.pager++
	case "sort by", "filter", "filters", "sort", "results", "showing", "show", "clear all", "refine", "price", "brand", "category", "categories":
		f.facets++
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

func nonSpace(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if !asciiSpace[c] {
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if !unicode.IsSpace(r) {
			n++
		}
		i += size
	}
	return n
}

// asciiSpace marks the ASCII characters unicode.IsSpace reports: text is
// mostly ASCII, and a table lookup is cheaper than decoding each rune.
var asciiSpace = [utf8.RuneSelf]bool{'\t': true, '\n': true, '\v': true, '\f': true, '\r': true, ' ': true}

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

// Features reads the classifier's inputs off a page: Classify's model
// weighs them, and the command that trains it (bench's train-pagetype)
// reads them through here. doc is read before anything edits it.
func Features(doc *html.Node, u *url.URL) []float64 {
	return readFeatures(doc, u).vector()
}

// FeatureNames names Features' values, in order.
func FeatureNames() []string {
	var names []string
	(&features{types: map[string]int{}}).each(func(name string, _ float64) { names = append(names, name) })
	return names
}

func (f *features) vector() []float64 {
	v := make([]float64, 0, 80)
	f.each(func(_ string, x float64) { v = append(v, x) })
	return v
}

// each hands fn the classifier's inputs, by name: counts on a log scale,
// since a page with twice the sections is not twice the landing page;
// shares of the page's text; and yes-or-no signals as 0 or 1.
func (f *features) each(fn func(name string, v float64)) {
	lg := func(n int) float64 { return math.Log1p(float64(max(n, 0))) }
	share := func(n int) float64 {
		if f.text == 0 {
			return 0
		}
		return min(float64(n)/float64(f.text), 1)
	}
	yes := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	for _, c := range []struct {
		name string
		n    int
	}{
		{"text", f.text}, {"sections", f.sections}, {"all_sections", f.allSections}, {"headings", f.headings},
		{"h1", f.h1}, {"times", f.times}, {"authors", f.authors}, {"prices", f.prices}, {"doc_chrome", f.docChrome},
		{"card_lists", f.cardLists}, {"card_run", f.cardRun}, {"paras", f.paras}, {"long_paras", f.longParas},
		{"pres", f.pres}, {"inline_code", f.inlineCode}, {"forms", f.forms}, {"inputs", f.inputs},
		{"buttons", f.buttons}, {"images", f.images}, {"tables", f.tables}, {"items", f.items},
		{"articles", f.articles}, {"quotes", f.quotes}, {"dls", f.dls}, {"links", f.links},
		{"shop_words", f.shopWords}, {"forum_words", f.forumWords}, {"ctas", f.ctas}, {"read_more", f.readMore},
		{"pager", f.pager}, {"facets", f.facets}, {"ld_comments", f.types["comment"]},
		{"ld_products", f.types["product"] + f.types["offer"]}, {"path_depth", len(f.path)},
		{"slug_words", slugWords(f.path)},
	} {
		fn("log_"+c.name, lg(c.n))
	}
	for _, c := range []struct {
		name string
		n    int
	}{
		{"prose", f.prose}, {"code", f.code}, {"cards", f.cards}, {"dated_cards", f.datedCards},
		{"priced_cards", f.pricedCards}, {"link_text", f.linkText}, {"chrome_text", f.chromeText},
		{"main_text", f.mainText}, {"list_text", f.listText},
	} {
		fn("share_"+c.name, share(c.n))
	}
	for _, c := range []struct {
		name string
		b    bool
	}{
		{"ld_article", f.hasType(articleTypes...)},
		{"ld_product", f.hasType("product", "productgroup", "offer", "aggregateoffer")},
		{"ld_forum", f.hasType("discussionforumposting", "qapage")},
		{"ld_collection", f.hasType("collectionpage", "offercatalog")},
		{"ld_itemlist", f.hasType("itemlist", "searchresultspage")},
		{"ld_tech", f.hasType("techarticle", "apireference", "softwaresourcecode")},
		{"ld_faq", f.hasType("faqpage", "question")},
		{"ld_howto", f.hasType("howto", "recipe")},
		{"ld_org", f.hasType("organization", "localbusiness", "corporation", "professionalservice", "service")},
		{"ld_webpage", f.hasType("webpage", "aboutpage", "contactpage")},
		{"ld_event", f.hasType("event", "jobposting", "course")},
		{"ld_breadcrumbs", f.hasType("breadcrumblist")},
		{"ld_software", f.hasType("softwareapplication", "webapplication", "mobileapplication")},
		{"ld_person", f.hasType("person", "profilepage")},
		{"og_article", f.og == "article"},
		{"og_product", f.og == "product" || f.og == "og:product"},
		{"og_website", f.og == "website"},
		{"forum_host", f.forumHost},
		{"forum_script", f.forumScript()},
		{"dated_path", f.datedPath()},
		{"query", f.query},
		{"root", len(f.path) == 0},
		{"numeric_segment", f.numericSegment()},
		{"path_docs", f.pathHas(docsPath...)},
		{"path_blog", f.pathHas(blogPath...)},
		{"path_forum", f.pathHas("t", "d", "comments", "questions", "q") || f.pathPrefix("thread", "topic", "forum", "discussion", "community", "board")},
		{"path_product", f.pathHas(productPath...)},
		{"path_category", f.pathHas(categoryPath...)},
		{"path_listing", f.pathHas(listingPath...)},
		{"path_service", f.pathHas(servicePath...)},
	} {
		fn(c.name, yes(c.b))
	}
}

var articleTypes = []string{"article", "newsarticle", "blogposting", "reportagenewsarticle", "analysisnewsarticle", "opinionnewsarticle", "scholarlyarticle"}

// The words of URL paths that file a page under a kind.
var (
	docsPath = []string{"docs", "doc", "documentation", "api", "reference", "manual", "handbook", "guide", "guides",
		"tutorial", "tutorials", "learn", "kb", "knowledge-base", "help", "developer", "developers", "sdk"}
	blogPath     = []string{"blog", "blogs", "news", "article", "articles", "story", "stories", "post", "posts", "press", "magazine"}
	productPath  = []string{"product", "products", "p", "item", "items", "dp", "buy"}
	categoryPath = []string{"category", "categories", "collections", "collection", "c", "shop", "store", "catalog", "department", "brand", "brands", "tag", "tags"}
	listingPath  = []string{"jobs", "careers", "events", "search", "results", "listings", "directory", "archive", "archives", "page", "author", "authors", "topics", "list"}
	servicePath  = []string{"services", "service", "solutions", "solution", "pricing", "features", "about", "about-us", "contact", "company", "industries", "platform", "enterprise", "plans"}
)

// slugWords counts the hyphenated words of the path's last segment: a
// story's slug has many, a section's name one or two.
func slugWords(path []string) int {
	if len(path) == 0 {
		return 0
	}
	last := path[len(path)-1]
	if i := strings.LastIndexByte(last, '.'); i > 0 {
		last = last[:i]
	}
	return strings.Count(last, "-") + strings.Count(last, "_") + 1
}

// numericSegment reports whether a path segment is a number, as an id.
func (f *features) numericSegment() bool {
	for _, p := range f.path {
		if p != "" && strings.Trim(p, "0123456789") == "" {
			return true
		}
	}
	return false
}

// Model is a multinomial logistic regression over Features, trained on
// the WCXB development split by bench's train-pagetype, with what each
// way of drawing a page (Actions) scored on the training pages of each
// type.
type Model struct {
	Features []string // the names of the inputs it was trained on
	// Mean and Scale standardise each input.
	Mean, Scale []float64
	Classes     []PageType
	// Weights holds one row per class: a weight per input, then the bias.
	Weights [][]float64
	// Utility[c][a] is the mean word F1 that Actions[a] drew from the
	// training pages of class c.
	Utility [][]float64
	// ArticleOdds multiplies the odds of an article before the likeliest
	// type is taken: an article taken for another type loses the most.
	ArticleOdds float64
}

// draws are the ways a page can be drawn: Collection stands for every
// type drawn wide without comments (collection, listing, service), and an
// uncertain article is read as an article unless its best block is thin.
var draws = []Page{
	{Type: TypeArticle},
	{Type: TypeArticle, Uncertain: true},
	{Type: TypeForum},
	{Type: TypeProduct},
	{Type: TypeCollection},
	{Type: TypeDocumentation},
}

// Actions are the ways a page can be drawn, in the order of a Model's
// Utility columns: a copy the caller may keep.
func Actions() []Page { return slices.Clone(draws) }

// Page decides the type of a page with inputs x. What a page declares
// outright (a forum post's structured data, a forum engine's script name)
// and too little text to be of any type decide alone; otherwise the model
// does (Classify), and an article's structured data makes it sure of an
// article. A page likeliest to be a thread that Classify reads as an
// article is read as a thread when that promises more.
func (m *Model) Page(x []float64) Page {
	get := func(name string) float64 {
		if i := slices.Index(m.Features, name); i >= 0 && i < len(x) {
			return x[i]
		}
		return 0
	}
	switch {
	case get("log_text") < math.Log1p(minTypedText):
		return Page{Type: TypeOther, Uncertain: true}
	case get("ld_forum") == 1 || get("forum_script") == 1:
		return Page{Type: TypeForum}
	}
	page := m.read(m.Probabilities(x))
	// A page the model takes for an article and that declares itself one
	// is read as one, whatever the share of its best block: paywalled and
	// short stories have little text there, and drawing them wide brings
	// in the page around them.
	if page.Type == TypeArticle && (get("ld_article") == 1 || get("dated_path") == 1) {
		page.Uncertain = false
	}
	return page
}

// Probabilities returns the probability of each of m's classes for the
// inputs x.
func (m *Model) Probabilities(x []float64) []float64 {
	p := make([]float64, len(m.Classes))
	top := math.Inf(-1)
	for c, w := range m.Weights {
		z := w[len(w)-1]
		for i, v := range x {
			z += w[i] * (v - m.Mean[i]) / m.Scale[i]
		}
		p[c] = z
		top = max(top, z)
	}
	sum := 0.0
	for c := range p {
		p[c] = math.Exp(p[c] - top)
		sum += p[c]
	}
	for c := range p {
		p[c] /= sum
	}
	return p
}

// read is Classify, but for a page likeliest to be a thread: the thumb
// on an article's scale is for pages that may be articles or lists, and a
// thread read as an article loses every reply, an article read as a
// thread only its comments.
func (m *Model) read(p []float64) Page {
	page := m.Classify(p)
	if page.Type == TypeArticle && m.likeliest(p) == TypeForum && m.expected(p, Page{Type: TypeForum}) > m.expected(p, page) {
		return Page{Type: TypeForum}
	}
	return page
}

// likeliest returns the likeliest class for probabilities p.
func (m *Model) likeliest(p []float64) PageType {
	top := 0
	for c := range p {
		if p[c] > p[top] {
			top = c
		}
	}
	return m.Classes[top]
}

// expected returns the F1 that drawing a page as page promises, for class
// probabilities p.
func (m *Model) expected(p []float64, page Page) float64 {
	a := slices.IndexFunc(draws, func(a Page) bool { return a.Type == drawnAs(page.Type) && a.Uncertain == page.Uncertain })
	if a < 0 {
		return math.Inf(-1)
	}
	u := 0.0
	for c := range p {
		u += p[c] * m.Utility[c][a]
	}
	return u
}

// Classify returns the likeliest class for probabilities p, uncertain
// when reading the page as that class promises less F1 than reading it
// as an uncertain article does.
func (m *Model) Classify(p []float64) Page {
	top := 0
	odds := func(c int) float64 {
		if m.Classes[c] == TypeArticle && m.ArticleOdds > 0 {
			return p[c] * m.ArticleOdds
		}
		return p[c]
	}
	for c := range p {
		if odds(c) > odds(top) {
			top = c
		}
	}
	page := Page{Type: m.Classes[top]}
	sure := slices.IndexFunc(draws, func(a Page) bool { return a.Type == drawnAs(page.Type) && !a.Uncertain })
	unsure := slices.IndexFunc(draws, func(a Page) bool { return a.Uncertain })
	var uSure, uUnsure float64
	for c := range p {
		uSure += p[c] * m.Utility[c][sure]
		uUnsure += p[c] * m.Utility[c][unsure]
	}
	page.Uncertain = uUnsure > uSure
	return page
}

// Decide returns the Action of best expected F1 for class probabilities
// p, reporting its type as the likeliest class the action stands for. A
// thread's and a manual's draws are weighed only for a page likeliest to
// be one. The trainer compares it with Classify.
func (m *Model) Decide(p []float64) Page {
	likeliest := m.likeliest(p)
	best, bestU := 0, math.Inf(-1)
	for a := range draws {
		if t := draws[a].Type; (t == TypeDocumentation || t == TypeForum) && likeliest != t {
			// On average a hair better on pages of other kinds too,
			// these draws would report them as manuals and threads.
			continue
		}
		u := 0.0
		for c := range p {
			u += p[c] * m.Utility[c][a]
		}
		if u > bestU {
			best, bestU = a, u
		}
	}
	page := draws[best]
	var among []PageType
	switch {
	case page.Uncertain:
		among = m.Classes
	case page.Type == TypeCollection || page.Type == TypeProduct:
		// The wide draws differ only in a product's facts, which a page
		// without them does not get: the type reported is the likeliest
		// of those drawn wide.
		among = []PageType{TypeProduct, TypeCollection, TypeListing, TypeService}
	default:
		return page
	}
	top := -1.0
	for c, t := range m.Classes {
		if slices.Contains(among, t) && p[c] > top {
			page.Type, top = t, p[c]
		}
	}
	return page
}

// drawnAs is the type among the draws that pages of type t are drawn as.
func drawnAs(t PageType) PageType {
	switch t {
	case TypeListing, TypeService:
		return TypeCollection
	}
	return t
}
