// Package metadata reads what a page says about itself: title, author,
// summary, dates, site, language and lead image, from meta tags, OpenGraph,
// JSON-LD and the page's own markup.
package metadata

import (
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/PuerkitoBio/goquery"
	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
	"distill.dev/services/extractor/internal/weburl"
)

// Metadata is what a page says about itself. Empty fields were not found.
type Metadata struct {
	Title       string
	Byline      string
	Description string
	Published   string
	SiteName    string
	Language    string
	// Image is the lead image as an absolute http(s) URL.
	Image string
}

// maxByline bounds a byline: longer "author" text is a bio, not a name.
const maxByline = 100

// Read returns doc's metadata. Call it before anything removes parts of doc:
// JSON-LD lives in script elements.
func Read(doc *html.Node, base *url.URL) Metadata {
	d := goquery.NewDocumentFromNode(doc)
	tags := metaTags(doc)
	ld := readJSONLD(d)
	m := Metadata{
		SiteName: first(tags.get("og:site_name"), tags.get("application-name"), ld.publisher),
	}
	m.Title = title(d, tags, m.SiteName, ld.headline)
	m.Byline = byline(d, tags, ld.author)
	m.Description = first(tags.get("description"), tags.get("og:description"), tags.get("twitter:description"), ld.description)
	// The markup is searched only when the tags say nothing: each search
	// walks the whole page.
	m.Published = first(
		tags.get("article:published_time"), tags.get("datePublished"), tags.get("pubdate"),
		tags.get("publishdate"), tags.get("publish-date"), tags.get("date"), tags.get("dc.date"),
		tags.get("dcterms.created"), tags.get("parsely-pub-date"), ld.published,
	)
	if m.Published == "" {
		m.Published = first(itemprop(d, "datePublished"), htmlnode.Attr(timeWithDatetime.MatchFirst(doc), "datetime"))
	}
	m.Language = strings.TrimSpace(htmlnode.Attr(htmlnode.First(doc, "html"), "lang"))
	if m.Language == "" {
		m.Language = first(
			htmlnode.Attr(contentLanguage.MatchFirst(doc), "content"),
			strings.ReplaceAll(tags.get("og:locale"), "_", "-"),
		)
	}
	for _, img := range []string{tags.get("og:image"), tags.get("og:image:url"), tags.get("twitter:image"), tags.get("twitter:image:src"), ld.image} {
		if u, ok := weburl.Resolve(base, img, "http", "https"); ok {
			m.Image = u
			break
		}
	}
	return m
}

var (
	timeWithDatetime = cascadia.MustCompile("time[datetime]")
	contentLanguage  = cascadia.MustCompile(`meta[http-equiv="content-language" i]`)
)

// metaKeys are the attributes that name a meta tag.
var metaKeys = []string{"property", "name", "itemprop"}

// metaIndex holds the content of a page's meta tags by name, read in one
// pass.
type metaIndex map[string]string

// metaTags indexes the meta tags under doc: each name a tag carries in its
// property, name or itemprop, compared without case, gets the content of
// the first tag in document order that carries it with non-empty content.
func metaTags(doc *html.Node) metaIndex {
	idx := metaIndex{}
	htmlnode.Walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode || n.Data != "meta" {
			return true
		}
		content := htmlnode.CollapseSpace(htmlnode.Attr(n, "content"))
		if content == "" {
			return true
		}
		for _, attr := range metaKeys {
			key := foldCase(strings.TrimSpace(htmlnode.Attr(n, attr)))
			if _, ok := idx[key]; !ok && key != "" {
				idx[key] = content
			}
		}
		return true
	})
	return idx
}

// get returns the content of the meta tag named key, or "".
func (idx metaIndex) get(key string) string {
	return idx[foldCase(key)]
}

// foldCase maps s to a form in which two strings are equal exactly when
// strings.EqualFold holds between them: each rune becomes the least rune
// of its case-folding orbit, so "K", "k" and the Kelvin sign all become
// "K".
func foldCase(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return strings.Map(leastFold, s)
		}
	}
	// In ASCII the least rune of an orbit is the upper-case letter.
	return strings.ToUpper(s)
}

func leastFold(r rune) rune {
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return least
}

// itemprop returns the machine value or text of the first element carrying
// itemprop=name.
func itemprop(d *goquery.Document, name string) string {
	var val string
	d.Find("[itemprop]").EachWithBreak(func(_ int, s *goquery.Selection) bool {
		if !htmlnode.HasToken(s.AttrOr("itemprop", ""), name) {
			return true
		}
		for _, attr := range []string{"content", "datetime"} {
			if v := strings.TrimSpace(s.AttrOr(attr, "")); v != "" {
				val = v
				return false
			}
		}
		val = htmlnode.CollapseSpace(s.Text())
		return val == ""
	})
	return val
}

func first(vals ...string) string {
	for _, v := range vals {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// titleSeparators split a document title into the page's own title and the
// site's name.
var titleSeparators = []string{" | ", " - ", " – ", " — ", " :: ", " » ", " · ", " • ", " / ", ": "}

// title picks og:title, else <title>, else the JSON-LD headline, else the
// first h1, and drops a " | Site" part when an h1 or the site name shows
// which part is the page's own.
func title(d *goquery.Document, tags metaIndex, siteName, headline string) string {
	var h1s []string
	htmlnode.Walk(d.Nodes[0], func(n *html.Node) bool {
		if len(h1s) == 5 {
			return false
		}
		if n.Type == html.ElementNode && n.Data == "h1" {
			if t := htmlnode.CollapseSpace(htmlnode.Text(n)); t != "" {
				h1s = append(h1s, t)
			}
			return false
		}
		return true
	})
	var docTitle string
	if t := htmlnode.First(d.Nodes[0], "title"); t != nil {
		docTitle = htmlnode.CollapseSpace(htmlnode.Text(t))
	}
	t := first(tags.get("og:title"), tags.get("twitter:title"), docTitle, headline)
	if t == "" {
		if len(h1s) > 0 {
			return h1s[0]
		}
		return ""
	}
	return cleanTitle(t, siteName, h1s)
}

func cleanTitle(t, siteName string, h1s []string) string {
	for _, h := range h1s {
		if strings.EqualFold(h, t) {
			return t
		}
	}
	for _, sep := range titleSeparators {
		if !strings.Contains(t, sep) {
			continue
		}
		parts := strings.Split(t, sep)
		// An h1 that is the title less a leading or trailing part is the
		// better title.
		for _, h := range h1s {
			for i := 1; i < len(parts); i++ {
				head := strings.Join(parts[:i], sep)
				tail := strings.Join(parts[i:], sep)
				if strings.EqualFold(h, head) {
					return head
				}
				if strings.EqualFold(h, tail) {
					return tail
				}
			}
		}
		if siteName != "" {
			if last := parts[len(parts)-1]; strings.EqualFold(strings.TrimSpace(last), siteName) && len(parts) > 1 {
				return strings.TrimSpace(strings.Join(parts[:len(parts)-1], sep))
			}
			if strings.EqualFold(strings.TrimSpace(parts[0]), siteName) && len(parts) > 1 {
				return strings.TrimSpace(strings.Join(parts[1:], sep))
			}
		}
	}
	return t
}

// byline looks for the author in meta tags, JSON-LD and the markup:
// rel=author, itemprop=author, .byline.
func byline(d *goquery.Document, tags metaIndex, ldAuthor string) string {
	for _, c := range []string{tags.get("author"), tags.get("article:author"), tags.get("parsely-author"), tags.get("dc.creator"), ldAuthor} {
		if b := cleanByline(c); b != "" {
			return b
		}
	}
	// Only a page whose tags name no author is searched for a byline, in
	// one walk that ends with the first name found: [rel~=author],
	// [itemprop~=author], .byline and .author, in the page's order.
	found, tried := "", 0
	for _, root := range d.Nodes {
		htmlnode.Walk(root, func(n *html.Node) bool {
			if found != "" || tried >= 20 {
				return false
			}
			if n.Type != html.ElementNode || !namesAuthor(n) {
				return true
			}
			s := d.FindNodes(n)
			var candidates []string
			if name := s.Find(`[itemprop~="name"]`).First(); name.Length() > 0 {
				candidates = append(candidates, name.AttrOr("content", name.Text()))
			}
			candidates = append(candidates, s.AttrOr("content", s.Text()))
			for _, c := range candidates {
				tried++
				if b := cleanByline(c); b != "" {
					found = b
					return false
				}
			}
			return true
		})
	}
	return found
}

// namesAuthor reports whether n's rel or itemprop holds the word "author",
// or its class "author" or "byline".
func namesAuthor(n *html.Node) bool {
	for _, a := range n.Attr {
		switch a.Key {
		case "rel", "itemprop":
			if hasWord(a.Val, "author") {
				return true
			}
		case "class":
			if hasWord(a.Val, "author") || hasWord(a.Val, "byline") {
				return true
			}
		}
	}
	return false
}

// hasWord reports whether word is one of the white-space separated words
// of v, as a CSS [attr~=word] selector matches.
func hasWord(v, word string) bool {
	for v != "" {
		i := strings.Index(v, word)
		if i < 0 {
			return false
		}
		end := i + len(word)
		if (i == 0 || isCSSSpace(v[i-1])) && (end == len(v) || isCSSSpace(v[end])) {
			return true
		}
		v = v[i+1:]
	}
	return false
}

func isCSSSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// cleanByline returns c as a byline, or "" when c is not one: a URL (as
// article:author often is), empty, or too long to be a name.
func cleanByline(c string) string {
	c = htmlnode.CollapseSpace(c)
	lower := strings.ToLower(c)
	if strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") || strings.HasPrefix(lower, "www.") {
		return ""
	}
	for _, prefix := range []string{"by ", "by: ", "written by ", "posted by "} {
		if strings.HasPrefix(lower, prefix) {
			c = strings.TrimSpace(c[len(prefix):])
			break
		}
	}
	if c == "" || utf8.RuneCountInString(c) > maxByline {
		return ""
	}
	return c
}
