package firecrawl

import (
	"crypto/rand"
	"fmt"
	"mime"
	"slices"

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

// document builds the answer for sourceURL from the distilled page. It
// only maps fields: the extractor read the page's parts the plan asked
// for (its html, rawHtml, images and head) from its one parse of it.
func (p *plan) document(sourceURL string, d *distillv1.Distilled) (*document, *apiError) {
	if !p.pdf && d.GetDiagnostics().PageCount != nil {
		return nil, notSupported("parsers", "this URL is a PDF, and parsers leaves pdf out")
	}
	doc := &document{Metadata: metadataOf(sourceURL, d)}
	for _, part := range documentParts {
		if part.wanted(p.want) {
			part.set(p, d, doc)
		}
	}
	warnings := p.warnings
	if len(p.opts.GetExcludeTags()) > 0 && !htmlType(doc.Metadata.ContentType) {
		warnings = append(slices.Clip(warnings), "excludeTags is ignored: the page is not HTML")
	}
	doc.Warning = joinWarnings(warnings)
	return doc, nil
}

// documentParts are the parts of a document a format asks for, each
// from its Distilled field. A part asked for is there even when the page
// has none (a PDF's html): empty, as Firecrawl gives it.
var documentParts = []struct {
	wanted func(formats) bool
	set    func(p *plan, d *distillv1.Distilled, doc *document)
}{
	{func(f formats) bool { return f.markdown }, func(_ *plan, d *distillv1.Distilled, doc *document) {
		doc.Markdown = ptr(d.GetMarkdown())
	}},
	{func(f formats) bool { return f.html }, func(_ *plan, d *distillv1.Distilled, doc *document) {
		doc.HTML = ptr(d.GetCleanHtml())
	}},
	{func(f formats) bool { return f.rawHTML }, func(_ *plan, d *distillv1.Distilled, doc *document) {
		doc.RawHTML = ptr(d.GetRawHtml())
	}},
	{func(f formats) bool { return f.images }, func(_ *plan, d *distillv1.Distilled, doc *document) {
		doc.Images = ptr(append([]string{}, d.GetImages().GetUrls()...))
	}},
	{func(f formats) bool { return f.links }, func(_ *plan, d *distillv1.Distilled, doc *document) {
		doc.Links = ptr(hrefs(d.GetLinks().GetItems()))
	}},
	{func(f formats) bool { return f.screenshot }, func(p *plan, d *distillv1.Distilled, doc *document) {
		mt := "image/png"
		if p.opts.GetScreenshotFormat() == "jpeg" {
			mt = "image/jpeg"
		}
		doc.Screenshot = ptr(dataURL(mt, d.GetScreenshot()))
	}},
	{func(f formats) bool { return f.actions }, func(_ *plan, d *distillv1.Distilled, doc *document) {
		doc.Actions = actionsOf(d)
	}},
}

func ptr[T any](v T) *T { return &v }

// hrefs are the links' URLs, once each.
func hrefs(links []*distillv1.Link) []string {
	out := []string{}
	seen := map[string]bool{}
	for _, l := range links {
		if !seen[l.GetHref()] {
			seen[l.GetHref()] = true
			out = append(out, l.GetHref())
		}
	}
	return out
}

// metadataOf is the document's metadata: what the extraction found, and
// over it what the page's head says, Firecrawl's title and description
// being the page's own.
func metadataOf(sourceURL string, d *distillv1.Distilled) metadata {
	m := metadata{
		Title:       d.GetTitle(),
		Description: d.GetExcerpt(),
		Author:      d.GetByline(),
		SourceURL:   sourceURL,
		URL:         d.GetFinalUrl(),
		StatusCode:  d.GetStatus(),
		ScrapeID:    newID(),
		NumPages:    d.GetDiagnostics().GetPageCount(),
	}
	h := d.GetHead()
	if ct := h.GetContentType(); ct != "" {
		m.ContentType = ct
		if mt, _, err := mime.ParseMediaType(ct); err == nil {
			m.ContentType = mt
		}
	}
	for _, f := range []struct {
		dst *string
		v   string
	}{
		{&m.Title, h.GetTitle()}, {&m.Description, h.GetDescription()}, {&m.Language, h.GetLanguage()},
		{&m.Keywords, h.GetKeywords()}, {&m.Robots, h.GetRobots()}, {&m.Author, h.GetAuthor()},
		{&m.Favicon, h.GetFavicon()}, {&m.OGTitle, h.GetOgTitle()}, {&m.OGDescription, h.GetOgDescription()},
		{&m.OGURL, h.GetOgUrl()}, {&m.OGImage, h.GetOgImage()}, {&m.OGSiteName, h.GetOgSiteName()},
		{&m.OGLocale, h.GetOgLocale()},
	} {
		if f.v != "" {
			*f.dst = f.v
		}
	}
	return m
}

// readsPage asks the extractor for the page's parts the formats are made
// of. A scrape always reads the page's head for its metadata; the pages
// of a batch or a crawl only when a part of the page is asked for, as
// before the extractor read them.
func (p *plan) readsPage() {
	o := p.opts
	o.RawHtml, o.CleanHtml, o.Images = p.want.rawHTML, p.want.html, p.want.images
	o.HeadMetadata = o.RawHtml || o.CleanHtml || o.Images || len(o.ExcludeTags) > 0
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

// newID is a random UUID (version 4), as Firecrawl's ids are.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
