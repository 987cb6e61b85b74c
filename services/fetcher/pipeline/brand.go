package pipeline

import (
	"context"
	"regexp"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"distill.dev/proto/fetchopts"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// A brand's colours and fonts are often only in the stylesheets a page
// links. The extractor never touches the network, so it lists them, and
// the pipeline reads them here with the page's own options (the same
// network policy, robots.txt and timeout, a smaller byte cap) and has the
// extractor read their colours and fonts as it reads a style element.

// maxStylesheetBytes caps each stylesheet read for a brand.
const maxStylesheetBytes = 512 << 10

// Limits of what a brand lists, as the extractor keeps them.
const (
	maxBrandColors = 8
	maxBrandFonts  = 6
)

// resourceFetcher fetches what is not a page. *fetch.Fetcher has it; a
// pipeline over a fetcher without it reads no stylesheets.
type resourceFetcher interface {
	Resource(ctx context.Context, rawURL string, opts *distillv1.FetchOptions) (*internalv1.FetcherServiceFetchResponse, error)
}

var styleEnd = regexp.MustCompile(`(?i)</style`)

// brandStylesheets adds the colours and fonts of the stylesheets d's brand
// links. A stylesheet that cannot be read is left out: the brand is still
// an answer without it.
func (p *Pipeline) brandStylesheets(ctx context.Context, d *distillv1.Distilled, opts *distillv1.FetchOptions) {
	b := d.GetBrand()
	rf, ok := p.fetcher.(resourceFetcher)
	if b == nil || len(b.GetStylesheets()) == 0 || !ok {
		return
	}
	o := proto.CloneOf(opts)
	o.MaxBytes = proto.Int64(min(fetchopts.MaxBytes(opts), maxStylesheetBytes))
	var page strings.Builder
	page.WriteString("<!doctype html><html><head>")
	for _, u := range b.GetStylesheets() {
		res, err := rf.Resource(ctx, u, o)
		if err != nil || res.GetStatus() >= 400 {
			p.logger.DebugContext(ctx, "brand stylesheet not read", "url", u, "status", res.GetStatus(), "err", err)
			continue
		}
		// The sheet is text inside a style element: nothing in it may
		// end that element.
		page.WriteString("<style>" + styleEnd.ReplaceAllString(string(res.GetBody()), "<\\/style") + "</style>")
	}
	page.WriteString("</head><body></body></html>")
	out, err := p.extractor.Extract(ctx, &internalv1.ExtractRequest{
		Html: []byte(page.String()), Url: d.GetFinalUrl(), Status: 200, ContentType: "text/html; charset=utf-8",
		Options: &distillv1.FetchOptions{Brand: true},
	})
	if err != nil {
		p.logger.DebugContext(ctx, "brand stylesheets not read", "url", d.GetFinalUrl(), "err", err)
		return
	}
	mergeBrandStyles(b, out.GetDistilled().GetBrand())
}

// mergeBrandStyles adds the colours and fonts of from to b: counts add
// up, the page's own fonts come first, and the lists keep their bounds.
func mergeBrandStyles(b, from *distillv1.Brand) {
	byHex := map[string]*distillv1.BrandColor{}
	for _, c := range b.GetColors() {
		byHex[c.GetHex()] = c
	}
	for _, c := range from.GetColors() {
		if have, ok := byHex[c.GetHex()]; ok {
			have.Count += c.GetCount()
			if have.Name == nil {
				have.Name = c.Name
			}
			continue
		}
		c = proto.CloneOf(c)
		byHex[c.GetHex()] = c
		b.Colors = append(b.Colors, c)
	}
	slices.SortStableFunc(b.Colors, func(x, y *distillv1.BrandColor) int { return int(y.GetCount() - x.GetCount()) })
	if len(b.Colors) > maxBrandColors {
		b.Colors = b.Colors[:maxBrandColors]
	}
	for _, f := range from.GetFonts() {
		if len(b.Fonts) < maxBrandFonts && !slices.ContainsFunc(b.Fonts, func(have string) bool { return strings.EqualFold(have, f) }) {
			b.Fonts = append(b.Fonts, f)
		}
	}
}
