// Package pipeline distills one URL: fetch, extract, and render headless
// when the options ask for it or the page is an empty shell. The gateway runs
// it for single URLs and the batch workers run it for each job; the stages
// are interfaces so the same code drives in-process services and gRPC
// clients.
package pipeline

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/cookies"
	"distill.dev/services/platform/telemetry"
)

// Fetcher retrieves a page. *fetch.Fetcher and a FetcherService client
// (through a small adapter) satisfy it.
type Fetcher interface {
	Fetch(ctx context.Context, req *internalv1.FetcherServiceFetchRequest) (*internalv1.FetcherServiceFetchResponse, error)
}

// Extractor turns a page into Distilled.
type Extractor interface {
	Extract(ctx context.Context, req *internalv1.ExtractRequest) (*internalv1.ExtractResponse, error)
}

// Renderer renders a page in a headless browser.
type Renderer interface {
	Render(ctx context.Context, req *internalv1.RenderRequest) (*internalv1.RenderResponse, error)
}

// Result is one distilled page and how it was reached.
type Result struct {
	Distilled *distillv1.Distilled
	// RedirectHistory lists the URLs before the final one.
	RedirectHistory []string
	// RetryAfter is the server's Retry-After on a 429 or 503; 0 when absent.
	RetryAfter time.Duration
	// FallbackReason says why the page was rendered headless (forced,
	// js_app, challenge, no_actions); empty when it was not, or when an
	// automatic render was not better than the page as fetched.
	FallbackReason string
	// Escalated says why the page was sent to the renderer, whether or not
	// the render was kept: a session reports every escalation, also one
	// that did not help. Empty when no render was tried.
	Escalated string
	// RenderErr is why that render failed; nil when it did not fail or
	// none was tried.
	RenderErr error
	// Withheld is the request the render's steps would have sent, had
	// Request.WithholdUnsafe not kept it back; Distilled is then nil.
	Withheld *distillv1.WithheldRequest
	// Body is the page the content came from, with KeepBody: the body as
	// fetched (decoded, at most max_bytes), or the rendered DOM when the
	// render was kept. ContentType is its Content-Type, charset included.
	Body        []byte
	ContentType string
}

// Pipeline runs the stages for one URL.
type Pipeline struct {
	logger    *slog.Logger
	fetcher   Fetcher
	extractor Extractor
	renderer  Renderer
	// anonymousRenders keeps a session's cookies out of every render.
	anonymousRenders bool
}

// Option configures a Pipeline.
type Option func(*Pipeline)

// WithAnonymousRenders, when on, makes every headless render anonymous: a
// session's cookies are never handed to the renderer (which refuses them
// too when its own host says so). The operator's choice
// (DISTILL_FALLBACK_NO_COOKIES), for sites whose sessions must not reach a
// browser.
func WithAnonymousRenders(on bool) Option {
	return func(p *Pipeline) { p.anonymousRenders = on }
}

// New returns a Pipeline over the given stages.
func New(logger *slog.Logger, f Fetcher, e Extractor, r Renderer, opts ...Option) *Pipeline {
	p := &Pipeline{logger: logger, fetcher: f, extractor: e, renderer: r}
	for _, opt := range opts {
		opt(p)
	}
	return p
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
		b += fetchopts.Timeout(opts) + fetchopts.JSWait(opts) + fetchopts.StepsBudget(opts)
	}
	return b
}

// Request is one URL to distill and the state it runs in.
type Request struct {
	URL     string
	Options *distillv1.FetchOptions
	// Method is GET when empty, or POST for a form, with Body and its
	// BodyContentType. The answer to a POST is never rendered: the browser
	// would have to send it again.
	Method          string
	Body            []byte
	BodyContentType string
	// WithholdUnsafe keeps the render's steps from sending any request
	// other than GET: the first is withheld and named in Result.Withheld.
	WithholdUnsafe bool
	// Jar holds a session's cookies; nil for a stateless fetch. The fetch
	// sends them and stores what the server sets in it. A headless render
	// gets only the cookies the jar holds for the URL it renders, unless
	// the pipeline's renders are anonymous (WithAnonymousRenders).
	Jar *cookies.Jar
	// KeepBody hands the page's bytes back in Result.Body, for doors that
	// answer with the page's HTML as well as its distillation (the
	// Firecrawl API's rawHtml).
	KeepBody bool
	// Visit is what the caller's own stages are to know of this request
	// besides what a stage's request says: a crawl's visit of the page,
	// by which its stages judge redirects and take the host's turns. The
	// pipeline knows nothing of it; it hands it to every stage in the
	// stage's context, where VisitOf finds it. Nil for none.
	Visit any
}

// visitKey keys a Request's Visit in its stages' contexts.
type visitKey struct{}

// VisitOf is the Visit of the request a stage is called for with ctx, or
// nil.
func VisitOf(ctx context.Context) any { return ctx.Value(visitKey{}) }

// Reasons for a headless render, as the session loop's fallback_reason
// names them.
const (
	ReasonForced    = "forced"
	ReasonJSApp     = "js_app"
	ReasonChallenge = "challenge"
	ReasonNoActions = "no_actions"
)

// Distill runs the pipeline and returns only the Distilled page.
func (p *Pipeline) Distill(ctx context.Context, rawURL string, opts *distillv1.FetchOptions) (*distillv1.Distilled, error) {
	res, err := p.Run(ctx, rawURL, opts)
	if err != nil {
		return nil, err
	}
	return res.Distilled, nil
}

// Run distills rawURL statelessly.
func (p *Pipeline) Run(ctx context.Context, rawURL string, opts *distillv1.FetchOptions) (*Result, error) {
	return p.Do(ctx, Request{URL: rawURL, Options: opts})
}

// Do distills req.URL: fetch, extract, and render headless when js=always,
// or when js=auto and the page as fetched is low content (an app shell, a
// JavaScript notice, a challenge) or, when actions were asked for, offers
// none while it runs scripts. An automatic render is kept only when it is
// better: more content, or actions where there were none. The work is the
// phases in order (phases.go).
func (p *Pipeline) Do(ctx context.Context, req Request) (_ *Result, err error) {
	ctx, done := telemetry.StartRequest(ctx, "distill.pipeline", "pipeline", "Do", telemetry.URLAttributes(req.URL)...)
	defer func() { done(err) }()
	opts := req.Options
	if opts == nil {
		opts = &distillv1.FetchOptions{}
	}
	if err := fetchopts.Validate(opts); err != nil {
		return nil, failure.Wrap(failure.InvalidArgument, err, "invalid options")
	}
	ctx, cancel := context.WithTimeout(ctx, Budget(opts))
	defer cancel()
	if req.Visit != nil {
		ctx = context.WithValue(ctx, visitKey{}, req.Visit)
	}
	r := newRun(p, req, opts)
	for _, ph := range phases {
		if err := ph(r, ctx); err != nil {
			return nil, err
		}
		if r.answered {
			break
		}
	}
	return r.res, nil
}

// autoReason says why js=auto should render a page as fetched, or "".
func autoReason(out *internalv1.ExtractResponse, opts *distillv1.FetchOptions) string {
	diag := out.GetDistilled().GetDiagnostics()
	switch {
	case diag.GetLowContent() && out.GetLowContentReason() == ReasonChallenge:
		return ReasonChallenge
	case diag.GetLowContent():
		return ReasonJSApp
	case opts.GetExtractActions() && diag.GetActionCount() == 0 && out.GetScripted():
		return ReasonNoActions
	}
	return ""
}

// better reports whether an automatic render improved on the page as
// fetched, by what the render was for.
func better(rendered, fetched *distillv1.Distilled, reason string) bool {
	if reason == ReasonNoActions {
		return rendered.GetDiagnostics().GetActionCount() > fetched.GetDiagnostics().GetActionCount()
	}
	return rendered.GetDiagnostics().GetOutputChars() > fetched.GetDiagnostics().GetOutputChars()
}

// renderCookies are the jar's cookies for rawURL, for the render's isolated
// browser context. They are set for that URL's host alone, with path "/" so
// the page's own requests to its host (an app shell asking its API who is
// logged in) carry them too.
func (p *Pipeline) renderCookies(jar *cookies.Jar, rawURL string) []*internalv1.Cookie {
	if jar == nil || p.anonymousRenders {
		return nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil
	}
	var out []*internalv1.Cookie
	for _, c := range jar.Cookies(u) {
		out = append(out, &internalv1.Cookie{Name: c.Name, Value: c.Value, Path: "/", Secure: u.Scheme == "https"})
	}
	return out
}

func (p *Pipeline) extract(ctx context.Context, body []byte, finalURL string, status int32, contentType string, opts *distillv1.FetchOptions, rendered bool) (*internalv1.ExtractResponse, error) {
	out, err := p.extractor.Extract(ctx, &internalv1.ExtractRequest{
		Html:        body,
		Url:         finalURL,
		Status:      status,
		ContentType: contentType,
		Options:     opts,
		Rendered:    rendered,
	})
	if err != nil {
		return nil, failure.FromRemote(err)
	}
	return out, nil
}

// renderedContentType is the type of a render's DOM: the browser hands it
// back serialised as UTF-8.
const renderedContentType = "text/html; charset=utf-8"

// render distills finalURL as headless Chromium shows it, and returns the
// DOM it was distilled from, or the request its steps would have sent had
// req.WithholdUnsafe not kept it back.
func (p *Pipeline) render(ctx context.Context, req Request, finalURL string, opts, extractOpts *distillv1.FetchOptions) (*distillv1.Distilled, []byte, *distillv1.WithheldRequest, error) {
	out, err := p.renderer.Render(ctx, &internalv1.RenderRequest{
		Url: finalURL, Options: opts, Cookies: p.renderCookies(req.Jar, finalURL), WithholdUnsafe: req.WithholdUnsafe,
	})
	if err != nil {
		return nil, nil, nil, failure.FromRemote(err)
	}
	if w := out.GetWithheld(); w != nil {
		return nil, nil, w, nil
	}
	page, err := p.extract(ctx, out.GetHtml(), out.GetFinalUrl(), out.GetStatus(), renderedContentType, extractOpts, true)
	if err != nil {
		return nil, nil, nil, err
	}
	d := page.GetDistilled()
	withBrowserWork(d, out)
	if req.Jar != nil && !p.anonymousRenders {
		keepCookies(req.Jar, out)
	}
	return d, out.GetHtml(), nil, nil
}

// keepCookies puts into a session's jar the cookies the render's steps
// left, as a browser keeps what a page's scripts set. Only a render with
// steps may change what the jar holds: a plain render hands back the
// cookies it was given.
func keepCookies(jar *cookies.Jar, out *internalv1.RenderResponse) {
	if out.StepsRun == nil {
		return
	}
	u, err := url.Parse(out.GetFinalUrl())
	if err != nil {
		return
	}
	var cs []*http.Cookie
	for _, c := range out.GetCookiesAfter() {
		hc := &http.Cookie{Name: c.GetName(), Value: c.GetValue(), Path: c.GetPath(), Secure: c.GetSecure(), HttpOnly: c.GetHttpOnly()}
		// A host-only cookie has no Domain attribute; a domain cookie's
		// leading dot is how the browser marks it.
		if d, ok := strings.CutPrefix(c.GetDomain(), "."); ok {
			hc.Domain = d
		} else if c.GetDomain() != "" && c.GetDomain() != u.Hostname() {
			// Another host's: the jar would take it for this one's.
			continue
		}
		if c.GetExpires() > 0 {
			hc.Expires = time.Unix(c.GetExpires(), 0)
		}
		cs = append(cs, hc)
	}
	jar.SetCookies(u, cs)
}

// withBrowserWork copies into d what the render's browser work produced.
func withBrowserWork(d *distillv1.Distilled, out *internalv1.RenderResponse) {
	d.Screenshot, d.Pdf, d.Mhtml = out.Screenshot, out.Pdf, out.Mhtml
	d.Network, d.Steps = out.GetNetwork(), out.GetSteps()
	if out.StepsRun != nil || out.BlockedResources != nil {
		if d.Diagnostics == nil {
			d.Diagnostics = &distillv1.Diagnostics{}
		}
		d.Diagnostics.StepsRun, d.Diagnostics.BlockedResources = out.StepsRun, out.BlockedResources
	}
}

// contentType rebuilds the header the extractor reads the charset from.
func contentType(f *internalv1.FetcherServiceFetchResponse) string {
	if f.GetCharset() == "" {
		return f.GetContentType()
	}
	return f.GetContentType() + "; charset=" + f.GetCharset()
}

func isHTML(contentType string) bool {
	return contentType == "" || contentType == "text/html" || contentType == "application/xhtml+xml"
}
