package extract

import (
	"context"
	"net/url"
	"strings"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"

	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/actions"
	"distill.dev/services/extractor/brand"
	"distill.dev/services/extractor/cleanhtml"
	"distill.dev/services/extractor/internal/htmlnode"
	"distill.dev/services/extractor/internal/weburl"
	"distill.dev/services/extractor/markdown"
	"distill.dev/services/extractor/metadata"
	"distill.dev/services/extractor/pick"
	"distill.dev/services/extractor/plaintext"
	"distill.dev/services/extractor/readable"
	"distill.dev/services/extractor/tables"
)

// fromHTML distils an HTML page, body decoded to UTF-8. Everything that
// reads the whole page runs before the content is chosen, because choosing
// it edits the tree; the Markdown conversion, which edits the content, runs
// last.
func (e *Extractor) fromHTML(ctx context.Context, req *internalv1.ExtractRequest, body []byte, u *url.URL, sel cascadia.Selector, picker *pick.Picker) (page, error) {
	opts := req.GetOptions()
	src := whole(body)
	// A pick may read a script's text (a page's state in a variable), and
	// the brand reads the style sheets; nothing else reads either, but
	// JSON-LD, which is never cut. What an
	// inline drawing holds is read only where a selector, a link of the
	// whole page or an action's name (an icon's title) may reach into it.
	if picker == nil {
		src = elideCode(body, elision{
			styles:   !opts.GetBrand(),
			drawings: sel == nil && !opts.GetLinksFull() && !opts.GetExtractActions(),
		})
	}
	doc, err := parseHTML(ctx, src)
	if err != nil {
		return page{}, err
	}
	readable.ShowStreamed(doc)
	readable.DropVariants(doc)
	base := weburl.Base(doc, u)
	meta := metadata.Read(doc, base)
	sig := readSignals(doc)

	var allLinks []*distillv1.Link
	if opts.GetLinksFull() {
		if err := stopped(ctx, "reading the page"); err != nil {
			return page{}, err
		}
		allLinks = linksIn(htmlnode.First(doc, "body"), u, base)
	}

	p := page{title: meta.Title, byline: meta.Byline, excerpt: meta.Description, meta: meta}
	if picker != nil {
		// Picking reads the whole page, before choosing the content edits it.
		if p.picked, err = picker.Run(ctx, doc, base); err != nil {
			return page{}, err
		}
	}
	if opts.GetExtractActions() {
		if err := stopped(ctx, "reading the page"); err != nil {
			return page{}, err
		}
		p.actions = actions.Read(doc, u, base, actionLimit(opts))
	}
	if opts.GetBrand() {
		p.brand = brand.Read(doc, base, meta)
	}
	if err := stopped(ctx, "reading the page"); err != nil {
		return page{}, err
	}
	var content *html.Node
	switch {
	case sel != nil:
		p.profile = profileSelector
		content, err = selectAll(ctx, doc, sel)
		if err != nil {
			return page{}, err
		}
	default:
		switch fetchopts.Profile(opts) {
		case distillv1.Profile_PROFILE_FULL:
			p.profile = profileFull
			content = readable.Full(doc)
		case distillv1.Profile_PROFILE_METADATA:
			p.profile = profileMetadata
			content, err = e.article(ctx, doc, readable.Page{Type: readable.TypeArticle})
		default:
			p.profile = profileArticle
			// Classified before the content is chosen: choosing it edits
			// the tree.
			readable.ShowNoscript(doc)
			kind := readable.Classify(doc, u)
			p.pageType = kind.Type
			content, err = e.article(ctx, doc, kind)
		}
		if err != nil {
			return page{}, stopped(ctx, "choosing the content")
		}
	}
	if err := stopped(ctx, "choosing the content"); err != nil {
		return page{}, err
	}

	// Past thinContentRunes, no page is low content for its length.
	p.lowContentReason = sig.lowContentReason(htmlnode.TextLenUpTo(content, thinContentRunes))
	p.scripted = sig.scripts
	// The content's links are read only when they are returned or counted.
	var contentLinks []*distillv1.Link
	if opts.GetDiagnostics() || opts.GetExtractLinks() && !opts.GetLinksFull() {
		contentLinks = linksIn(content, u, base)
		p.linkCount = len(contentLinks)
	}
	switch {
	case opts.GetLinksFull():
		p.links = allLinks
	case opts.GetExtractLinks():
		p.links = contentLinks
	}
	if opts.GetExtractTables() || opts.GetDiagnostics() {
		if err := stopped(ctx, "reading tables"); err != nil {
			return page{}, err
		}
		found := tables.Read(content)
		p.tableCount = len(found)
		if opts.GetExtractTables() {
			p.tables = found
		}
	}

	if p.profile == profileMetadata {
		lead := leadParagraphs(content, 2)
		leadMD, err := e.md.Convert(ctx, lead, base)
		if err != nil {
			if err := stopped(ctx, "rendering Markdown"); err != nil {
				return page{}, err
			}
			return page{}, failure.Wrap(failure.Internal, err, "render lead")
		}
		p.markdown = metadataMarkdown(meta, leadMD)
		p.text = metadataText(meta, plaintext.Render(lead))
		return p, nil
	}

	if err := stopped(ctx, "rendering Markdown"); err != nil {
		return page{}, err
	}
	switch fetchopts.Format(opts) {
	case distillv1.Format_FORMAT_TEXT:
		p.text = plaintext.Render(content)
	case distillv1.Format_FORMAT_HTML:
		// Before the Markdown conversion, which rewrites the tree.
		p.htmlBlocks = cleanhtml.Blocks(content, base)
	}
	// The rest of the page is read: cut the content loose so that the
	// page around it can be freed while the Markdown is rendered, and the
	// content itself as it is.
	if content != nil {
		htmlnode.Remove(content)
	}
	p.markdown, err = e.md.Convert(ctx, content, base)
	if err != nil {
		if err := stopped(ctx, "rendering Markdown"); err != nil {
			return page{}, err
		}
		return page{}, failure.Wrap(failure.Internal, err, "render markdown")
	}
	return p, nil
}

// actionLimit returns options.max_actions, or -1 for no cap. Zero is no
// cap too, as the CLI documents it: a tree capped at nothing would leave
// an agent nothing to act on.
func actionLimit(o *distillv1.FetchOptions) int {
	if n := o.GetMaxActions(); n > 0 {
		return int(n)
	}
	return -1
}

// leadParagraphs moves the first n paragraphs of prose in content into a
// new container. Short paragraphs (datelines, captions) are passed over
// unless there is nothing longer.
func leadParagraphs(content *html.Node, n int) *html.Node {
	lead := htmlnode.NewElement("div")
	var long, short []*html.Node
	for _, p := range htmlnode.Elements(content, "p") {
		l := htmlnode.TextLen(p)
		if l == 0 {
			continue
		}
		if len(short) < n {
			short = append(short, p)
		}
		if l >= 80 && len(long) < n && !insideAny(p, long) {
			long = append(long, p)
		}
	}
	picked := long
	if len(picked) == 0 {
		picked = short
	}
	for _, p := range picked {
		htmlnode.Remove(p)
		lead.AppendChild(p)
	}
	return lead
}

func insideAny(n *html.Node, list []*html.Node) bool {
	for _, a := range list {
		if htmlnode.Contains(a, n) {
			return true
		}
	}
	return false
}

// metadataMarkdown renders the metadata profile: title, a list of the
// facts found, the description as a quote, then the lead.
func metadataMarkdown(m metadata.Metadata, lead string) string {
	var b strings.Builder
	if m.Title != "" {
		b.WriteString("# " + m.Title + "\n\n")
	}
	facts := metadataFacts(m)
	for _, f := range facts {
		b.WriteString("- " + f[0] + ": " + f[1] + "\n")
	}
	if len(facts) > 0 {
		b.WriteString("\n")
	}
	if m.Description != "" {
		b.WriteString("> " + m.Description + "\n\n")
	}
	b.WriteString(lead)
	return markdown.Tidy(b.String())
}

// metadataText is metadataMarkdown without the Markdown syntax.
func metadataText(m metadata.Metadata, lead string) string {
	var b strings.Builder
	if m.Title != "" {
		b.WriteString(m.Title + "\n\n")
	}
	facts := metadataFacts(m)
	for _, f := range facts {
		b.WriteString(f[0] + ": " + f[1] + "\n")
	}
	if len(facts) > 0 {
		b.WriteString("\n")
	}
	if m.Description != "" {
		b.WriteString(m.Description + "\n\n")
	}
	b.WriteString(lead)
	return strings.TrimSpace(b.String())
}

func metadataFacts(m metadata.Metadata) [][2]string {
	var facts [][2]string
	for _, f := range [][2]string{
		{"Author", m.Byline},
		{"Published", m.Published},
		{"Site", m.SiteName},
		{"Language", m.Language},
		{"Image", m.Image},
	} {
		if f[1] != "" {
			facts = append(facts, f)
		}
	}
	return facts
}
