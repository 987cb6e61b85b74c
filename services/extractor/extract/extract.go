// Package extract turns a fetched page into Distilled: Markdown (and plain
// text) of the part of the page that was asked for, with its title, byline,
// excerpt, links, tables, token figures and diagnostics.
package extract

import (
	"context"
	"log/slog"
	"math"
	"net/url"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
	"golang.org/x/sync/semaphore"
	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/actions"
	"distill.dev/services/extractor/markdown"
	"distill.dev/services/extractor/metadata"
	"distill.dev/services/extractor/pagediff"
	"distill.dev/services/extractor/pdf"
	"distill.dev/services/extractor/pick"
	"distill.dev/services/extractor/readable"
	"distill.dev/services/extractor/tokens"
	"distill.dev/services/platform/telemetry"
)

// Profile names as diagnostics report them.
const (
	profileArticle  = "article"
	profileFull     = "full"
	profileMetadata = "metadata"
	profileSelector = "selector"
)

// Extractor distils pages. It holds no state between calls and is safe for
// concurrent use.
type Extractor struct {
	internalv1.UnimplementedExtractorServiceServer

	logger *slog.Logger
	md     *markdown.Converter
	// article picks and cleans a page's main content. It is the one seam
	// the article scorer sits behind, so a stronger scorer replaces it
	// without touching the rest of the pipeline.
	article func(ctx context.Context, doc *html.Node, page readable.Page) (*html.Node, error)
	// pdf reads PDF documents; it starts its engine on the first one.
	pdf     *pdf.Engine
	pdfOpts []pdf.Option

	// budget, when set, bounds the memory extractions hold at once; see
	// WithMemoryBudget.
	budget     *semaphore.Weighted
	budgetSize int64
	// inUse is the weight of the pages being extracted; admitted, when
	// set (by tests), is told it after each admission.
	inUse    atomic.Int64
	admitted func(inUse int64)
	// waiting, when set (by tests), is called when an extraction finds
	// the budget full and is about to wait.
	waiting func()
}

// New returns an Extractor. Close it to stop the PDF engine, if a PDF
// started it.
func New(logger *slog.Logger, opts ...Option) *Extractor {
	e := &Extractor{
		logger:  logger,
		md:      markdown.New(),
		article: readable.ArticleOf,
	}
	for _, opt := range opts {
		opt(e)
	}
	e.pdf = pdf.NewEngine(e.pdfOpts...)
	return e
}

// Close releases what extraction holds between calls: the PDF engine.
func (e *Extractor) Close() error { return e.pdf.Close() }

// page is a distilled page before budgets and figures are applied.
type page struct {
	title      string
	byline     string
	excerpt    string
	markdown   string
	text       string
	profile    string
	links      []*distillv1.Link
	tables     []*distillv1.Table
	actions    *distillv1.Actions
	linkCount  int
	tableCount int
	// lowContentReason is "" or one of the reason constants.
	lowContentReason string
	scripted         bool
	// pageType is what kind of page an HTML page is, "" for other
	// content.
	pageType readable.PageType
	// pdfPages is a PDF's page count, 0 for other content.
	pdfPages int
	// cut is set when the content was cut short before the token budget
	// was applied: pages of a PDF past the budget were not read.
	cut bool
	// picked is what a picker found; nil when none was asked for.
	picked *distillv1.Picked
	// meta is what an HTML page says about itself, for the llm format's
	// header.
	meta metadata.Metadata
	// htmlBlocks is the content as clean HTML, one top-level block each,
	// when the html format was asked for.
	htmlBlocks []string
	brand      *distillv1.Brand
	// The page's own parts, when asked for: see pageparts.go.
	rawHTML, cleanHTML *string
	images             []string
	head               *distillv1.PageHead
}

// emptyLists gives a page without markup the empty lists of links, tables
// and actions that opts asked for: it has none.
func (p *page) emptyLists(opts *distillv1.FetchOptions) {
	if opts.GetExtractLinks() || opts.GetLinksFull() {
		p.links = []*distillv1.Link{}
	}
	if opts.GetExtractTables() {
		p.tables = []*distillv1.Table{}
	}
	if opts.GetExtractActions() {
		p.actions = &distillv1.Actions{}
	}
	if opts.GetImages() {
		p.images = []string{}
	}
}

// lowContent reports whether the content is too little for the page.
func (p page) lowContent() bool { return p.lowContentReason != "" }

// Extract distils one page. It is both the gRPC method and the in-process
// entry point, and a pure function of the request: no network, no state.
func (e *Extractor) Extract(ctx context.Context, req *internalv1.ExtractRequest) (_ *internalv1.ExtractResponse, err error) {
	ctx, done := telemetry.StartRequest(ctx, "distill.extract", "extractor", "Extract", telemetry.URLAttributes(req.GetUrl())...)
	defer func() { done(err) }()
	if err := stopped(ctx, "starting"); err != nil {
		return nil, err
	}
	x, err := readRequest(req)
	if err != nil {
		return nil, err
	}
	release, err := e.admit(ctx, len(req.GetHtml()))
	if err != nil {
		return nil, err
	}
	defer release()
	p, body, err := e.distil(ctx, x)
	if err != nil {
		return nil, err
	}
	x.fillAbsent(&p)
	d := finish(req, body, p)
	e.logger.DebugContext(ctx, "extracted",
		"url", req.GetUrl(), "profile", p.profile, "raw_bytes", len(req.GetHtml()),
		"markdown_chars", len(d.GetMarkdown()), "low_content", p.lowContent())
	return &internalv1.ExtractResponse{Distilled: d, LowContentReason: p.lowContentReason, Scripted: p.scripted}, nil
}

// extraction is a request with what its options compile to, checked
// before the page is admitted.
type extraction struct {
	req    *internalv1.ExtractRequest
	opts   *distillv1.FetchOptions
	u      *url.URL
	sel    cascadia.Selector
	picker *pick.Picker
	// include and exclude are include_tags and exclude_tags.
	include, exclude cascadia.Selector
}

// readRequest checks the request's URL, selectors and picker.
func readRequest(req *internalv1.ExtractRequest) (*extraction, error) {
	x := &extraction{req: req, opts: req.GetOptions()}
	var err error
	if x.u, err = pageURL(req.GetUrl()); err != nil {
		return nil, err
	}
	if x.sel, err = contentSelector(x.opts); err != nil {
		return nil, err
	}
	if x.include, err = tagSelectors(x.opts.GetIncludeTags()); err != nil {
		return nil, err
	}
	if x.exclude, err = tagSelectors(x.opts.GetExcludeTags()); err != nil {
		return nil, err
	}
	if x.picker, err = pick.Compile(x.opts); err != nil {
		return nil, err
	}
	return x, nil
}

// distil reads the page by its kind: a PDF, HTML, or text. It returns the
// page and the text its stats count as the raw page: the page decoded to
// UTF-8, once, or a PDF's text.
func (e *Extractor) distil(ctx context.Context, x *extraction) (page, []byte, error) {
	req := x.req
	mt, _ := mediaType(req.GetContentType())
	kind := kindOf(mt)
	if isPDF(mt, req.GetHtml()) {
		kind = kindPDF
	}
	switch kind {
	case kindUnsupported:
		return page{}, nil, failure.New(failure.UnsupportedContent, "unsupported content type %q", req.GetContentType())
	case kindPDF:
		p, body, err := e.fromPDF(ctx, req, x.u)
		if err != nil {
			return page{}, nil, err
		}
		p.emptyLists(x.opts)
		return p, body, nil
	}
	body := decode(req.GetHtml(), req.GetContentType())
	if kind == kindHTML {
		p, err := e.fromHTML(ctx, x, body)
		return p, body, err
	}
	p := fromText(kind, body, x.u)
	p.emptyLists(x.opts)
	return p, body, nil
}

// fillAbsent gives a page without markup what it cannot hold but was
// asked for: a PDF or a text file has no elements to pick, and shows no
// brand but its site's name.
func (x *extraction) fillAbsent(p *page) {
	if x.picker != nil && p.picked == nil {
		p.picked = x.picker.Empty()
	}
	if x.opts.GetBrand() && p.brand == nil {
		p.brand = &distillv1.Brand{Name: strings.TrimPrefix(x.u.Hostname(), "www.")}
	}
	if x.opts.GetHeadMetadata() {
		if p.head == nil {
			p.head = &distillv1.PageHead{}
		}
		p.head.ContentType = x.req.GetContentType()
	}
}

// finish applies the token budget and fills in the figures; body is the
// decoded page the stats count.
func finish(req *internalv1.ExtractRequest, body []byte, p page) *distillv1.Distilled {
	opts := req.GetOptions()
	r := read(opts, req.GetUrl(), p)
	p.markdown, p.text = r.markdown, r.text
	d := distilled(req, p, r)
	// The earlier answer was printed by the same pipeline, so the diff
	// compares output with output: the Markdown as it is returned.
	if old := opts.GetDiffWith(); old != nil {
		d.Diff = pagediff.Compare(old, d)
	}
	// Counting builds the tokenizer's vocabulary on first use, so a
	// request that asks for no figures counts nothing.
	if !opts.GetStats() && !opts.GetDiagnostics() {
		return d
	}
	outputTokens := tokens.Count(p.markdown)
	if opts.GetStats() {
		d.Stats = statsOf(int64(len(req.GetHtml())), body, outputTokens)
	}
	if opts.GetDiagnostics() {
		d.Diagnostics = diagnosticsOf(req, p, r, outputTokens)
	}
	return d
}

// distilled is the page as it is returned, before its figures.
func distilled(req *internalv1.ExtractRequest, p page, r reading) *distillv1.Distilled {
	d := &distillv1.Distilled{
		FinalUrl:  req.GetUrl(),
		Status:    req.GetStatus(),
		Title:     p.title,
		Markdown:  p.markdown,
		Text:      p.text,
		Actions:   p.actions,
		Picked:    p.picked,
		Brand:     p.brand,
		RawHtml:   p.rawHTML,
		CleanHtml: p.cleanHTML,
		Head:      p.head,
	}
	if p.images != nil {
		d.Images = &distillv1.ImageList{Urls: p.images}
	}
	if p.byline != "" {
		d.Byline = &p.byline
	}
	if p.excerpt != "" {
		d.Excerpt = &p.excerpt
	}
	if p.links != nil {
		d.Links = &distillv1.LinkList{Items: p.links}
	}
	if p.tables != nil {
		d.Tables = &distillv1.TableList{Items: p.tables}
	}
	if r.chunks != nil {
		d.Chunks = &distillv1.ChunkList{Items: r.chunks}
	}
	return d
}

// statsOf compares the raw page, rawBytes long and body once decoded, with
// the output, in tokens.
func statsOf(rawBytes int64, body []byte, outputTokens int64) *distillv1.Stats {
	rawTokens := tokens.Count(string(body))
	saved := max(0, rawTokens-outputTokens)
	return &distillv1.Stats{
		RawBytes:     rawBytes,
		RawTokens:    rawTokens,
		OutputTokens: outputTokens,
		SavedTokens:  saved,
		SavedRatio:   ratio(saved, rawTokens),
	}
}

// diagnosticsOf says how the extraction of p went.
func diagnosticsOf(req *internalv1.ExtractRequest, p page, r reading, outputTokens int64) *distillv1.Diagnostics {
	rawBytes := int64(len(req.GetHtml()))
	chars := int64(utf8.RuneCountInString(p.markdown))
	d := &distillv1.Diagnostics{
		Profile:         p.profile,
		RawBytes:        rawBytes,
		OutputChars:     chars,
		OutputTokens:    outputTokens,
		ExtractionRatio: ratio(chars, rawBytes),
		LinkCount:       int32(p.linkCount),
		TableCount:      int32(p.tableCount),
		ActionCount:     int32(actions.Count(p.actions)),
		UsedHeadless:    req.GetRendered(),
		Truncated:       r.truncated,
		LowContent:      p.lowContent(),
		PageType:        string(p.pageType),
		QueryRelevance:  r.relevance,
		QueryBlocks:     r.kept,
	}
	if p.pdfPages > 0 {
		d.PageCount = proto.Int32(int32(p.pdfPages))
	}
	return d
}

// ratio returns a/b rounded to four decimals, 0 when b is 0.
func ratio(a, b int64) float64 {
	if b <= 0 {
		return 0
	}
	return math.Round(float64(a)/float64(b)*10000) / 10000
}
