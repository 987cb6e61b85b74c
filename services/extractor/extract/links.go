package extract

import (
	"net/url"

	"golang.org/x/net/html"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/internal/htmlnode"
	"distill.dev/services/extractor/internal/weburl"
)

// linksIn returns the http(s) links under root, absolute against base,
// one per href in the order they first appear. The result is never nil.
// Links that stay on page (#fragment and the page's own URL with one) are
// left out: they are the page's table of contents and "back to top", and
// neither a reader nor a crawler finds anything new behind them.
func linksIn(root *html.Node, page, base *url.URL) []*distillv1.Link {
	links := []*distillv1.Link{}
	seen := map[string]bool{}
	for _, a := range htmlnode.Elements(root, "a", "area") {
		raw := htmlnode.Attr(a, "href")
		href, ok := weburl.Resolve(base, raw, "http", "https")
		if !ok || seen[href] || weburl.SamePage(raw, href, page) {
			continue
		}
		seen[href] = true
		links = append(links, &distillv1.Link{Href: href, Text: linkText(a)})
	}
	return links
}

// linkText is a link's visible text, or for an image link the image's alt,
// or the link's label.
func linkText(a *html.Node) string {
	if t := htmlnode.Text(a); t != "" {
		return t
	}
	if img := htmlnode.First(a, "img"); img != nil {
		if alt := htmlnode.CollapseSpace(htmlnode.Attr(img, "alt")); alt != "" {
			return alt
		}
	}
	for _, attr := range []string{"aria-label", "title", "alt"} {
		if t := htmlnode.CollapseSpace(htmlnode.Attr(a, attr)); t != "" {
			return t
		}
	}
	return ""
}
