package metadata

import (
	"net/url"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// ReadHead returns what doc's <head> says about the page, as written
// there: unlike Read, it infers nothing from the content, and the last of
// a repeated <meta> wins, as Firecrawl reads them. The favicon is resolved
// against page. The content type is the caller's to set.
func ReadHead(doc *html.Node, page *url.URL) *distillv1.PageHead {
	h := &distillv1.PageHead{}
	for n := range doc.Descendants() {
		if n.Type != html.ElementNode {
			continue
		}
		switch n.DataAtom {
		case atom.Html:
			h.Language = attr(n, "lang")
		case atom.Title:
			if h.Title == "" && n.FirstChild != nil {
				h.Title = n.FirstChild.Data
			}
		case atom.Link:
			if rel := strings.ToLower(attr(n, "rel")); (rel == "icon" || rel == "shortcut icon") && h.Favicon == "" {
				h.Favicon = resolveRef(page, attr(n, "href"))
			}
		case atom.Meta:
			readHeadMeta(h, n)
		case atom.Body:
			return trimHead(h)
		}
	}
	return trimHead(h)
}

// headMeta are the <meta name> and og: properties a head is read for.
var (
	headNames = map[string]func(*distillv1.PageHead) *string{
		"description": func(h *distillv1.PageHead) *string { return &h.Description },
		"keywords":    func(h *distillv1.PageHead) *string { return &h.Keywords },
		"robots":      func(h *distillv1.PageHead) *string { return &h.Robots },
		"author":      func(h *distillv1.PageHead) *string { return &h.Author },
	}
	headOG = map[string]func(*distillv1.PageHead) *string{
		"title":       func(h *distillv1.PageHead) *string { return &h.OgTitle },
		"description": func(h *distillv1.PageHead) *string { return &h.OgDescription },
		"url":         func(h *distillv1.PageHead) *string { return &h.OgUrl },
		"image":       func(h *distillv1.PageHead) *string { return &h.OgImage },
		"site_name":   func(h *distillv1.PageHead) *string { return &h.OgSiteName },
		"locale":      func(h *distillv1.PageHead) *string { return &h.OgLocale },
	}
)

func readHeadMeta(h *distillv1.PageHead, n *html.Node) {
	content := attr(n, "content")
	if field, ok := headNames[strings.ToLower(attr(n, "name"))]; ok {
		*field(h) = content
	}
	if prop, ok := strings.CutPrefix(strings.ToLower(attr(n, "property")), "og:"); ok {
		if field, ok := headOG[prop]; ok {
			*field(h) = content
		}
	}
}

// trimHead trims every value: a value of spaces is not said.
func trimHead(h *distillv1.PageHead) *distillv1.PageHead {
	for _, f := range []*string{&h.Title, &h.Language, &h.Description, &h.Keywords, &h.Robots, &h.Author, &h.Favicon,
		&h.OgTitle, &h.OgDescription, &h.OgUrl, &h.OgImage, &h.OgSiteName, &h.OgLocale} {
		*f = strings.TrimSpace(*f)
	}
	return h
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// resolveRef is ref made absolute against base; "" when it does not
// parse.
func resolveRef(base *url.URL, ref string) string {
	ref = strings.TrimSpace(ref)
	if base == nil || ref == "" {
		return ref
	}
	u, err := base.Parse(ref)
	if err != nil {
		return ""
	}
	return u.String()
}
