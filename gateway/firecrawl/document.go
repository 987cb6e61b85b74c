package firecrawl

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"mime"
	"net/url"
	"strings"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// document is Firecrawl's Document: the parts asked for, and metadata.
// A part that was asked for is present even when empty.
type document struct {
	Markdown *string   `json:"markdown,omitempty"`
	HTML     *string   `json:"html,omitempty"`
	RawHTML  *string   `json:"rawHtml,omitempty"`
	Links    *[]string `json:"links,omitempty"`
	Images   *[]string `json:"images,omitempty"`
	// Screenshot is a data: URL, where Firecrawl links to a picture it
	// keeps.
	Screenshot *string        `json:"screenshot,omitempty"`
	Actions    *actionsResult `json:"actions,omitempty"`
	// JSON and Summary are the model's, through host mode; v1 reads the
	// json format's data under extract too.
	JSON     any      `json:"json,omitempty"`
	Extract  any      `json:"extract,omitempty"`
	Summary  *string  `json:"summary,omitempty"`
	Metadata metadata `json:"metadata"`
	Warning  string   `json:"warning,omitempty"`
}

// metadata is Firecrawl's document metadata: the page's own (from its
// head) and the response's.
type metadata struct {
	Title         string `json:"title,omitempty"`
	Description   string `json:"description,omitempty"`
	Language      string `json:"language,omitempty"`
	Keywords      string `json:"keywords,omitempty"`
	Robots        string `json:"robots,omitempty"`
	OGTitle       string `json:"ogTitle,omitempty"`
	OGDescription string `json:"ogDescription,omitempty"`
	OGURL         string `json:"ogUrl,omitempty"`
	OGImage       string `json:"ogImage,omitempty"`
	OGSiteName    string `json:"ogSiteName,omitempty"`
	OGLocale      string `json:"ogLocale,omitempty"`
	Favicon       string `json:"favicon,omitempty"`
	Author        string `json:"author,omitempty"`
	SourceURL     string `json:"sourceURL"`
	URL           string `json:"url,omitempty"`
	StatusCode    int32  `json:"statusCode"`
	ContentType   string `json:"contentType,omitempty"`
	ScrapeID      string `json:"scrapeId,omitempty"`
	NumPages      int32  `json:"numPages,omitempty"`
	Error         string `json:"error,omitempty"`
}

// document builds the answer for sourceURL from the distilled page and,
// when the pipeline kept it, the page's bytes (body, of contentType).
func (p *plan) document(sourceURL string, d *distillv1.Distilled, body []byte, contentType string) (*document, *apiError) {
	if !p.pdf && d.GetDiagnostics().PageCount != nil {
		return nil, notSupported("parsers", "this URL is a PDF, and parsers leaves pdf out")
	}
	doc := &document{Metadata: metadata{
		Title:      d.GetTitle(),
		SourceURL:  sourceURL,
		URL:        d.GetFinalUrl(),
		StatusCode: d.GetStatus(),
		ScrapeID:   newID(),
	}}
	if d.Excerpt != nil {
		doc.Metadata.Description = d.GetExcerpt()
	}
	if d.Byline != nil {
		doc.Metadata.Author = d.GetByline()
	}
	if d.GetDiagnostics().PageCount != nil {
		doc.Metadata.NumPages = d.GetDiagnostics().GetPageCount()
	}
	if mt, _, err := mime.ParseMediaType(contentType); err == nil {
		doc.Metadata.ContentType = mt
	} else if contentType != "" {
		doc.Metadata.ContentType = contentType
	}
	if p.want.markdown {
		md := d.GetMarkdown()
		doc.Markdown = &md
	}
	if p.want.screenshot {
		mt := "image/png"
		if p.opts.GetScreenshotFormat() == "jpeg" {
			mt = "image/jpeg"
		}
		shot := dataURL(mt, d.GetScreenshot())
		doc.Screenshot = &shot
	}
	if p.want.actions {
		doc.Actions = actionsOf(d)
	}
	if p.want.links {
		links := []string{}
		seen := map[string]bool{}
		for _, l := range d.GetLinks().GetItems() {
			if !seen[l.GetHref()] {
				seen[l.GetHref()] = true
				links = append(links, l.GetHref())
			}
		}
		doc.Links = &links
	}
	isHTML := body != nil && htmlType(doc.Metadata.ContentType)
	if isHTML {
		page, err := readHTML(body, contentType)
		if err != nil {
			return nil, &apiError{status: 500, msg: fmt.Sprintf("read %s: %v", d.GetFinalUrl(), err)}
		}
		base, _ := url.Parse(d.GetFinalUrl())
		head := readHead(page, base)
		head.fill(&doc.Metadata)
		if p.want.rawHTML {
			raw := string(page)
			doc.RawHTML = &raw
		}
		if p.want.html || p.want.images {
			tree, err := html.Parse(bytes.NewReader(page))
			if err != nil {
				return nil, &apiError{status: 500, msg: fmt.Sprintf("parse %s: %v", d.GetFinalUrl(), err)}
			}
			if p.want.images {
				images := imagesOf(tree, head.base(base))
				doc.Images = &images
			}
			if p.want.html {
				cleaned := p.cleanHTML(tree)
				doc.HTML = &cleaned
			}
		}
	} else {
		// A PDF or a text answer has no HTML of its own: the parts
		// asked for are there, empty, as Firecrawl gives them.
		empty := ""
		if p.want.rawHTML {
			doc.RawHTML = &empty
		}
		if p.want.html {
			doc.HTML = &empty
		}
		if p.want.images {
			doc.Images = &[]string{}
		}
	}
	doc.Warning = joinWarnings(p.warnings)
	return doc, nil
}

// keepPage asks for the page beside the Distilled when a format is made
// from it or excludeTags trims it, for the pages distilled where they are
// read (a batch's, a crawl's).
func (p *plan) keepPage() {
	if p.want.html || p.want.rawHTML || p.want.images || len(p.excludeTags) > 0 {
		p.opts.KeepPage = true
	}
}

func (d *document) addWarning(w string) {
	if d.Warning != "" {
		d.Warning += "; "
	}
	d.Warning += w
}

func htmlType(mt string) bool {
	return mt == "" || mt == "text/html" || mt == "application/xhtml+xml"
}

// readHTML decodes body to UTF-8, by its declared or sniffed charset.
func readHTML(body []byte, contentType string) ([]byte, error) {
	r, err := charset.NewReader(bytes.NewReader(body), contentType)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}

// head is what a page says about itself in its <head>.
type head struct {
	title, lang, description, keywords, robots, author string
	og                                                 map[string]string
	favicon, baseHref                                  string
}

// readHead tokenizes page up to its body.
func readHead(page []byte, base *url.URL) *head {
	h := &head{og: map[string]string{}}
	z := html.NewTokenizer(bytes.NewReader(page))
	inTitle := false
	for {
		switch z.Next() {
		case html.ErrorToken:
			return h
		case html.TextToken:
			if inTitle && h.title == "" {
				h.title = strings.TrimSpace(string(z.Text()))
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			switch atom.Lookup(name) {
			case atom.Title:
				inTitle = false
			case atom.Head:
				return h
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			attrs := map[string]string{}
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				attrs[string(k)] = string(v)
			}
			switch atom.Lookup(name) {
			case atom.Html:
				h.lang = attrs["lang"]
			case atom.Title:
				inTitle = true
			case atom.Body:
				return h
			case atom.Base:
				h.baseHref = attrs["href"]
			case atom.Link:
				if rel := strings.ToLower(attrs["rel"]); (rel == "icon" || rel == "shortcut icon") && h.favicon == "" {
					h.favicon = resolve(base, attrs["href"])
				}
			case atom.Meta:
				content := attrs["content"]
				switch strings.ToLower(attrs["name"]) {
				case "description":
					h.description = content
				case "keywords":
					h.keywords = content
				case "robots":
					h.robots = content
				case "author":
					h.author = content
				}
				if prop, ok := strings.CutPrefix(strings.ToLower(attrs["property"]), "og:"); ok {
					h.og[prop] = content
				}
			}
		}
	}
}

// fill sets what the head says over what extraction found: Firecrawl's
// title and description are the page's own.
func (h *head) fill(m *metadata) {
	set := func(dst *string, v string) {
		if v = strings.TrimSpace(v); v != "" {
			*dst = v
		}
	}
	set(&m.Title, h.title)
	set(&m.Description, h.description)
	set(&m.Language, h.lang)
	set(&m.Keywords, h.keywords)
	set(&m.Robots, h.robots)
	set(&m.Author, h.author)
	set(&m.Favicon, h.favicon)
	set(&m.OGTitle, h.og["title"])
	set(&m.OGDescription, h.og["description"])
	set(&m.OGURL, h.og["url"])
	set(&m.OGImage, h.og["image"])
	set(&m.OGSiteName, h.og["site_name"])
	set(&m.OGLocale, h.og["locale"])
}

// base is the URL the page's relative links resolve against.
func (h *head) base(page *url.URL) *url.URL {
	if page == nil || h.baseHref == "" {
		return page
	}
	if b, err := page.Parse(h.baseHref); err == nil {
		return b
	}
	return page
}

func resolve(base *url.URL, ref string) string {
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

// imagesOf lists the page's images, absolute and once each: <img src>
// and the first candidate of each srcset.
func imagesOf(tree *html.Node, base *url.URL) []string {
	out := []string{}
	seen := map[string]bool{}
	add := func(ref string) {
		u := resolve(base, ref)
		if u == "" || seen[u] || !(strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")) {
			return
		}
		seen[u] = true
		out = append(out, u)
	}
	for n := range tree.Descendants() {
		if n.Type != html.ElementNode || n.DataAtom != atom.Img && n.DataAtom != atom.Source {
			continue
		}
		for _, a := range n.Attr {
			switch a.Key {
			case "src":
				add(a.Val)
			case "srcset":
				first, _, _ := strings.Cut(strings.TrimSpace(a.Val), ",")
				ref, _, _ := strings.Cut(strings.TrimSpace(first), " ")
				add(ref)
			}
		}
	}
	return out
}

// dropped are the elements the html format leaves out: they are not
// content. With onlyMainContent the page's furniture goes too.
var (
	dropped     = map[atom.Atom]bool{atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true, atom.Iframe: true, atom.Object: true, atom.Embed: true}
	furnitureOf = map[atom.Atom]bool{atom.Header: true, atom.Nav: true, atom.Footer: true, atom.Aside: true}
)

// cleanHTML is Firecrawl's html format: the page without scripts, styles
// and comments (and, with onlyMainContent, its header, navigation, footer
// and asides), or only the elements includeTags selects.
func (p *plan) cleanHTML(tree *html.Node) string {
	var remove []*html.Node
	for n := range tree.Descendants() {
		switch {
		case n.Type == html.CommentNode,
			n.Type == html.ElementNode && dropped[n.DataAtom],
			n.Type == html.ElementNode && p.onlyMain && len(p.includeTags) == 0 && furnitureOf[n.DataAtom]:
			remove = append(remove, n)
		}
	}
	for _, n := range remove {
		if n.Parent != nil {
			n.Parent.RemoveChild(n)
		}
	}
	var b strings.Builder
	if len(p.includeTags) > 0 {
		// Checked by extract.CheckSelector when the plan was made.
		sel, err := cascadia.ParseGroup(strings.Join(p.includeTags, ", "))
		if err != nil {
			return ""
		}
		for _, n := range cascadia.QueryAll(tree, sel) {
			_ = html.Render(&b, n)
		}
		return b.String()
	}
	_ = html.Render(&b, tree)
	return b.String()
}

// newID is a random UUID (version 4), as Firecrawl's ids are.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
