package metadata

import (
	"encoding/json"
	"strings"

	"github.com/PuerkitoBio/goquery"
)

// Bounds on JSON-LD work: a hostile page can hold any amount of it.
const (
	maxJSONLDBytes  = 1 << 20
	maxJSONLDDepth  = 16
	maxJSONLDBlocks = 20
)

// linkedData is what distill reads from a page's schema.org JSON-LD.
type linkedData struct {
	headline    string
	author      string
	description string
	published   string
	publisher   string
	image       string
}

// articleTypes are the schema.org types that describe the page's content.
var articleTypes = map[string]bool{
	"article": true, "newsarticle": true, "blogposting": true, "reportagenewsarticle": true,
	"techarticle": true, "scholarlyarticle": true, "report": true, "analysisnewsarticle": true,
	"opinionnewsarticle": true, "reviewnewsarticle": true, "backgroundnewsarticle": true,
	"socialmediaposting": true, "liveblogposting": true, "webpage": true, "medicalwebpage": true,
	"review": true, "recipe": true, "howto": true,
}

// readJSONLD returns the fields of the first article-like JSON-LD object
// whose fields are set, preferring articles over generic web pages.
func readJSONLD(d *goquery.Document) linkedData {
	var objects []map[string]any
	d.Find(`script[type="application/ld+json" i]`).EachWithBreak(func(i int, s *goquery.Selection) bool {
		raw := s.Text()
		if len(raw) > maxJSONLDBytes {
			return true
		}
		var v any
		if err := json.Unmarshal([]byte(strings.TrimSpace(raw)), &v); err != nil {
			return true
		}
		collect(v, 0, &objects)
		return i < maxJSONLDBlocks
	})

	var ld linkedData
	// Articles first, then web pages: a WebPage object often sits beside
	// the NewsArticle with thinner fields.
	for _, pass := range []func(string) bool{
		func(t string) bool { return articleTypes[t] && t != "webpage" && t != "medicalwebpage" },
		func(t string) bool { return articleTypes[t] },
	} {
		for _, o := range objects {
			if !typeMatches(o["@type"], pass) {
				continue
			}
			fill(&ld.headline, str(o["headline"]), str(o["name"]))
			fill(&ld.author, names(o["author"], 0), names(o["creator"], 0))
			fill(&ld.description, str(o["description"]))
			fill(&ld.published, str(o["datePublished"]), str(o["dateCreated"]))
			fill(&ld.publisher, names(o["publisher"], 0))
			fill(&ld.image, imageURL(o["image"], 0), imageURL(o["thumbnailUrl"], 0))
		}
	}
	for _, o := range objects {
		if typeMatches(o["@type"], func(t string) bool { return t == "website" || t == "organization" || t == "newsmediaorganization" }) {
			fill(&ld.publisher, str(o["name"]))
		}
	}
	return ld
}

// collect gathers every JSON object of v, descending into arrays and
// @graph lists.
func collect(v any, depth int, out *[]map[string]any) {
	if depth > maxJSONLDDepth {
		return
	}
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			collect(e, depth+1, out)
		}
	case map[string]any:
		*out = append(*out, t)
		if g, ok := t["@graph"]; ok {
			collect(g, depth+1, out)
		}
	}
}

func typeMatches(v any, match func(string) bool) bool {
	switch t := v.(type) {
	case string:
		return match(strings.ToLower(t))
	case []any:
		for _, e := range t {
			if s, ok := e.(string); ok && match(strings.ToLower(s)) {
				return true
			}
		}
	}
	return false
}

func fill(dst *string, vals ...string) {
	if *dst != "" {
		return
	}
	*dst = first(vals...)
}

func str(v any) string {
	if s, ok := v.(string); ok {
		return strings.TrimSpace(s)
	}
	return ""
}

// names reads a person or organisation: a string, an object with a name,
// or a list of them joined with commas.
func names(v any, depth int) string {
	if depth > maxJSONLDDepth {
		return ""
	}
	switch t := v.(type) {
	case string:
		return strings.TrimSpace(t)
	case map[string]any:
		return str(t["name"])
	case []any:
		var out []string
		for _, e := range t {
			if n := names(e, depth+1); n != "" {
				out = append(out, n)
			}
		}
		return strings.Join(out, ", ")
	}
	return ""
}

// imageURL reads an image: a URL string, an ImageObject, or the first of a
// list.
func imageURL(v any, depth int) string {
	if depth > maxJSONLDDepth {
		return ""
	}
	switch t := v.(type) {
	case string:
		return strings.TrimSpace(t)
	case map[string]any:
		return first(str(t["url"]), str(t["contentUrl"]))
	case []any:
		for _, e := range t {
			if u := imageURL(e, depth+1); u != "" {
				return u
			}
		}
	}
	return ""
}
