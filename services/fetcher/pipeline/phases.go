package pipeline

import (
	"context"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/telemetry"
)

// phases are what Do does with one URL, in order. Each reads the run and
// adds to its Result; one whose option is not set returns at once. An option
// that changes what a page becomes is a new phase here, not another branch
// in one of them.
var phases = []func(*run, context.Context) error{
	(*run).fetch,
	(*run).readFetched,
	(*run).escalate,
	(*run).keepBody,
	(*run).keepPage,
	(*run).brand,
	(*run).dropDiagnostics,
}

// run is one URL on its way through the phases.
type run struct {
	p    *Pipeline
	req  Request
	opts *distillv1.FetchOptions
	// extractOpts are opts with diagnostics on: the pipeline needs
	// low_content to decide on a render whether or not the caller asked
	// for diagnostics, so extraction always computes them and they are
	// dropped afterwards when not asked for.
	extractOpts *distillv1.FetchOptions
	// sent is a request other than GET, whose answer is never rendered:
	// the browser would have to send it again.
	sent    bool
	fetched *internalv1.FetcherServiceFetchResponse
	// reason is why the page goes to the renderer; empty when it does not.
	reason string
	res    *Result
	// answered ends the run before the phases do: the Result is the
	// answer as it stands (a render's withheld request).
	answered bool
}

func newRun(p *Pipeline, req Request, opts *distillv1.FetchOptions) *run {
	extractOpts := proto.CloneOf(opts)
	extractOpts.Diagnostics = true
	return &run{
		p: p, req: req, opts: opts, extractOpts: extractOpts,
		sent: req.Method != "" && !strings.EqualFold(req.Method, http.MethodGet),
	}
}

// fetch retrieves the page, with the session's cookies when there is one,
// and keeps what the server set.
func (r *run) fetch(ctx context.Context) error {
	req := r.req
	freq := &internalv1.FetcherServiceFetchRequest{
		Url: req.URL, Options: r.opts,
		Method: req.Method, Body: req.Body, BodyContentType: req.BodyContentType,
	}
	if req.Jar != nil {
		freq.UseCookies, freq.Jar = true, req.Jar.Entries()
	}
	fetched, err := r.p.fetcher.Fetch(ctx, freq)
	if err != nil {
		return failure.FromRemote(err)
	}
	if req.Jar != nil {
		req.Jar.Apply(fetched.GetSetCookies())
	}
	r.fetched = fetched
	r.res = &Result{RedirectHistory: fetched.GetRedirectHistory(), RetryAfter: time.Duration(fetched.GetRetryAfterSecs()) * time.Second}
	return nil
}

// readFetched distills the page as fetched, unless it is to be rendered
// whatever it holds, and decides whether js=auto renders it.
func (r *run) readFetched(ctx context.Context) error {
	js := fetchopts.JS(r.opts)
	if fetchopts.Browser(r.opts) {
		// Steps, pictures, captures and blocking are a browser's work.
		js = distillv1.JsMode_JS_MODE_ALWAYS
	}
	f := r.fetched
	// A browser has nothing to add to a PDF: its viewer's page holds none
	// of the text.
	if js == distillv1.JsMode_JS_MODE_ALWAYS && !r.sent && f.GetContentType() != "application/pdf" {
		r.reason = ReasonForced
		return nil
	}
	out, err := r.p.extract(ctx, f.GetBody(), f.GetFinalUrl(), f.GetStatus(), contentType(f), r.extractOpts, false)
	if err != nil {
		return err
	}
	r.res.Distilled = out.GetDistilled()
	// max_bytes is a cap, not a failure: the page was distilled from its
	// beginning, and the caller is told.
	if f.GetTruncatedBody() {
		if r.res.Distilled.Diagnostics == nil {
			r.res.Distilled.Diagnostics = &distillv1.Diagnostics{}
		}
		r.res.Distilled.Diagnostics.TruncatedBody = true
	}
	if js == distillv1.JsMode_JS_MODE_AUTO && !r.sent && isHTML(f.GetContentType()) {
		r.reason = autoReason(out, r.opts)
	}
	return nil
}

// escalate renders the page headless when there is a reason to, and keeps
// the render when it was forced or is better than the page as fetched.
func (r *run) escalate(ctx context.Context) error {
	if r.reason == "" {
		return nil
	}
	res, reason, finalURL := r.res, r.reason, r.fetched.GetFinalUrl()
	rendered, dom, withheld, err := r.p.render(ctx, r.req, finalURL, r.opts, r.extractOpts)
	if withheld != nil {
		res.Distilled, res.Withheld = nil, withheld
		r.answered = true
		return nil
	}
	kept := err == nil && (reason == ReasonForced || better(rendered, res.Distilled, reason))
	res.Escalated, res.RenderErr = reason, err
	telemetry.CountFallback(ctx, reason, kept)
	trace.SpanFromContext(ctx).SetAttributes(telemetry.FallbackReason.String(reason), telemetry.FallbackKept.Bool(kept))
	switch {
	case reason == ReasonForced && err != nil:
		return err
	case err != nil:
		// The fetched page is still an answer; a failed fallback only
		// means it stays as thin as it was.
		r.p.logger.DebugContext(ctx, "render fallback failed", "url", finalURL, "reason", reason, "err", err)
	case kept:
		res.Distilled, res.FallbackReason = rendered, reason
		if r.wantsBody() {
			res.Body, res.ContentType = dom, renderedContentType
		}
	}
	return nil
}

// wantsBody is whether the page's bytes go back with the answer, in the
// Result or inside the Distilled.
func (r *run) wantsBody() bool { return r.req.KeepBody || r.opts.GetKeepPage() }

// keepBody hands back the body as fetched when the page's bytes were asked
// for and no kept render replaced them.
func (r *run) keepBody(context.Context) error {
	if r.wantsBody() && r.res.Body == nil {
		r.res.Body, r.res.ContentType = r.fetched.GetBody(), contentType(r.fetched)
	}
	return nil
}

// keepPage puts the page inside the answer, for a door that gets only the
// Distilled (a batch's or a crawl's pages).
func (r *run) keepPage(context.Context) error {
	if !r.opts.GetKeepPage() {
		return nil
	}
	res := r.res
	res.Distilled.Page, res.Distilled.PageContentType = res.Body, res.ContentType
	if !r.req.KeepBody {
		res.Body, res.ContentType = nil, ""
	}
	return nil
}

// brand adds the colours and fonts of the stylesheets the page links.
func (r *run) brand(ctx context.Context) error {
	if r.opts.GetBrand() {
		r.p.brandStylesheets(ctx, r.res.Distilled, r.opts)
	}
	return nil
}

// dropDiagnostics removes the diagnostics extraction always computes when
// the caller did not ask for them.
func (r *run) dropDiagnostics(context.Context) error {
	if !r.opts.GetDiagnostics() {
		r.res.Distilled.Diagnostics = nil
	}
	return nil
}
