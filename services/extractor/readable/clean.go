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
}

// boilerplateWords start the class or id words of page furniture.
var boilerplateWords = []string{
	"share", "sharing", "social", "comment", "disqus", "cookie", "consent", "gdpr",
	"banner", "newsletter", "related", "sidebar", "advert", "promo", "sponsor",
	"popup", "outbrain", "taboola", "breadcrumb",
}

// adWords are whole class or id words naming ad slots; as prefixes they
// would hit "address", "admin" and the like.
var adWords = map[string]bool{
	"ad": true, "ads": true, "adsbygoogle": true, "adslot": true, "adunit": true,
	"adwrapper": true, "adcontainer": true, "dfp": true,
}

// screenReaderClasses hide text that sighted readers never see.
var screenReaderClasses = map[string]bool{
	"sr-only": true, "visually-hidden": true, "visuallyhidden": true,
	"screen-reader-text": true, "screen-reader-only": true,
}

// clean removes the page furniture inside content: navigation, asides,
// forms, page headers and footers, landmark roles other than the main one,
// elements whose class or id names them as furniture, and lists of links.
//
// An element that wraps the article's text is kept whatever its name says:
// pages wrap whole articles in a form (ASP.NET) or in a div classed
// "l-sidebar-fixed l-article-body". The article's text is where the scorer
// puts it; without a scorer pick, it is the opening text, when the element
// also holds half of all text.
func clean(content *html.Node) {
	if content == nil {
		return
	}
	st := measure(content)
	rootText := st.of(content).text
	top, _ := score(content, st)
	opening := openingText(content)
	wraps := func(n *html.Node) bool {
		if top != nil && top != content {
			return htmlnode.Contains(n, top)
		}
		return opening != nil && htmlnode.Contains(n, opening) && st.of(n).text*2 >= rootText
	}

	var doomed []*html.Node
	htmlnode.Walk(content, func(n *html.Node) bool {
		if n.Type != html.ElementNode || n == content {
			return true
		}
		if isFurniture(n) || isLinkList(n, st.of(n)) {
			if wraps(n) {
				return true
			}
			doomed = append(doomed, n)
			return false
		}
		return true
	})
	for _, n := range doomed {
		htmlnode.Remove(n)
	}
}

// isFurniture reports whether n is page furniture by its tag, role, class
// or id.
func isFurniture(n *html.Node) bool {
	if boilerplateTags[n.Data] {
		return true
	}
	if (n.Data == "header" || n.Data == "footer") && htmlnode.Closest(n, "article", "section", "main") == nil {
		return true
	}
	if unlikelyRoles[strings.ToLower(strings.TrimSpace(htmlnode.Attr(n, "role")))] {
		return true
	}
	for _, class := range strings.Fields(htmlnode.Attr(n, "class")) {
		if screenReaderClasses[strings.ToLower(class)] || hintIsFurniture(class) {
			return true
		}
	}
	return hintIsFurniture(htmlnode.Attr(n, "id"))
}

func hintIsFurniture(hint string) bool {
	for _, w := range words(hint) {
		if adWords[w] {
			return true
		}
		for _, b := range boilerplateWords {
			if strings.HasPrefix(w, b) {
				return true
			}
		}
	}
	return false
}

// words splits a class or id into lower-case words at punctuation, digits
// and camelCase humps: "postComments_list" gives post, comments, list.
func words(hint string) []string {
	var out []string
	start := -1
	prevLower := false
	for i, r := range hint {
		isLetter := unicode.IsLetter(r)
		if !isLetter || (prevLower && unicode.IsUpper(r)) {
			if start >= 0 {
				out = append(out, strings.ToLower(hint[start:i]))
				start = -1
			}
		}
		if isLetter && start < 0 {
			start = i
		}
		prevLower = unicode.IsLower(r)
	}
	if start >= 0 {
		out = append(out, strings.ToLower(hint[start:]))
	}
	return out
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
