package readable

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// hint is what an element's class and id say about it.
type hint uint8

const (
	// hintUnlikely: page furniture that never holds the article (sharing,
	// related links, ads, navigation).
	hintUnlikely hint = 1 << iota
	// hintFurniture: furniture unless it holds the article's prose
	// (widgets, galleries, tag lists).
	hintFurniture
	// hintComments: a comment section. It can hold more prose than the
	// article, so it is never scored, even under a content-like name.
	hintComments
	// hintMeta: bylines, dates, captions, credits, tags and other short
	// labels around the text; furniture only while it stays small.
	hintMeta
	// hintContent: named as the content ("article-body", "entry").
	hintContent
	// hintOffscreen: text for screen readers only, never shown.
	hintOffscreen
)

// unlikelyWords are class and id words that name page furniture which
// never holds the article: the scorer does not read inside it.
var unlikelyWords = map[string]bool{
	// sharing
	"share": true, "shares": true, "sharing": true, "sharebar": true, "social": true,
	"sociable": true, "socials": true, "syndication": true, "addthis": true, "sharethis": true,
	"sharedaddy": true,
	// ads and promotion
	"ad": true, "ads": true, "adsbygoogle": true, "adslot": true, "adunit": true,
	"adwrapper": true, "adcontainer": true, "advert": true, "adverts": true,
	"advertisement": true, "dfp": true, "sponsor": true, "sponsors": true,
	"sponsored": true, "outbrain": true, "taboola": true,
	"zergnet": true,
	// what to read next
	"related": true, "relatedposts": true, "recirc": true, "recirculation": true,
	"recommended": true, "recommendations": true, "trending": true, "mostread": true,
	"mostpopular": true, "pagination": true, "pager": true,
	// subscriptions and consent
	"newsletter": true, "newsletters": true, "subscribe": true, "subscription": true,
	"signup": true, "optin": true, "cookie": true, "cookies": true, "consent": true,
	"gdpr": true,
	// navigation and page chrome
	"nav": true, "navbar": true, "navigation": true, "menu": true, "breadcrumb": true,
	"breadcrumbs": true, "masthead": true, "footer": true, "toolbar": true, "sidebar": true,
	"popup": true, "modal": true,
}

// furnitureWords name furniture too, but pages also use them for wrappers
// of real content (page builders put every block in a "widget", landing
// pages their opening pitch in a "banner" and their offers in "promo"
// cards), so they only mark an element for removal, and not when it holds
// the article's prose.
var furnitureWords = map[string]bool{
	"widget": true, "widgets": true, "rail": true, "popular": true, "teaser": true,
	"teasers": true, "next": true, "prev": true, "previous": true, "affiliate": true,
	"advertising": true, "promoted": true, "paywall": true, "login": true, "signin": true,
	"register": true, "skip": true, "overlay": true, "lightbox": true, "gallery": true,
	"slideshow": true, "carousel": true, "slider": true, "slides": true, "banner": true,
	"promo": true, "promos": true, "tags": true, "tag": true, "taglist": true, "topics": true, "keywords": true,
}

// commentWords name comment sections.
var commentWords = map[string]bool{
	"comment": true, "comments": true, "commenting": true, "commentlist": true,
	"disqus": true, "respond": true, "replies": true, "reply": true, "discussion": true,
}

// metaWords name the labels around an article's text.
var metaWords = map[string]bool{
	"byline": true, "byl": true, "author": true, "authors": true, "bio": true,
	"dateline": true, "date": true, "time": true, "timestamp": true, "published": true,
	"updated": true, "pubdate": true, "meta": true, "metadata": true, "info": true,
	"credit": true, "credits": true, "caption": true, "captions": true, "kicker": true,
	"eyebrow": true, "overline": true, "category": true, "categories": true,
	"dek": true, "deck": true, "standfirst": true, "subtitle": true, "subheadline": true,
	"copyright": true, "disclaimer": true, "rating": true, "print": true, "icon": true,
	"label": true, "readtime": true,
}

// contentWords name the content.
var contentWords = map[string]bool{
	"article": true, "body": true, "content": true, "entry": true, "post": true,
	"story": true, "text": true, "main": true, "prose": true, "copy": true,
	"richtext": true, "wysiwyg": true, "hentry": true, "articlebody": true,
	"storybody": true, "postbody": true,
}

// negations turn the next word around: "has-sidebar" and "no-comments"
// describe a layout, not furniture.
var negations = map[string]bool{
	"has": true, "no": true, "with": true, "without": true, "hide": true, "show": true,
}

// hintOf classifies n by the words of its class and id.
func hintOf(n *html.Node) hint {
	var h hint
	for _, a := range n.Attr {
		if a.Key == "class" || a.Key == "id" {
			h |= attrHint(a.Key, a.Val)
		}
	}
	return h
}

// hintCache remembers the hints of the class and id values already seen
// on a page: a page repeats its class names from element to element, and
// splitting them into words is most of what a hint costs.
type hintCache struct {
	class, id map[string]hint
	// tokens holds the hints of single class tokens and ids: values
	// differ more often than the tokens they are made of.
	tokens map[string]hint
}

func newHintCache() hintCache {
	return hintCache{class: map[string]hint{}, id: map[string]hint{}, tokens: map[string]hint{}}
}

// of is hintOf(n), read from the cache where it can be.
func (c hintCache) of(n *html.Node) hint {
	var h hint
	for _, a := range n.Attr {
		var seen map[string]hint
		switch a.Key {
		case "class":
			seen = c.class
		case "id":
			seen = c.id
		default:
			continue
		}
		ah, ok := seen[a.Val]
		if !ok {
			ah = attrHintWith(a.Key, a.Val, c.token)
			seen[a.Val] = ah
		}
		h |= ah
	}
	return h
}

// token is tokenHint, read from the cache where it can be.
func (c hintCache) token(t string) hint {
	h, ok := c.tokens[t]
	if !ok {
		h = tokenHint(t)
		c.tokens[t] = h
	}
	return h
}

// attrHint is what the value of a class or id attribute says.
func attrHint(key, val string) hint {
	return attrHintWith(key, val, tokenHint)
}

// attrHintWith is attrHint, each token's hint given by hintOfToken.
func attrHintWith(key, val string, hintOfToken func(string) hint) hint {
	var h hint
	for rest := val; rest != ""; {
		var token string
		token, rest = nextField(rest)
		if token == "" || key == "class" && (isTaxonomy(token) || isVariant(token)) {
			continue
		}
		if key == "class" && isOffscreen(token) {
			h |= hintOffscreen
			continue
		}
		h |= hintOfToken(token)
	}
	return h
}

// nextField returns the first whitespace-separated field of s and what
// follows it, as strings.Fields would split s, without allocating.
func nextField(s string) (string, string) {
	i := 0
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	j := i
	for j < len(s) && !isSpace(s[j]) {
		j++
	}
	return s[i:j], s[j:]
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// offscreenClasses hide text that sighted readers never see.
var offscreenClasses = []string{
	"sr-only", "visually-hidden", "visuallyhidden", "screen-reader-text", "screen-reader-only",
}

func isOffscreen(token string) bool {
	for _, c := range offscreenClasses {
		if strings.EqualFold(token, c) {
			return true
		}
	}
	return false
}

// isTaxonomy reports whether a class token names a category or tag the
// post is filed under ("category-native-advertising", "tag-comments"), as
// blog engines add them to the post's wrapper: their words are the
// post's topics, not the element's role.
func isTaxonomy(token string) bool {
	for _, p := range taxonomyPrefixes {
		if len(token) > len(p) && strings.EqualFold(token[:len(p)], p) {
			return true
		}
	}
	return false
}

// isVariant reports whether a class token is a utility framework's
// variant ("lg:pt-0", "has-[>[data-slot=banner]]:pt-0"): it styles the
// element in a state, and the words in it name other elements.
func isVariant(token string) bool {
	return strings.ContainsAny(token, ":[")
}

var taxonomyPrefixes = []string{"category-", "tag-", "tags-", "topic-", "format-", "type-", "status-"}

// tokenHint classifies one class token or id.
func tokenHint(token string) hint {
	var h hint
	negated := false
	var prev, joined [maxWord]byte
	prevLen := 0
	eachWord(token, func(w []byte) {
		// "sub-headline", "most_read": the words also count joined.
		if prevLen > 0 && prevLen+len(w) <= maxWord {
			j := append(append(joined[:0], prev[:prevLen]...), w...)
			h |= wordHints[string(j)]
		}
		prevLen = copy(prev[:], w)
		if negated {
			negated = false
			return
		}
		if negations[string(w)] {
			negated = true
			return
		}
		h |= wordHints[string(w)]
	})
	return h
}

// maxWord is the longest word, in bytes, that can name anything; longer
// words are passed over.
const maxWord = 32

// wordHints is what each word of the lists above says.
var wordHints = func() map[string]hint {
	m := map[string]hint{}
	for _, l := range []struct {
		words map[string]bool
		h     hint
	}{
		{contentWords, hintContent}, {metaWords, hintMeta}, {furnitureWords, hintFurniture},
		{unlikelyWords, hintUnlikely}, {commentWords, hintComments},
	} {
		for w := range l.words {
			m[w] = l.h
		}
	}
	return m
}()

// eachWord calls fn with the lower-case words of a class or id, split at
// punctuation, digits and camelCase humps: "postComments_list" gives post,
// comments, list. A part between punctuation with letters on both sides of
// a digit ("jXK9ad", "zu5ue") is a generated name, and its letters words
// of no language: it is passed over whole. The word passed is only valid
// during the call.
func eachWord(hint string, fn func([]byte)) {
	start := -1
	digits := false
	for i, r := range hint {
		digit := r >= '0' && r <= '9' || r >= utf8.RuneSelf && unicode.IsDigit(r)
		alnum := digit || r < utf8.RuneSelf && ('a' <= r|0x20 && r|0x20 <= 'z') || r >= utf8.RuneSelf && unicode.IsLetter(r)
		if alnum && start < 0 {
			start, digits = i, false
		}
		digits = digits || digit
		if !alnum && start >= 0 {
			if !digits || !generated(hint[start:i]) {
				partWords(hint[start:i], fn)
			}
			start = -1
		}
	}
	if start >= 0 && (!digits || !generated(hint[start:])) {
		partWords(hint[start:], fn)
	}
}

// generated reports whether part has a run of digits between two runs of
// at most three letters: "jXK9ad", "zu5ue", "D2fZ2" are made by a
// program, "share2x" and "ad300x250" by a person.
func generated(part string) bool {
	// The runs of letters and of digits alternate: keep the last three.
	var last [3]string
	var letters [3]bool
	seen, start := 0, 0
	check := func(end int) bool {
		if seen < 3 || !letters[2] || len(last[0]) > 3 || len(last[2]) > 3 {
			return false
		}
		// A size, 300x250, has digits after its x.
		return end == len(part) || !strings.EqualFold(last[2], "x")
	}
	push := func(end int, letter bool) bool {
		last[0], last[1], last[2] = last[1], last[2], part[start:end]
		letters[0], letters[1], letters[2] = letters[1], letters[2], letter
		seen++
		start = end
		return check(end)
	}
	prev := false
	for i, r := range part {
		letter := unicode.IsLetter(r)
		if i > start && letter != prev && push(i, prev) {
			return true
		}
		prev = letter
	}
	return len(part) > start && push(len(part), prev)
}

// partWords is eachWord for a part of a name without punctuation.
func partWords(hint string, fn func([]byte)) {
	var buf [maxWord]byte
	start := -1
	prevLower := false
	emit := func(end int) {
		w := hint[start:end]
		start = -1
		if len(w) > maxWord {
			return
		}
		b := buf[:0]
		for _, r := range w {
			r = unicode.ToLower(r)
			if r < utf8.RuneSelf {
				b = append(b, byte(r))
			} else {
				b = utf8.AppendRune(b, r)
			}
		}
		fn(b)
	}
	for i, r := range hint {
		isLetter := unicode.IsLetter(r)
		if start >= 0 && (!isLetter || (prevLower && unicode.IsUpper(r))) {
			emit(i)
		}
		if isLetter && start < 0 {
			start = i
		}
		prevLower = unicode.IsLower(r)
	}
	if start >= 0 {
		emit(len(hint))
	}
}

// unlikelyRoles are ARIA landmarks that are never the article.
var unlikelyRoles = map[string]bool{
	"navigation": true, "complementary": true, "banner": true, "contentinfo": true,
	"menu": true, "menubar": true, "dialog": true, "alertdialog": true, "search": true,
}

func unlikelyRole(n *html.Node) bool {
	r := htmlnode.Attr(n, "role")
	return r != "" && unlikelyRoles[strings.ToLower(strings.TrimSpace(r))]
}
