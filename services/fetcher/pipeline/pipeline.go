// Package pipeline distills one URL: fetch, extract, and render headless
// when the options ask for it or the page is an empty shell. The gateway runs
// it for single URLs and the batch workers run it for each job; the stages
// are interfaces so the same code drives in-process services and gRPC
// clients.
package pipeline

import (
	"context"
	"log/slog"
	"time"

	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// Fetcher retrieves a page. *fetch.Fetcher and a FetcherService client
// (through a small adapter) satisfy it.
type Fetcher interface {
	Fetch(ctx context.Context, req *distillv1.FetcherServiceFetchRequest) (*distillv1.FetcherServiceFetchResponse, error)
}

// Extractor turns a page into Distilled.
type Extractor interface {
	Extract(ctx context.Context, req *distillv1.ExtractRequest) (*distillv1.ExtractResponse, error)
}

// Renderer renders a page in a headless browser.
type Renderer interface {
	Render(ctx context.Context, req *distillv1.RenderRequest) (*distillv1.RenderResponse, error)
}

// Result is one distilled page and how it was reached.
type Result struct {
	Distilled *distillv1.Distilled
	// RedirectHistory lists the URLs before the final one.
	RedirectHistory []string
	// FallbackReason says why the page was rendered headless (forced,
	// js_app, challenge); empty when it was not.
	FallbackReason string
}

// Pipeline runs the stages for one URL.
type Pipeline struct {
	logger    *slog.Logger
	fetcher   Fetcher
	extractor Extractor
	renderer  Renderer
}

// New returns a Pipeline over the given stages.
func New(logger *slog.Logger, f Fetcher, e Extractor, r Renderer) *Pipeline {
	return &Pipeline{logger: logger, fetcher: f, extractor: e, renderer: r}
}

// extractMargin covers extraction and scheduling beyond the fetch and render
// timeouts.
const extractMargin = 15 * time.Second

// Budget is the longest one URL may take through the pipeline with these
// options: the fetch, a render when one may happen, and a margin. Callers
// that wait on the pipeline from afar (batch dispatchers) use it to stop
// waiting.
func Budget(opts *distillv1.FetchOptions) time.Duration {
	b := fetchopts.Timeout(opts) + extractMargin
	if fetchopts.JS(opts) != distillv1.JsMode_JS_MODE_OFF {
		b += fetchopts.Timeout(opts) + fetchopts.JSWait(opts)
	}
	return b
}

// Distill runs the pipeline and returns only the Distilled page.
func (p *Pipeline) Distill(ctx context.Context, rawURL string, opts *distillv1.FetchOptions) (*distillv1.Distilled, error) {
	res, err := p.Run(ctx, rawURL, opts)
	if err != nil {
		return nil, err
	}
	return res.Distilled, nil
}

// Run distills rawURL.
func (p *Pipeline) Run(ctx context.Context, rawURL string, opts *distillv1.FetchOptions) (*Result, error) {
	if opts == nil {
		opts = &distillv1.FetchOptions{}
	}
	if err := fetchopts.Validate(opts); err != nil {
		return nil, failure.Wrap(failure.InvalidArgument, err, "invalid options")
	}
	ctx, cancel := context.WithTimeout(ctx, Budget(opts))
	defer cancel()

	fetched, err := p.fetcher.Fetch(ctx, &distillv1.FetcherServiceFetchRequest{Url: rawURL, Options: opts})
	if err != nil {
		return nil, failure.FromRemote(err)
	}

	// The pipeline needs low_content to decide on a render whether or not
	// the caller asked for diagnostics, so extraction always computes them
	// and they are dropped afterwards when not asked for.
	extractOpts := proto.CloneOf(opts)
	extractOpts.Diagnostics = true

	js := fetchopts.JS(opts)
	var page *distillv1.Distilled
	var lowContentReason string
	if js != distillv1.JsMode_JS_MODE_ALWAYS {
		page, lowContentReason, err = p.extract(ctx, fetched.GetBody(), fetched.GetFinalUrl(), fetched.GetStatus(), contentType(fetched), extractOpts, false)
		if err != nil {
			return nil, err
		}
	}

	res := &Result{Distilled: page, RedirectHistory: fetched.GetRedirectHistory()}
	switch {
	case js == distillv1.JsMode_JS_MODE_ALWAYS:
		rendered, err := p.render(ctx, fetched.GetFinalUrl(), opts, extractOpts)
		if err != nil {
			return nil, err
		}
		res.Distilled, res.FallbackReason = rendered, "forced"
	case js == distillv1.JsMode_JS_MODE_AUTO && page.GetDiagnostics().GetLowContent() && isHTML(fetched.GetContentType()):
		rendered, err := p.render(ctx, fetched.GetFinalUrl(), opts, extractOpts)
		switch {
		case err != nil:
			// The fetched page is still an answer; a failed fallback only
			// means it stays as thin as it was.
			p.logger.Debug("render fallback failed", "url", fetched.GetFinalUrl(), "err", err)
		case outputChars(rendered) > outputChars(page):
			res.Distilled, res.FallbackReason = rendered, fallbackReason(lowContentReason)
		}
	}
	if !opts.GetDiagnostics() {
		res.Distilled.Diagnostics = nil
	}
	return res, nil
}

// extract returns the page and, when it is low content, why (as the
// extractor names it).
func (p *Pipeline) extract(ctx context.Context, body []byte, finalURL string, status int32, contentType string, opts *distillv1.FetchOptions, rendered bool) (*distillv1.Distilled, string, error) {
	out, err := p.extractor.Extract(ctx, &distillv1.ExtractRequest{
		Html:        body,
		Url:         finalURL,
		Status:      status,
		ContentType: contentType,
		Options:     opts,
		Rendered:    rendered,
	})
	if err != nil {
		return nil, "", failure.FromRemote(err)
	}
	return out.GetDistilled(), out.GetLowContentReason(), nil
}

// fallbackReason is the session loop's fallback_reason for a render of a
// low-content page: the extractor's reason, js_app when it gave none.
func fallbackReason(lowContentReason string) string {
	if lowContentReason == "" {
		return "js_app"
	}
	return lowContentReason
}

func (p *Pipeline) render(ctx context.Context, finalURL string, opts, extractOpts *distillv1.FetchOptions) (*distillv1.Distilled, error) {
	out, err := p.renderer.Render(ctx, &distillv1.RenderRequest{Url: finalURL, Options: opts})
	if err != nil {
		return nil, failure.FromRemote(err)
	}
	// The browser hands back its DOM serialised as UTF-8.
	page, _, err := p.extract(ctx, out.GetHtml(), out.GetFinalUrl(), out.GetStatus(), "text/html; charset=utf-8", extractOpts, true)
	return page, err
}

// contentType rebuilds the header the extractor reads the charset from.
func contentType(f *distillv1.FetcherServiceFetchResponse) string {
	if f.GetCharset() == "" {
		return f.GetContentType()
	}
	return f.GetContentType() + "; charset=" + f.GetCharset()
}

func outputChars(d *distillv1.Distilled) int64 {
	return d.GetDiagnostics().GetOutputChars()
}

func isHTML(contentType string) bool {
	return contentType == "" || contentType == "text/html" || contentType == "application/xhtml+xml"
}
