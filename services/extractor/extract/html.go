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

// htmlPage is one HTML page as its readers share it: the request, the
// tree they read, and the page they fill in.
type htmlPage struct {
	req     *internalv1.ExtractRequest
	opts    *distillv1.FetchOptions
	body    []byte
	u, base *url.URL
	sel     cascadia.Selector
	picker  *pick.Picker
	// include and exclude are include_tags and exclude_tags; nil when
	// none were given.
	include, exclude cascadia.Selector
	// profile is how the content is chosen, as diagnostics name it.
	profile string
	doc     *html.Node
	meta    metadata.Metadata
	sig     signals
	content *html.Node
	p       page
}

// htmlStep is one reader of an HTML page, run when the options ask for it.
type htmlStep struct {
	// when says whether the options ask for the step; nil is always.
	when func(*htmlPage) bool
	// stage, when set, names what the step begins, and the step waits
	// for none once the context has ended.
	stage string
	run   func(ctx context.Context, e *Extractor, hp *htmlPage) error
}

// The stages an ended context is reported in.
const (
	stageReading   = "reading the page"
	stageChoosing  = "choosing the content"
	stageRendering = "rendering Markdown"
)

// htmlSteps read an HTML page, in order. Everything that reads the whole
// page runs before the content is chosen, because choosing it edits the
// tree; the Markdown conversion, which edits the content, runs last. A new
// option is a new step here.
var htmlSteps = []htmlStep{
	{run: parsePage},
	{when: wantsExclude, run: excludeTags},
	{when: wantsPageParts, run: readPageParts},
	{run: readWholePage},
	{when: wantsAllLinks, stage: stageReading, run: readAllLinks},
	{when: wantsPick, run: runPicker},
	{when: wantsActions, stage: stageReading, run: readActions},
	{when: wantsBrand, run: readBrand},
	// One of the four chooses the content.
	{when: profileIs(profileSelector), stage: stageReading, run: chooseSelected},
	{when: profileIs(profileFull), stage: stageReading, run: chooseFull},
	{when: profileIs(profileMetadata), stage: stageReading, run: chooseArticleLead},
	{when: profileIs(profileArticle), stage: stageReading, run: chooseArticle},
	{stage: stageChoosing, run: judgeContent},
	{when: wantsContentLinks, run: readContentLinks},
	{when: wantsTables, stage: "reading tables", run: readTables},
	{when: profileIs(profileMetadata), run: renderLead},
	{when: rendersContent, stage: stageRendering, run: renderContent},
}

// fromHTML distils the page x asks for, body decoded to UTF-8, by running
// the steps its options ask for.
func (e *Extractor) fromHTML(ctx context.Context, x *extraction, body []byte) (page, error) {
	hp := &htmlPage{req: x.req, opts: x.opts, body: body, u: x.u, sel: x.sel, picker: x.picker, include: x.include, exclude: x.exclude}
	hp.profile = profileOf(hp.opts, hp.sel)
	for _, s := range htmlSteps {
		if s.when != nil && !s.when(hp) {
			continue
		}
		if s.stage != "" {
			if err := stopped(ctx, s.stage); err != nil {
				return page{}, err
			}
		}
		if err := s.run(ctx, e, hp); err != nil {
			return page{}, err
		}
	}
	return hp.p, nil
}

// profileOf names how the options choose the content: a selector wins
// over the profile.
func profileOf(opts *distillv1.FetchOptions, sel cascadia.Selector) string {
	if sel != nil {
		return profileSelector
	}
	switch fetchopts.Profile(opts) {
	case distillv1.Profile_PROFILE_FULL:
		return profileFull
	case distillv1.Profile_PROFILE_METADATA:
		return profileMetadata
	}
	return profileArticle
}

func profileIs(name string) func(*htmlPage) bool {
	return func(hp *htmlPage) bool { return hp.profile == name }
}

func wantsAllLinks(hp *htmlPage) bool { return hp.opts.GetLinksFull() }
func wantsPick(hp *htmlPage) bool     { return hp.picker != nil }
func wantsActions(hp *htmlPage) bool  { return hp.opts.GetExtractActions() }
func wantsBrand(hp *htmlPage) bool    { return hp.opts.GetBrand() }
func wantsTables(hp *htmlPage) bool   { return hp.opts.GetExtractTables() || hp.opts.GetDiagnostics() }

// wantsContentLinks: the content's links are read only when they are
// returned or counted.
func wantsContentLinks(hp *htmlPage) bool {
	return hp.opts.GetDiagnostics() || hp.opts.GetExtractLinks() && !hp.opts.GetLinksFull()
}

// rendersContent: the metadata profile renders its lead instead.
func rendersContent(hp *htmlPage) bool { return hp.profile != profileMetadata }

// parsePage parses the page. A pick may read a script's text (a page's
// state in a variable), and the brand reads the style sheets; nothing else
// reads either, but JSON-LD, which is never cut. What an inline drawing
// holds is read only where a selector, a link of the whole page or an
// action's name (an icon's title) may reach into it. The page's own
// parts rendered from its markup need it whole.
func parsePage(ctx context.Context, _ *Extractor, hp *htmlPage) error {
	parsed(ctx)
	src := whole(hp.body)
	if hp.picker == nil && !readsSource(hp.opts) {
		src = elideCode(hp.body, elision{
			styles:   !hp.opts.GetBrand(),
			drawings: hp.sel == nil && !hp.opts.GetLinksFull() && !hp.opts.GetExtractActions(),
		})
	}
	doc, err := parseHTML(ctx, src)
	hp.doc = doc
	return err
}

// readWholePage shows what the page streams in and drops its variants,
// then reads what it says about itself.
func readWholePage(_ context.Context, _ *Extractor, hp *htmlPage) error {
	readable.ShowStreamed(hp.doc)
	readable.DropVariants(hp.doc)
	hp.base = weburl.Base(hp.doc, hp.u)
	hp.meta = metadata.Read(hp.doc, hp.base)
	hp.sig = readSignals(hp.doc)
	hp.p.title, hp.p.byline, hp.p.excerpt, hp.p.meta = hp.meta.Title, hp.meta.Byline, hp.meta.Description, hp.meta
	return nil
}

// readAllLinks: with links_full, the links are every link of the body.
func readAllLinks(_ context.Context, _ *Extractor, hp *htmlPage) error {
	hp.p.links = linksIn(htmlnode.First(hp.doc, "body"), hp.u, hp.base)
	return nil
}

func runPicker(ctx context.Context, _ *Extractor, hp *htmlPage) (err error) {
	hp.p.picked, err = hp.picker.Run(ctx, hp.doc, hp.base)
	return err
}

func readActions(_ context.Context, _ *Extractor, hp *htmlPage) error {
	hp.p.actions = actions.Read(hp.doc, hp.u, hp.base, actionLimit(hp.opts))
	return nil
}

func readBrand(_ context.Context, _ *Extractor, hp *htmlPage) error {
	hp.p.brand = brand.Read(hp.doc, hp.base, hp.meta)
	return nil
}

func chooseSelected(ctx context.Context, _ *Extractor, hp *htmlPage) (err error) {
	hp.p.profile = profileSelector
	hp.content, err = selectAll(ctx, hp.doc, hp.sel)
	return err
}

func chooseFull(_ context.Context, _ *Extractor, hp *htmlPage) error {
	hp.p.profile = profileFull
	hp.content = readable.Full(hp.doc)
	return nil
}

// chooseArticleLead chooses the content the metadata profile draws its
// lead from: the page read as an article.
func chooseArticleLead(ctx context.Context, e *Extractor, hp *htmlPage) error {
	hp.p.profile = profileMetadata
	return hp.choose(ctx, e, readable.Page{Type: readable.TypeArticle})
}

// chooseArticle classifies the page, before the content is chosen:
// choosing it edits the tree.
func chooseArticle(ctx context.Context, e *Extractor, hp *htmlPage) error {
	hp.p.profile = profileArticle
	readable.ShowNoscript(hp.doc)
	kind := readable.Classify(hp.doc, hp.u)
	hp.p.pageType = kind.Type
	return hp.choose(ctx, e, kind)
}

// choose runs the article scorer, which fails only when ctx ends.
func (hp *htmlPage) choose(ctx context.Context, e *Extractor, kind readable.Page) error {
	content, err := e.article(ctx, hp.doc, kind)
	if err != nil {
		return stopped(ctx, stageChoosing)
	}
	hp.content = content
	return nil
}

// judgeContent says whether the content is too little for the page. Past
// thinContentRunes, no page is low content for its length.
func judgeContent(_ context.Context, _ *Extractor, hp *htmlPage) error {
	hp.p.lowContentReason = hp.sig.lowContentReason(htmlnode.TextLenUpTo(hp.content, thinContentRunes))
	hp.p.scripted = hp.sig.scripts
	return nil
}

// readContentLinks counts the content's links, and returns them unless
// every link of the page was asked for.
func readContentLinks(_ context.Context, _ *Extractor, hp *htmlPage) error {
	links := linksIn(hp.content, hp.u, hp.base)
	hp.p.linkCount = len(links)
	if hp.opts.GetExtractLinks() && !hp.opts.GetLinksFull() {
		hp.p.links = links
	}
	return nil
}

// readTables counts the content's tables, and returns them when asked.
func readTables(_ context.Context, _ *Extractor, hp *htmlPage) error {
	found := tables.Read(hp.content)
	hp.p.tableCount = len(found)
	if hp.opts.GetExtractTables() {
		hp.p.tables = found
	}
	return nil
}

// renderLead renders the metadata profile: the facts, then the content's
// first paragraphs.
func renderLead(ctx context.Context, e *Extractor, hp *htmlPage) error {
	lead := leadParagraphs(hp.content, 2)
	leadMD, err := e.md.Convert(ctx, lead, hp.base)
	if err != nil {
		return renderFailed(ctx, err, "render lead")
	}
	hp.p.markdown = metadataMarkdown(hp.meta, leadMD)
	hp.p.text = metadataText(hp.meta, plaintext.Render(lead))
	return nil
}

// renderContent renders the content as Markdown and, before the
// conversion rewrites the tree, as the format asks: text, or clean HTML.
func renderContent(ctx context.Context, e *Extractor, hp *htmlPage) (err error) {
	switch fetchopts.Format(hp.opts) {
	case distillv1.Format_FORMAT_TEXT:
		hp.p.text = plaintext.Render(hp.content)
	case distillv1.Format_FORMAT_HTML:
		hp.p.htmlBlocks = cleanhtml.Blocks(hp.content, hp.base)
	}
	// The rest of the page is read: cut the content loose so that the
	// page around it can be freed while the Markdown is rendered, and the
	// content itself as it is.
	if hp.content != nil {
		htmlnode.Remove(hp.content)
	}
	if hp.p.markdown, err = e.md.Convert(ctx, hp.content, hp.base); err != nil {
		return renderFailed(ctx, err, "render markdown")
	}
	return nil
}

// renderFailed is a failed conversion's error: the context's when it
// ended, else an internal failure.
func renderFailed(ctx context.Context, err error, what string) error {
	if err := stopped(ctx, stageRendering); err != nil {
		return err
	}
	return failure.Wrap(failure.Internal, err, "%s", what)
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
