// Package weburl resolves the URLs a page writes against its base, the way
// a browser does, and filters them by scheme.
package weburl

import (
	"net/url"
	"strings"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// urlControls are what browsers drop inside URLs. A Replacer builds its
// tables on first use, which cost more than the replacing: it is built once.
var urlControls = strings.NewReplacer("\t", "", "\n", "", "\r", "")

// Resolve returns ref made absolute against base, when its scheme is one of
// schemes. Browsers drop tabs and line breaks inside URLs and trim the
// surrounding space, so Resolve does too. An http(s) URL without a host is
// refused.
func Resolve(base *url.URL, ref string, schemes ...string) (string, bool) {
	ref = strings.TrimSpace(urlControls.Replace(ref))
	if ref == "" {
		return "", false
	}
	u, err := url.Parse(ref)
	if err != nil {
		return "", false
	}
	if base != nil {
		u = base.ResolveReference(u)
	}
	scheme := strings.ToLower(u.Scheme)
	allowed := false
	for _, s := range schemes {
		if scheme == s {
			allowed = true
			break
		}
	}
	if !allowed || ((scheme == "http" || scheme == "https") && u.Host == "") {
		return "", false
	}
	return u.String(), true
}

// Base returns the URL the relative references of doc, the page at page,
// resolve against: page, or the first <base href> resolved against it
// when that is a usable http(s) or file URL.
func Base(doc *html.Node, page *url.URL) *url.URL {
	base := htmlnode.First(doc, "base")
	if base == nil || !htmlnode.HasAttr(base, "href") {
		return page
	}
	ref, err := url.Parse(strings.TrimSpace(htmlnode.Attr(base, "href")))
	if err != nil {
		return page
	}
	u := page.ResolveReference(ref)
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host != "" {
			return u
		}
	case "file":
		return u
	}
	return page
}

// SamePage reports whether a link, written raw and resolved to resolved,
// only moves within the page at page: it has a fragment and leads to the
// page's own URL. Following it fetches nothing new. A bare "#x" under a
// <base> elsewhere is not one: browsers resolve it against the base and
// leave the page.
func SamePage(raw, resolved string, page *url.URL) bool {
	if !strings.Contains(raw, "#") {
		return false
	}
	u, err := url.Parse(resolved)
	if err != nil {
		return false
	}
	p := *page
	u.Fragment, u.RawFragment, p.Fragment, p.RawFragment = "", "", "", ""
	return u.String() == p.String()
}
