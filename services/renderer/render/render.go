// Package render owns headless Chromium: it renders a page in an isolated
// browser context under the network policy and hands the DOM back for
// extraction.
//
// One Chromium is launched on the first Render and shared; every Render
// gets its own incognito context, destroyed afterwards, so cookies and
// storage never cross requests. Every request the page makes is held by the
// renderer, judged by netpolicy, and then either failed or released to the
// browser's own network stack.
package render

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	"distill.dev/services/platform/netpolicy"
	"distill.dev/services/platform/telemetry"
)

// Defaults of a Renderer.
const (
	DefaultChromium = "/usr/bin/chromium"
	DefaultMaxPages = 4
	// MaxHTMLBytes caps the serialized DOM handed to the extractor.
	MaxHTMLBytes = 16 << 20
)

const (
	// idleQuiet is how long the network must be quiet before a page counts
	// as settled.
	idleQuiet = 500 * time.Millisecond
	// defaultIdleBudget bounds the wait for quiet when js_wait is not given:
	// pages that poll or stream never go quiet.
	defaultIdleBudget = 5 * time.Second
)

// errTimeout is the cause a render's own deadline carries, to tell it from
// a shorter deadline of the caller's.
var errTimeout = errors.New("render timeout")

// Option configures a Renderer.
type Option func(*Renderer)

// WithChromium sets the Chromium binary, overriding DISTILL_CHROMIUM.
func WithChromium(path string) Option {
	return func(r *Renderer) { r.bin = path }
}

// WithMaxPages caps how many pages render at once; n < 1 is ignored.
func WithMaxPages(n int) Option {
	return func(r *Renderer) {
		if n > 0 {
			r.maxPages = n
		}
	}
}

// WithoutSandbox launches Chromium without its own sandbox. Chromium
// needs user namespaces for it, which a locked-down container (non-root, no
// privilege escalation, the default seccomp profile) does not grant; there
// the container is the sandbox. As root, Chromium refuses its sandbox
// anyway, so it is always off.
func WithoutSandbox() Option {
	return func(r *Renderer) { r.noSandbox = true }
}

// Renderer is the RendererService.
type Renderer struct {
	internalv1.UnimplementedRendererServiceServer
	logger   *slog.Logger
	bin      string
	maxPages int
	pages    chan struct{}
	// noSandbox turns Chromium's own sandbox off.
	noSandbox bool
	// resolver and dialAddr are how the egress proxy reaches the network;
	// tests replace them to stand a public name in for a loopback server.
	resolver *net.Resolver
	dialAddr func(ctx context.Context, network, addr string) (net.Conn, error)

	mu     sync.Mutex
	inst   *instance
	closed bool
	// kills tracks browsers being shut down after a failure, so Close can
	// wait for them.
	kills sync.WaitGroup
}

// New returns a Renderer. The browser is launched on the first Render, from
// DISTILL_CHROMIUM when set, else /usr/bin/chromium.
func New(logger *slog.Logger, opts ...Option) *Renderer {
	r := &Renderer{logger: logger, bin: DefaultChromium, maxPages: DefaultMaxPages, resolver: net.DefaultResolver}
	if env := os.Getenv("DISTILL_CHROMIUM"); env != "" {
		r.bin = env
	}
	for _, o := range opts {
		o(r)
	}
	r.pages = make(chan struct{}, r.maxPages)
	return r
}

// Ready reports whether the renderer can render: it is open and its
// Chromium binary is there. A browser that crashed is no reason for
// unreadiness; the next render launches another.
func (r *Renderer) Ready(context.Context) error {
	r.mu.Lock()
	closed := r.closed
	r.mu.Unlock()
	if closed {
		return errors.New("renderer is closed")
	}
	if _, err := os.Stat(r.bin); err != nil {
		return fmt.Errorf("chromium not found at %s", r.bin)
	}
	return nil
}

// Close kills the browser and removes its profile. Renders after Close fail.
func (r *Renderer) Close() error {
	r.mu.Lock()
	r.closed = true
	inst := r.inst
	r.inst = nil
	r.mu.Unlock()
	if inst != nil {
		inst.kill()
	}
	r.kills.Wait()
	return nil
}

// Render renders req.Url headless. It is both the gRPC method and the
// in-process entry point.
func (r *Renderer) Render(ctx context.Context, req *internalv1.RenderRequest) (_ *internalv1.RenderResponse, err error) {
	start := time.Now()
	ctx, done := telemetry.StartRequest(ctx, "distill.render", "renderer", "Render", telemetry.URLAttributes(req.GetUrl())...)
	defer func() {
		telemetry.RecordRender(ctx, time.Since(start), err)
		done(err)
	}()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	opts := req.GetOptions()
	timeout := fetchopts.Timeout(opts)
	ctx, cancel := context.WithTimeoutCause(ctx, timeout, errTimeout)
	defer cancel()
	target := req.GetUrl()

	g := newGuard(netpolicy.Policy{AllowLoopback: opts.GetAllowLocal()}, r.resolver)
	if err := g.check(ctx, target); err != nil {
		return nil, classify(ctx, target, timeout, err)
	}

	select {
	case r.pages <- struct{}{}:
		defer func() { <-r.pages }()
	case <-ctx.Done():
		return nil, classify(ctx, target, timeout, ctx.Err())
	}

	inst, err := r.browser(ctx)
	if err != nil {
		return nil, classify(ctx, target, timeout, err)
	}
	res, err := r.render(ctx, inst, g, req)
	if err == nil {
		return res, nil
	}
	// Whatever went wrong, a browser that no longer answers is replaced:
	// the next render must not inherit a crash or a hang.
	if code := failure.CodeOf(err); code != failure.Blocked && code != failure.InvalidURL && !inst.alive() {
		r.drop(inst)
		return nil, failure.Wrap(failure.RenderFailed, err, "render %s: chromium crashed or stopped answering; it is restarted for the next render", target)
	}
	return nil, classify(ctx, target, timeout, err)
}

// browser returns the running browser, launching one if there is none or
// the last one died.
func (r *Renderer) browser(ctx context.Context) (*instance, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, failure.New(failure.RenderFailed, "renderer is closed")
	}
	if r.inst != nil {
		select {
		case <-r.inst.exited:
			r.inst = nil
		default:
			return r.inst, nil
		}
	}
	inst, err := launch(ctx, r.bin, r.noSandbox || os.Geteuid() == 0)
	if err != nil {
		return nil, err
	}
	r.logger.Info("chromium launched", "bin", r.bin, "pid", inst.launcher.PID())
	r.inst = inst
	return inst, nil
}

// drop forgets a dead browser so the next Render launches a new one.
func (r *Renderer) drop(inst *instance) {
	r.mu.Lock()
	if r.inst == inst {
		r.inst = nil
	}
	r.mu.Unlock()
	r.logger.Warn("chromium crashed or stopped answering; relaunching on next render", "pid", inst.launcher.PID())
	r.kills.Go(inst.abort)
}

func (r *Renderer) render(ctx context.Context, inst *instance, g *guard, req *internalv1.RenderRequest) (*internalv1.RenderResponse, error) {
	opts := req.GetOptions()
	target := req.GetUrl()

	// Deferred in this order, undone in reverse: the page stops, its
	// context and cookies are destroyed, the page's connections are cut,
	// and the render's CDP connection closes.
	eg, err := startEgress(r.logger, g.policy, r.resolver, r.dialAddr)
	if err != nil {
		return nil, err
	}
	defer eg.close()
	conn, err := inst.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.close()

	bc, err := proto.TargetCreateBrowserContext{
		// The browser reaches the network only through the egress proxy.
		// "<-loopback>" removes Chromium's implicit bypass for localhost, so
		// loopback requests are judged like any other.
		ProxyServer:     eg.proxyURL(),
		ProxyBypassList: "<-loopback>",
		// Should this process die mid-render, Chromium drops the context.
		DisposeOnDetach: true,
	}.Call(conn.browser)
	if err != nil {
		return nil, fmt.Errorf("create browser context: %w", err)
	}
	defer inst.dispose(bc.BrowserContextID)

	created, err := proto.TargetCreateTarget{URL: "about:blank", BrowserContextID: bc.BrowserContextID}.Call(conn.browser)
	if err != nil {
		return nil, fmt.Errorf("open page: %w", err)
	}
	page, err := conn.browser.PageFromTarget(created.TargetID)
	if err != nil {
		return nil, fmt.Errorf("attach to page: %w", err)
	}
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	page = page.Context(pctx)

	// Subscribe before anything else enables the Network domain: rod
	// disables a domain when the subscription that enabled it ends, and this
	// one lives as long as the page.
	var (
		mu     sync.Mutex
		status int
	)
	go page.EachEvent(func(e *proto.NetworkResponseReceived) {
		if e.Type == proto.NetworkResourceTypeDocument && e.FrameID == page.FrameID {
			mu.Lock()
			status = e.Response.Status
			mu.Unlock()
		}
	})()

	if err := lockDown(page); err != nil {
		return nil, err
	}
	if err := setCookies(page, target, r.cookies(req)); err != nil {
		return nil, err
	}

	var blockedNav error
	router := page.HijackRequests()
	err = router.Add("*", "", func(h *rod.Hijack) {
		u := h.Request.URL().String()
		if err := g.check(ctx, u); err != nil {
			if h.Request.IsNavigation() {
				mu.Lock()
				if blockedNav == nil {
					blockedNav = err
				}
				mu.Unlock()
			}
			r.logger.Debug("render request refused", "url", u, "err", err.Error())
			h.Response.Fail(proto.NetworkErrorReasonBlockedByClient)
			return
		}
		// Released, not fetched by us: the browser's own stack keeps its
		// caching, HTTP/2 and cookie handling, and its egress proxy judges
		// the connection.
		h.ContinueRequest(&proto.FetchContinueRequest{})
	})
	if err != nil {
		return nil, fmt.Errorf("hijack requests: %w", err)
	}
	go router.Run()
	defer func() { _ = router.Stop() }()

	idleCtx, idleCancel := context.WithCancel(pctx)
	defer idleCancel()
	waitIdle := page.Context(idleCtx).WaitRequestIdle(idleQuiet, nil, nil, nil)

	if err := page.Navigate(target); err != nil {
		mu.Lock()
		blocked := blockedNav
		mu.Unlock()
		if blocked != nil {
			return nil, failure.Wrap(failure.Blocked, blocked, "render %s", target)
		}
		if ne, ok := errors.AsType[*rod.NavigationError](err); ok {
			if refused := eg.refusal(); refused != nil {
				return nil, failure.Wrap(failure.Blocked, refused, "render %s", target)
			}
			return nil, failure.Wrap(failure.Network, ne, "render %s", target)
		}
		return nil, fmt.Errorf("navigate: %w", err)
	}
	if err := page.WaitLoad(); err != nil {
		return nil, fmt.Errorf("wait for load: %w", err)
	}
	// A selector says when the page is ready: wait for it alone, and for
	// network quiet too only when js_wait asks for it. Without one, wait
	// for quiet within js_wait or the default budget.
	sel := opts.GetJsWaitFor()
	if sel != "" {
		if _, err := page.Element(sel); err != nil {
			if ctx.Err() != nil {
				return nil, failure.Wrap(failure.Timeout, err, "js_wait_for selector %q did not appear within %s", sel, fetchopts.Timeout(opts))
			}
			return nil, fmt.Errorf("js_wait_for %q: %w", sel, err)
		}
	}
	if budget := fetchopts.JSWait(opts); sel == "" || budget > 0 {
		if budget <= 0 {
			budget = defaultIdleBudget
		}
		timer := time.AfterFunc(budget, idleCancel)
		waitIdle()
		timer.Stop()
	}

	info, err := page.Info()
	if err != nil {
		return nil, fmt.Errorf("page info: %w", err)
	}
	html, err := serialize(page)
	if err != nil {
		if fe, ok := errors.AsType[*failure.Error](err); ok {
			return nil, failure.Wrap(fe.Code, fe, "render %s", target)
		}
		return nil, err
	}
	mu.Lock()
	code := status
	mu.Unlock()
	if code == 0 {
		code = 200
	}
	return &internalv1.RenderResponse{FinalUrl: info.URL, Status: int32(code), Html: []byte(html)}, nil
}

// serializeScript returns the DOM as HTML, or only its length when that
// alone is over the cap (UTF-8 takes at least as many bytes as UTF-16 code
// units), so a huge DOM is never copied out of the browser.
const serializeScript = `(cap) => {
	const dt = document.doctype ? new XMLSerializer().serializeToString(document.doctype) : '';
	const html = dt + document.documentElement.outerHTML;
	return html.length > cap ? {units: html.length} : {html};
}`

func serialize(page *rod.Page) (string, error) {
	res, err := page.Eval(serializeScript, MaxHTMLBytes)
	if err != nil {
		return "", fmt.Errorf("serialize DOM: %w", err)
	}
	var out struct {
		HTML  string `json:"html"`
		Units int    `json:"units"`
	}
	if err := res.Value.Unmarshal(&out); err != nil {
		return "", fmt.Errorf("serialize DOM: %w", err)
	}
	if out.Units > 0 {
		return "", failure.New(failure.TooLarge, "rendered DOM is over %d characters, over the %d byte limit", out.Units, MaxHTMLBytes)
	}
	if len(out.HTML) > MaxHTMLBytes {
		return "", failure.New(failure.TooLarge, "rendered DOM is %d bytes, over the %d byte limit", len(out.HTML), MaxHTMLBytes)
	}
	return out.HTML, nil
}

// cookies are the request's cookies unless the host turned cookie carrying
// off.
func (r *Renderer) cookies(req *internalv1.RenderRequest) []*internalv1.Cookie {
	if fetchopts.NoFallbackCookies() {
		return nil
	}
	return req.GetCookies()
}

// lockDownScript removes what the egress proxy cannot judge or the policy
// refuses outright: service workers, which outlive a page by design, and
// WebTransport and WebRTC, which speak UDP (the launch flags also keep
// WebRTC off any UDP path that bypasses the proxy).
const lockDownScript = `(() => {
	for (const [o, k] of [[Navigator.prototype, 'serviceWorker'],
		[window, 'WebTransport'], [window, 'RTCPeerConnection'], [window, 'webkitRTCPeerConnection']]) {
		try { delete o[k]; } catch (e) {}
	}
})()`

func lockDown(page *rod.Page) error {
	if err := (proto.NetworkSetBypassServiceWorker{Bypass: true}).Call(page); err != nil {
		return fmt.Errorf("bypass service workers: %w", err)
	}
	if _, err := page.EvalOnNewDocument(lockDownScript); err != nil {
		return fmt.Errorf("install page lock-down: %w", err)
	}
	return nil
}

func setCookies(page *rod.Page, target string, cookies []*internalv1.Cookie) error {
	if len(cookies) == 0 {
		return nil
	}
	params := make([]*proto.NetworkCookieParam, 0, len(cookies))
	for _, c := range cookies {
		p := &proto.NetworkCookieParam{
			Name: c.GetName(), Value: c.GetValue(), Domain: c.GetDomain(), Path: c.GetPath(),
			Secure: c.GetSecure(), HTTPOnly: c.GetHttpOnly(),
		}
		if p.Domain == "" {
			p.URL = target
		}
		if c.GetExpires() > 0 {
			p.Expires = proto.TimeSinceEpoch(c.GetExpires())
		}
		params = append(params, p)
	}
	if err := page.SetCookies(params); err != nil {
		return fmt.Errorf("set cookies: %w", err)
	}
	return nil
}

// classify turns whatever went wrong into a *failure.Error. The context is
// checked first: once the render's time is up, whatever the browser says is
// a consequence.
func classify(ctx context.Context, target string, timeout time.Duration, err error) error {
	if fe, ok := errors.AsType[*failure.Error](err); ok {
		return fe
	}
	if be, ok := errors.AsType[*netpolicy.BlockedError](err); ok {
		return failure.Wrap(failure.Blocked, be, "render %s", target)
	}
	if ie, ok := errors.AsType[*netpolicy.InvalidURLError](err); ok {
		return failure.Wrap(failure.InvalidURL, ie, "render %s", target)
	}
	switch ctxErr := ctx.Err(); {
	case errors.Is(ctxErr, context.DeadlineExceeded):
		if errors.Is(context.Cause(ctx), errTimeout) {
			return failure.Wrap(failure.Timeout, ctxErr, "render %s: not rendered within the %s timeout", target, timeout)
		}
		return failure.Wrap(failure.Timeout, ctxErr, "render %s: caller's deadline passed", target)
	case errors.Is(ctxErr, context.Canceled):
		return failure.Wrap(failure.Canceled, ctxErr, "render %s: canceled", target)
	}
	if _, ok := errors.AsType[*net.DNSError](err); ok {
		return failure.Wrap(failure.Network, err, "render %s", target)
	}
	return failure.Wrap(failure.RenderFailed, err, "render %s", target)
}
