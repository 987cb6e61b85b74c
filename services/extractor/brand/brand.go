// Package brand reads what a page shows of who publishes it: the name,
// logos with their sizes, the favicon, the theme colour and the colours
// and fonts its styles use most, and its profiles on social networks.
//
// It reads the page alone: style elements and style attributes. Linked
// stylesheets are listed for the caller that may fetch them under its own
// network policy and byte caps (the fetcher's pipeline does), and hand
// them back as a page of style elements to read the same way.
package brand

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"google.golang.org/protobuf/proto"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/internal/htmlnode"
	"distill.dev/services/extractor/internal/weburl"
	"distill.dev/services/extractor/markdown"
	"distill.dev/services/extractor/metadata"
)

// MaxStylesheets bounds the linked stylesheets a brand lists for fetching.
const MaxStylesheets = 4

// maxLogos bounds the logos listed.
const maxLogos = 4

// Read returns the brand of doc, a page at base, whose metadata is meta.
// Call it before anything removes parts of doc.
func Read(doc *html.Node, base *url.URL, meta metadata.Metadata) *distillv1.Brand {
	r := &reader{b: &distillv1.Brand{}, pal: newPalette(), base: base}
	htmlnode.Walk(doc, r.visit)
	b := r.b

	ldName, ldLogos, sameAs := fromLD(r.ld, base)
	// A logo the site declares comes before one guessed from the markup.
	b.Logos = append(ldLogos, b.Logos...)
	if len(b.Logos) > maxLogos {
		b.Logos = b.Logos[:maxLogos]
	}
	for _, u := range sameAs {
		b.Social = addSocial(b.Social, u)
	}
	b.Name = firstOf(meta.SiteName, r.appName, ldName, host(base))
	b.Favicon = bestIcon(r.icons, base)
	finish(b, r.pal)
	return b
}

// reader gathers a brand from a page's elements in one walk: what each
// element says goes straight into b, or is held until the walk is over
// (the icons, the JSON-LD objects, the application's name).
type reader struct {
	b       *distillv1.Brand
	pal     *palette
	base    *url.URL
	icons   []*distillv1.BrandImage
	ld      []map[string]any
	appName string
}

// visit reads element n and says whether the walk goes into its children.
func (r *reader) visit(n *html.Node) bool {
	if n.Type != html.ElementNode {
		return true
	}
	if style := htmlnode.Attr(n, "style"); style != "" {
		r.pal.addCSS(style)
	}
	switch n.Data {
	case "style":
		r.pal.addCSS(htmlnode.Text(n))
		return false
	case "script":
		if strings.Contains(strings.ToLower(htmlnode.Attr(n, "type")), "ld+json") {
			r.ld = append(r.ld, jsonLD(n)...)
		}
		return false
	case "meta":
		r.meta(n)
	case "link":
		r.link(n)
	case "img":
		if isLogo(n) && len(r.b.Logos) < maxLogos {
			if src := markdown.ImageSource(n, r.base); src != "" {
				img := &distillv1.BrandImage{Url: src, Source: "img"}
				img.Width, img.Height = dimension(htmlnode.Attr(n, "width")), dimension(htmlnode.Attr(n, "height"))
				r.b.Logos = appendImage(r.b.Logos, img)
			}
		}
	case "a":
		if href, ok := weburl.Resolve(r.base, htmlnode.Attr(n, "href"), "http", "https"); ok {
			r.b.Social = addSocial(r.b.Social, href)
		}
	}
	return true
}

// meta reads a meta element's theme colour or application name.
func (r *reader) meta(n *html.Node) {
	switch strings.ToLower(htmlnode.Attr(n, "name")) {
	case "theme-color":
		if c := colorsIn(htmlnode.Attr(n, "content")); len(c) > 0 && r.b.ThemeColor == nil {
			r.b.ThemeColor = proto.String(c[0])
		}
	case "application-name":
		r.appName = strings.TrimSpace(htmlnode.Attr(n, "content"))
	}
}

// link reads a link element: a stylesheet to list (and the Google fonts
// its address names) or an icon.
func (r *reader) link(n *html.Node) {
	rel := strings.ToLower(htmlnode.Attr(n, "rel"))
	href, ok := weburl.Resolve(r.base, htmlnode.Attr(n, "href"), "http", "https")
	if !ok {
		return
	}
	switch {
	case htmlnode.HasToken(rel, "stylesheet"):
		if len(r.b.Stylesheets) < MaxStylesheets && !strings.Contains(htmlnode.Attr(n, "media"), "print") {
			r.b.Stylesheets = append(r.b.Stylesheets, href)
		}
		r.b.Fonts = append(r.b.Fonts, googleFonts(href)...)
	case htmlnode.HasToken(rel, "icon") || htmlnode.HasToken(rel, "apple-touch-icon") || htmlnode.HasToken(rel, "mask-icon"):
		img := &distillv1.BrandImage{Url: href, Source: "icon"}
		if htmlnode.HasToken(rel, "apple-touch-icon") {
			img.Source = "apple-touch-icon"
		}
		img.Width, img.Height = sizes(htmlnode.Attr(n, "sizes"))
		r.icons = append(r.icons, img)
	}
}

// finish writes the palette's colours and fonts into b.
func finish(b *distillv1.Brand, pal *palette) {
	b.Colors = nil
	for _, c := range ranked(pal.colors, pal.colorOrder) {
		if gray(c) {
			continue
		}
		bc := &distillv1.BrandColor{Hex: c, Count: int32(pal.colors[c])}
		if name := pal.names[c]; name != "" {
			bc.Name = proto.String(name)
		}
		b.Colors = append(b.Colors, bc)
		if len(b.Colors) == maxColors {
			break
		}
	}
	fonts := append(b.Fonts, ranked(pal.fonts, pal.fontOrder)...)
	b.Fonts = nil
	seen := map[string]bool{}
	for _, f := range fonts {
		if k := strings.ToLower(f); !seen[k] && len(b.Fonts) < maxFonts {
			seen[k] = true
			b.Fonts = append(b.Fonts, f)
		}
	}
}

// isLogo reports whether an img is likely the site's logo: its class,
// id, alt or file name says so, or it sits in the page's header or home
// link.
func isLogo(img *html.Node) bool {
	for n := img; n != nil && n.Type == html.ElementNode; n = n.Parent {
		hint := strings.ToLower(htmlnode.Attr(n, "class") + " " + htmlnode.Attr(n, "id"))
		if n == img {
			hint += " " + strings.ToLower(htmlnode.Attr(n, "alt")+" "+htmlnode.Attr(n, "src"))
		}
		if strings.Contains(hint, "logo") || strings.Contains(hint, "brand") {
			return true
		}
		if n.Data == "body" || n.Data == "article" || n.Data == "main" {
			return false
		}
	}
	return false
}

func appendImage(list []*distillv1.BrandImage, img *distillv1.BrandImage) []*distillv1.BrandImage {
	for _, have := range list {
		if have.GetUrl() == img.GetUrl() {
			return list
		}
	}
	return append(list, img)
}

// sizes reads a link's sizes attribute ("32x32", "16x16 32x32"): the
// largest.
func sizes(attr string) (w, h *int32) {
	best := int32(0)
	for _, s := range strings.Fields(strings.ToLower(attr)) {
		a, b, ok := strings.Cut(s, "x")
		x, errA := strconv.Atoi(a)
		y, errB := strconv.Atoi(b)
		if ok && errA == nil && errB == nil && x > 0 && y > 0 && x <= 4096 && y <= 4096 && int32(x) > best {
			best = int32(x)
			w, h = proto.Int32(int32(x)), proto.Int32(int32(y))
		}
	}
	return w, h
}

// dimension reads a width or height attribute in pixels.
func dimension(attr string) *int32 {
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(attr), "px"))
	if err != nil || n <= 0 || n > 10000 {
		return nil
	}
	return proto.Int32(int32(n))
}

// bestIcon is the largest declared icon that is not an apple-touch-icon,
// else an apple-touch-icon, else the site's /favicon.ico, which browsers
// ask for when a page declares none.
func bestIcon(icons []*distillv1.BrandImage, base *url.URL) *distillv1.BrandImage {
	var best *distillv1.BrandImage
	for _, ic := range icons {
		switch {
		case best == nil,
			best.GetSource() != "icon" && ic.GetSource() == "icon",
			best.GetSource() == ic.GetSource() && ic.GetWidth() > best.GetWidth():
			best = ic
		}
	}
	if best != nil || base == nil || base.Host == "" {
		return best
	}
	return &distillv1.BrandImage{Url: (&url.URL{Scheme: base.Scheme, Host: base.Host, Path: "/favicon.ico"}).String(), Source: "default"}
}

// socialHosts maps the hosts of social networks to their names.
var socialHosts = map[string]string{
	"twitter.com": "twitter", "x.com": "x", "facebook.com": "facebook", "instagram.com": "instagram",
	"linkedin.com": "linkedin", "youtube.com": "youtube", "github.com": "github", "tiktok.com": "tiktok",
	"pinterest.com": "pinterest", "threads.net": "threads", "bsky.app": "bluesky", "mastodon.social": "mastodon",
	"reddit.com": "reddit", "discord.gg": "discord", "t.me": "telegram",
}

// notProfiles are path starts of a network's share and login pages.
var notProfiles = []string{"/intent", "/share", "/sharer", "/dialog", "/login", "/signup", "/home", "/hashtag", "/search", "/watch", "/embed", "/shareArticle"}

// addSocial adds u when it is a profile on a network list has none of.
func addSocial(list []*distillv1.SocialProfile, u string) []*distillv1.SocialProfile {
	p, err := url.Parse(u)
	if err != nil {
		return list
	}
	h := strings.TrimPrefix(strings.TrimPrefix(strings.ToLower(p.Hostname()), "www."), "m.")
	network, ok := socialHosts[h]
	path := strings.Trim(p.Path, "/")
	if !ok || path == "" || strings.Count(path, "/") > 2 {
		return list
	}
	for _, bad := range notProfiles {
		if strings.HasPrefix(strings.ToLower("/"+path), strings.ToLower(bad)) {
			return list
		}
	}
	for _, have := range list {
		if have.GetNetwork() == network {
			return list
		}
	}
	return append(list, &distillv1.SocialProfile{Network: network, Url: u})
}

// googleFonts returns the families a Google Fonts stylesheet URL asks for.
func googleFonts(href string) []string {
	u, err := url.Parse(href)
	if err != nil || u.Hostname() != "fonts.googleapis.com" {
		return nil
	}
	var out []string
	for _, fam := range u.Query()["family"] {
		for _, f := range strings.Split(fam, "|") {
			name, _, _ := strings.Cut(f, ":")
			if name = strings.TrimSpace(strings.ReplaceAll(name, "+", " ")); name != "" {
				out = append(out, name)
			}
		}
	}
	return out
}

// maxLD bounds the JSON-LD read for a brand.
const maxLD = 256 << 10

func jsonLD(n *html.Node) []map[string]any {
	text := htmlnode.Text(n)
	if len(text) > maxLD {
		return nil
	}
	var v any
	if json.Unmarshal([]byte(text), &v) != nil {
		return nil
	}
	var out []map[string]any
	var walk func(v any, depth int)
	walk = func(v any, depth int) {
		if depth > 6 || len(out) > 64 {
			return
		}
		switch x := v.(type) {
		case map[string]any:
			out = append(out, x)
			for _, c := range x {
				walk(c, depth+1)
			}
		case []any:
			for _, c := range x {
				walk(c, depth+1)
			}
		}
	}
	walk(v, 0)
	return out
}

// fromLD reads the organisation's name, logos and profile links from
// JSON-LD objects.
func fromLD(objs []map[string]any, base *url.URL) (name string, logos []*distillv1.BrandImage, sameAs []string) {
	for _, o := range objs {
		t, _ := o["@type"].(string)
		org := t == "Organization" || t == "Corporation" || t == "NewsMediaOrganization" || t == "WebSite" || t == "Brand"
		if n, ok := o["name"].(string); ok && org && name == "" {
			name = strings.TrimSpace(n)
		}
		switch l := o["logo"].(type) {
		case string:
			if u, ok := weburl.Resolve(base, l, "http", "https"); ok {
				logos = appendImage(logos, &distillv1.BrandImage{Url: u, Source: "json-ld"})
			}
		case map[string]any:
			s, _ := l["url"].(string)
			if s == "" {
				s, _ = l["contentUrl"].(string)
			}
			if u, ok := weburl.Resolve(base, s, "http", "https"); ok {
				logos = appendImage(logos, &distillv1.BrandImage{Url: u, Source: "json-ld", Width: ldNumber(l["width"]), Height: ldNumber(l["height"])})
			}
		}
		switch s := o["sameAs"].(type) {
		case string:
			sameAs = append(sameAs, s)
		case []any:
			for _, v := range s {
				if str, ok := v.(string); ok {
					sameAs = append(sameAs, str)
				}
			}
		}
	}
	return name, logos, sameAs
}

func ldNumber(v any) *int32 {
	switch x := v.(type) {
	case float64:
		if x > 0 && x <= 10000 {
			return proto.Int32(int32(x))
		}
	case string:
		return dimension(x)
	case map[string]any:
		return ldNumber(x["value"])
	}
	return nil
}

func host(base *url.URL) string {
	if base == nil {
		return ""
	}
	return strings.TrimPrefix(base.Hostname(), "www.")
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}
