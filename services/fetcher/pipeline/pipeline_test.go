package pipeline

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/cookies"
)

// The stages here are small in-test implementations: this package decides
// when to render and which result to keep; the real stages are tested in
// their own packages and together in the gateway's end-to-end tests.

type fetchFunc func(context.Context, *internalv1.FetcherServiceFetchRequest) (*internalv1.FetcherServiceFetchResponse, error)

func (f fetchFunc) Fetch(ctx context.Context, r *internalv1.FetcherServiceFetchRequest) (*internalv1.FetcherServiceFetchResponse, error) {
	return f(ctx, r)
}

// charsExtractor returns a page whose output size is the body's length,
// whose low_content flag is set below 10 bytes, with one action per "<a"
// when actions are asked for, and scripted when the body has "<script".
type charsExtractor struct{ calls []*internalv1.ExtractRequest }

func (e *charsExtractor) Extract(_ context.Context, r *internalv1.ExtractRequest) (*internalv1.ExtractResponse, error) {
	e.calls = append(e.calls, r)
	d := &distillv1.Distilled{FinalUrl: r.GetUrl(), Status: r.GetStatus(), Markdown: string(r.GetHtml())}
	// A thin page says why it is thin: a challenge when its body says so.
	var reason string
	if len(r.GetHtml()) < 10 {
		reason = "js_app"
		if strings.HasPrefix(string(r.GetHtml()), "cf!") {
			reason = "challenge"
		}
	}
	if r.GetOptions().GetDiagnostics() {
		d.Diagnostics = &distillv1.Diagnostics{
			OutputChars:  int64(len(r.GetHtml())),
			LowContent:   len(r.GetHtml()) < 10,
			UsedHeadless: r.GetRendered(),
		}
		if r.GetOptions().GetExtractActions() {
			d.Diagnostics.ActionCount = int32(strings.Count(string(r.GetHtml()), "<a"))
		}
	}
	scripted := strings.Contains(string(r.GetHtml()), "<script")
	return &internalv1.ExtractResponse{Distilled: d, LowContentReason: reason, Scripted: scripted}, nil
}

type renderFunc func(context.Context, *internalv1.RenderRequest) (*internalv1.RenderResponse, error)

func (f renderFunc) Render(ctx context.Context, r *internalv1.RenderRequest) (*internalv1.RenderResponse, error) {
	return f(ctx, r)
}

func page(body string) fetchFunc {
	return func(_ context.Context, r *internalv1.FetcherServiceFetchRequest) (*internalv1.FetcherServiceFetchResponse, error) {
		return &internalv1.FetcherServiceFetchResponse{FinalUrl: r.GetUrl(), Status: 200, ContentType: "text/html", Body: []byte(body), RedirectHistory: []string{"http://old/"}}, nil
	}
}

func rendered(body string, calls *int) renderFunc {
	return func(_ context.Context, r *internalv1.RenderRequest) (*internalv1.RenderResponse, error) {
		*calls++
		return &internalv1.RenderResponse{FinalUrl: r.GetUrl(), Status: 200, Html: []byte(body)}, nil
	}
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// failing is a renderer whose every render fails, as when no browser can
// be started.
func failing(calls *int) renderFunc {
	return func(context.Context, *internalv1.RenderRequest) (*internalv1.RenderResponse, error) {
		*calls++
		return nil, failure.New(failure.RenderFailed, "no browser")
	}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name         string
		body         string
		renderBody   string
		renderFails  bool
		js           distillv1.JsMode
		diagnostics  bool
		actions      bool
		wantMarkdown string
		wantRenders  int
		wantReason   string
		// wantEscalated is why a render was tried, kept or not.
		wantEscalated string
		wantCode      distillv1.ErrorCode
	}{
		{name: "rich page is not rendered in auto", body: "plenty of text here", renderBody: "rendered and longer text", wantMarkdown: "plenty of text here"},
		{name: "thin page is rendered in auto and the richer render kept", body: "<div/>", renderBody: "rendered app content", wantMarkdown: "rendered app content", wantRenders: 1, wantReason: "js_app", wantEscalated: "js_app"},
		{name: "challenge page rendered with its reason", body: "cf!", renderBody: "the page behind the challenge", wantMarkdown: "the page behind the challenge", wantRenders: 1, wantReason: "challenge", wantEscalated: "challenge"},
		{name: "render no richer than the page is discarded", body: "<div/>", renderBody: "<p/>", wantMarkdown: "<div/>", wantRenders: 1, wantEscalated: "js_app"},
		{name: "failed fallback keeps the fetched page", body: "<div/>", renderFails: true, wantMarkdown: "<div/>", wantRenders: 1, wantEscalated: "js_app"},
		{name: "off never renders", body: "<div/>", renderBody: "rendered app content", js: distillv1.JsMode_JS_MODE_OFF, wantMarkdown: "<div/>"},
		{name: "always renders", body: "plenty of text here", renderBody: "rendered", js: distillv1.JsMode_JS_MODE_ALWAYS, wantMarkdown: "rendered", wantRenders: 1, wantReason: "forced", wantEscalated: "forced"},
		{name: "always fails when rendering fails", body: "plenty of text here", renderFails: true, js: distillv1.JsMode_JS_MODE_ALWAYS, wantRenders: 1, wantCode: failure.RenderFailed},
		{name: "diagnostics kept when asked", body: "plenty of text here", diagnostics: true, wantMarkdown: "plenty of text here"},
		{name: "scripted page without actions is rendered for them", body: "plenty of text <script>", renderBody: "rendered <a>", actions: true, wantMarkdown: "rendered <a>", wantRenders: 1, wantReason: "no_actions", wantEscalated: "no_actions"},
		{name: "render that finds no actions either is discarded", body: "plenty of text <script>", renderBody: "rendered and much longer text", actions: true, wantMarkdown: "plenty of text <script>", wantRenders: 1, wantEscalated: "no_actions"},
		{name: "page with actions is not rendered for them", body: "plenty <a> <script>", renderBody: "rendered <a> <a>", actions: true, wantMarkdown: "plenty <a> <script>"},
		{name: "page without scripts is not rendered for actions", body: "plenty of text here", renderBody: "rendered <a>", actions: true, wantMarkdown: "plenty of text here"},
		{name: "actions not asked for: no render for them", body: "plenty of text <script>", renderBody: "rendered <a>", wantMarkdown: "plenty of text <script>"},
		{name: "off never renders for actions", body: "plenty of text <script>", renderBody: "rendered <a>", actions: true, js: distillv1.JsMode_JS_MODE_OFF, wantMarkdown: "plenty of text <script>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			renders := 0
			var r Renderer = rendered(tt.renderBody, &renders)
			if tt.renderFails {
				r = failing(&renders)
			}
			ex := &charsExtractor{}
			p := New(quiet, page(tt.body), ex, r)
			res, err := p.Run(context.Background(), "http://127.0.0.1/", &distillv1.FetchOptions{Js: tt.js, Diagnostics: tt.diagnostics, ExtractActions: tt.actions})
			if tt.wantCode != distillv1.ErrorCode_ERROR_CODE_UNSPECIFIED {
				if got := failure.CodeOf(err); got != tt.wantCode {
					t.Fatalf("code = %v, want %v (err %v)", got, tt.wantCode, err)
				}
				if renders != tt.wantRenders {
					t.Errorf("renders = %d, want %d", renders, tt.wantRenders)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Distilled.GetMarkdown(); got != tt.wantMarkdown {
				t.Errorf("markdown = %q, want %q", got, tt.wantMarkdown)
			}
			if renders != tt.wantRenders {
				t.Errorf("renders = %d, want %d", renders, tt.wantRenders)
			}
			if res.FallbackReason != tt.wantReason {
				t.Errorf("fallback reason = %q, want %q", res.FallbackReason, tt.wantReason)
			}
			if res.Escalated != tt.wantEscalated || (res.RenderErr != nil) != tt.renderFails {
				t.Errorf("escalated = %q (render error %v), want %q (render fails %v)", res.Escalated, res.RenderErr, tt.wantEscalated, tt.renderFails)
			}
			if got := res.Distilled.GetDiagnostics() != nil; got != tt.diagnostics {
				t.Errorf("diagnostics present = %v, want %v", got, tt.diagnostics)
			}
			if len(res.RedirectHistory) != 1 {
				t.Errorf("redirect history = %v, want the fetcher's", res.RedirectHistory)
			}
			for _, c := range ex.calls {
				if !c.GetOptions().GetDiagnostics() {
					t.Error("extraction ran without diagnostics, so low_content was unknown")
				}
			}
		})
	}
}

func TestRunRefusesInvalidOptions(t *testing.T) {
	p := New(quiet, page("x"), &charsExtractor{}, nil)
	zero := int32(0)
	_, err := p.Run(context.Background(), "http://127.0.0.1/", &distillv1.FetchOptions{TimeoutSecs: &zero})
	if failure.CodeOf(err) != failure.InvalidArgument {
		t.Fatalf("err = %v, want an invalid-options error", err)
	}
}

func TestRunPassesFetchErrorsThrough(t *testing.T) {
	blocked := fetchFunc(func(context.Context, *internalv1.FetcherServiceFetchRequest) (*internalv1.FetcherServiceFetchResponse, error) {
		return nil, failure.New(failure.Blocked, "blocked by network policy: 10.0.0.1")
	})
	p := New(quiet, blocked, &charsExtractor{}, nil)
	_, err := p.Run(context.Background(), "http://10.0.0.1/", nil)
	if failure.CodeOf(err) != failure.Blocked {
		t.Fatalf("err = %v, want Blocked", err)
	}
}

func TestRunPassesTheDeclaredCharsetToTheExtractor(t *testing.T) {
	legacy := fetchFunc(func(_ context.Context, r *internalv1.FetcherServiceFetchRequest) (*internalv1.FetcherServiceFetchResponse, error) {
		return &internalv1.FetcherServiceFetchResponse{FinalUrl: r.GetUrl(), Status: 200, ContentType: "text/html", Charset: "shift_jis", Body: []byte("plenty of text here")}, nil
	})
	ex := &charsExtractor{}
	if _, err := New(quiet, legacy, ex, nil).Run(context.Background(), "http://127.0.0.1/", nil); err != nil {
		t.Fatal(err)
	}
	if got := ex.calls[0].GetContentType(); got != "text/html; charset=shift_jis" {
		t.Fatalf("extractor saw content type %q", got)
	}
}

func TestRenderGetsOnlyTheRenderedURLsCookies(t *testing.T) {
	jar := cookies.New()
	site, _ := url.Parse("http://site.test/app/")
	other, _ := url.Parse("http://other.test/")
	jar.SetCookies(site, []*http.Cookie{{Name: "sid", Value: "s3cret", Path: "/"}, {Name: "scoped", Value: "x", Path: "/elsewhere"}})
	jar.SetCookies(other, []*http.Cookie{{Name: "tracker", Value: "y"}})

	var got []*internalv1.Cookie
	r := renderFunc(func(_ context.Context, r *internalv1.RenderRequest) (*internalv1.RenderResponse, error) {
		got = r.GetCookies()
		return &internalv1.RenderResponse{FinalUrl: r.GetUrl(), Status: 200, Html: []byte("rendered app content")}, nil
	})
	p := New(quiet, page("<div/>"), &charsExtractor{}, r)
	run := func() {
		t.Helper()
		got = nil
		res, err := p.Do(context.Background(), Request{URL: "http://site.test/app/", Jar: jar})
		if err != nil {
			t.Fatal(err)
		}
		if res.FallbackReason != "js_app" {
			t.Fatalf("not rendered: reason %q", res.FallbackReason)
		}
	}

	run()
	if len(got) != 1 || got[0].GetName() != "sid" || got[0].GetValue() != "s3cret" || got[0].GetDomain() != "" || got[0].GetPath() != "/" {
		t.Fatalf("render cookies = %v, want sid alone, host-only", got)
	}

	p = New(quiet, page("<div/>"), &charsExtractor{}, r, WithAnonymousRenders(true))
	run()
	if len(got) != 0 {
		t.Fatalf("with anonymous renders the render got cookies %v", got)
	}
}

func TestPostAnswersAreNeverRendered(t *testing.T) {
	for _, js := range []distillv1.JsMode{distillv1.JsMode_JS_MODE_AUTO, distillv1.JsMode_JS_MODE_ALWAYS} {
		renders := 0
		var sent *internalv1.FetcherServiceFetchRequest
		f := fetchFunc(func(_ context.Context, r *internalv1.FetcherServiceFetchRequest) (*internalv1.FetcherServiceFetchResponse, error) {
			sent = r
			return &internalv1.FetcherServiceFetchResponse{
				FinalUrl: r.GetUrl(), Status: 200, ContentType: "text/html", Body: []byte("<div/>"),
				SetCookies: []*internalv1.JarEntry{{Url: r.GetUrl(), Cookie: &internalv1.Cookie{Name: "sid", Value: "new"}}},
			}, nil
		})
		p := New(quiet, f, &charsExtractor{}, rendered("rendered app content", &renders))
		jar := cookies.New()
		res, err := p.Do(context.Background(), Request{
			URL: "http://site.test/login", Options: &distillv1.FetchOptions{Js: js},
			Method: "POST", Body: []byte("user=a"), BodyContentType: "application/x-www-form-urlencoded", Jar: jar,
		})
		if err != nil {
			t.Fatal(err)
		}
		if renders != 0 || res.FallbackReason != "" || res.Distilled.GetMarkdown() != "<div/>" {
			t.Fatalf("js %v: the answer to a POST was rendered (%d renders, reason %q)", js, renders, res.FallbackReason)
		}
		if sent.GetMethod() != "POST" || string(sent.GetBody()) != "user=a" || !sent.GetUseCookies() {
			t.Fatalf("fetch request = %v", sent)
		}
		u, _ := url.Parse("http://site.test/")
		if cs := jar.Cookies(u); len(cs) != 1 || cs[0].Value != "new" {
			t.Fatalf("the cookie the answer set is not in the jar: %v", cs)
		}
	}
}

// A body the fetcher cut at max_bytes is distilled, and the result says
// so in its diagnostics.
func TestTruncatedBodyIsReported(t *testing.T) {
	cut := func(_ context.Context, r *internalv1.FetcherServiceFetchRequest) (*internalv1.FetcherServiceFetchResponse, error) {
		return &internalv1.FetcherServiceFetchResponse{FinalUrl: r.GetUrl(), Status: 200, ContentType: "text/html", Body: []byte("the first bytes of a long page"), TruncatedBody: true}, nil
	}
	for _, tc := range []struct {
		name string
		f    fetchFunc
		want bool
	}{{"cut", cut, true}, {"whole", page("a page that fit its cap"), false}} {
		t.Run(tc.name, func(t *testing.T) {
			renders := 0
			p := New(quiet, fetchFunc(tc.f), &charsExtractor{}, rendered("x", &renders))
			d, err := p.Distill(t.Context(), "http://example.com/", &distillv1.FetchOptions{Diagnostics: true, Js: distillv1.JsMode_JS_MODE_OFF})
			if err != nil {
				t.Fatal(err)
			}
			if got := d.GetDiagnostics().GetTruncatedBody(); got != tc.want {
				t.Errorf("truncated_body = %v, want %v", got, tc.want)
			}
		})
	}
}

// Browser work renders the page whatever js says, and what it produced
// reaches the Distilled page.
func TestBrowserWorkRendersAndIsKept(t *testing.T) {
	var got *internalv1.RenderRequest
	r := renderFunc(func(_ context.Context, req *internalv1.RenderRequest) (*internalv1.RenderResponse, error) {
		got = req
		n := int32(2)
		return &internalv1.RenderResponse{FinalUrl: req.GetUrl(), Status: 200, Html: []byte("<p>a rendered page, long enough</p>"),
			Screenshot: []byte("png"), Pdf: []byte("%PDF"), StepsRun: &n,
			Network: &distillv1.NetworkCapture{Truncated: true},
			Steps:   &distillv1.StepResults{Items: []*distillv1.StepResult{{Index: 0, Type: "executeJavascript"}}}}, nil
	})
	p := New(quiet, page("<p>a page that needs no browser at all</p>"), &charsExtractor{}, r)
	opts := &distillv1.FetchOptions{Steps: `[{"type":"wait","milliseconds":1}]`, Screenshot: "viewport", Pdf: true, Diagnostics: true}
	d, err := p.Distill(context.Background(), "http://example.com/", opts)
	if err != nil {
		t.Fatal(err)
	}
	if got == nil || got.GetOptions().GetSteps() == "" {
		t.Fatalf("the page was not rendered with its steps: %v", got)
	}
	if string(d.GetScreenshot()) != "png" || string(d.GetPdf()) != "%PDF" || !d.GetNetwork().GetTruncated() ||
		len(d.GetSteps().GetItems()) != 1 || d.GetDiagnostics().GetStepsRun() != 2 {
		t.Fatalf("browser work lost: %v", d)
	}
	if _, err := p.Distill(context.Background(), "http://example.com/", &distillv1.FetchOptions{Pdf: true, Js: distillv1.JsMode_JS_MODE_OFF}); failure.CodeOf(err) != failure.InvalidArgument {
		t.Fatalf("--pdf with --js off: err = %v, want InvalidArgument", err)
	}
}

// KeepBody hands back the bytes the content came from: the page as
// fetched, or the render's DOM when the render was kept; without it the
// result holds no body.
func TestKeepBody(t *testing.T) {
	for _, tt := range []struct {
		name, body, renderBody, wantBody, wantType string
		keep                                       bool
	}{
		{name: "fetched page", body: "plenty of text here", renderBody: "rendered", keep: true, wantBody: "plenty of text here", wantType: "text/html"},
		{name: "kept render", body: "<div/>", renderBody: "rendered app content", keep: true, wantBody: "rendered app content", wantType: "text/html; charset=utf-8"},
		{name: "dropped render", body: "<div/>", renderBody: "<p/>", keep: true, wantBody: "<div/>", wantType: "text/html"},
		{name: "not asked", body: "plenty of text here", renderBody: "rendered"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			renders := 0
			p := New(quiet, page(tt.body), &charsExtractor{}, rendered(tt.renderBody, &renders))
			res, err := p.Do(context.Background(), Request{URL: "http://127.0.0.1/", Options: &distillv1.FetchOptions{}, KeepBody: tt.keep})
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Body) != tt.wantBody || res.ContentType != tt.wantType {
				t.Errorf("body %q of type %q, want %q of type %q", res.Body, res.ContentType, tt.wantBody, tt.wantType)
			}
			if !tt.keep && res.Body != nil {
				t.Errorf("a body came back unasked: %q", res.Body)
			}
			if res.Distilled.Page != nil {
				t.Errorf("Distilled.page came back without keep_page: %q", res.Distilled.Page)
			}
		})
	}
}

// keep_page carries the same bytes inside the Distilled, for a door that
// gets only the Distilled (a batch's or a crawl's pages), and leaves the
// result's body alone.
func TestKeepPage(t *testing.T) {
	for _, tt := range []struct {
		name, body, renderBody, wantBody, wantType string
	}{
		{name: "fetched page", body: "plenty of text here", renderBody: "rendered", wantBody: "plenty of text here", wantType: "text/html"},
		{name: "kept render", body: "<div/>", renderBody: "rendered app content", wantBody: "rendered app content", wantType: "text/html; charset=utf-8"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			renders := 0
			p := New(quiet, page(tt.body), &charsExtractor{}, rendered(tt.renderBody, &renders))
			res, err := p.Do(context.Background(), Request{URL: "http://127.0.0.1/", Options: &distillv1.FetchOptions{KeepPage: true}})
			if err != nil {
				t.Fatal(err)
			}
			if d := res.Distilled; string(d.GetPage()) != tt.wantBody || d.GetPageContentType() != tt.wantType {
				t.Errorf("page %q of type %q, want %q of type %q", d.GetPage(), d.GetPageContentType(), tt.wantBody, tt.wantType)
			}
			if res.Body != nil {
				t.Errorf("keep_page without KeepBody handed back a body too: %q", res.Body)
			}
		})
	}
}

// A page fetched with the caller's headers is read as fetched, however
// thin: a render would load it without them.
func TestHeadersKeepThePageUnrendered(t *testing.T) {
	renders := 0
	p := New(quiet, page("<div/>"), &charsExtractor{}, rendered("rendered app content", &renders))
	res, err := p.Do(context.Background(), Request{URL: "http://127.0.0.1/", Options: &distillv1.FetchOptions{Headers: map[string]string{"Cookie": "a=b"}}, KeepBody: true})
	if err != nil {
		t.Fatal(err)
	}
	if renders != 0 || string(res.Body) != "<div/>" {
		t.Errorf("%d renders, body %q: want the page as fetched", renders, res.Body)
	}
}
