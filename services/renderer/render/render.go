// Package render owns headless Chromium: it renders a page in an isolated
// browser context under the network policy and hands the DOM back for
// extraction.
//
// One Chromium is launched on the first Render and shared; every Render
// gets its own incognito context, destroyed afterwards, so cookies and
// storage never cross requests. Every request the page makes is held by the
// renderer, judged by netpolicy, and then either failed or released to the
// browser's own network stack.
//
// A render is the list of phases its request's options select (phases):
// open, guard, cookies, viewport, capture, load, the steps, snapshot,
// screenshot, PDF, MHTML and what is reported of them. A browser option
// is a phase of its own.
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

	rodproto "github.com/go-rod/rod/lib/proto"

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

// WithChromium sets the Chromium binary; without it, DefaultChromium.
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

// WithoutCookies renders every page anonymously: the cookies a request
// carries, a session's for a page behind a login, never reach the browser.
func WithoutCookies() Option {
	return func(r *Renderer) { r.noCookies = true }
}

// WithoutSandbox launches Chromium without its own sandbox. Chromium
// needs user namespaces for it, which a locked-down container (non-root, no
// privilege escalation, the default seccomp profile) does not grant; there
// the container is the sandbox. As root, Chromium refuses its sandbox
// anyway, so it is always off.
func WithoutSandbox() Option {
	return func(r *Renderer) { r.noSandbox = true }
}

// WithAllowLocal lets requests ask for loopback (options.allow_local).
// It is the operator's to give: without it a request that asks is
// refused, so whoever can reach the renderer cannot aim the browser at
// the machine's own services.
func WithAllowLocal(allow bool) Option {
	return func(r *Renderer) { r.allowLocal = allow }
}

// WithOwn makes the process's own listening addresses unreachable to
// every render, loopback allowed or not; the renderer adds its own proxies
// to it.
func WithOwn(own *netpolicy.Own) Option {
	return func(r *Renderer) { r.own = own }
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
	// noCookies drops the cookies requests carry.
	noCookies bool
	// allowLocal is the operator's permission for allow_local; own the
	// process's listeners, never reachable.
	allowLocal bool
	own        *netpolicy.Own
	// resolver and dialAddr are how the egress proxy reaches the network;
	// tests replace them to stand a public name in for a loopback server.
	resolver *net.Resolver
	dialAddr func(ctx context.Context, network, addr string) (net.Conn, error)

	mu     sync.Mutex
	inst   *instance
	closed bool
	// unlistSink takes inst's proxy sink out of own.
	unlistSink func()
	// kills tracks browsers being shut down after a failure, so Close can
	// wait for them.
	kills sync.WaitGroup
}

// New returns a Renderer. The browser is launched on the first Render.
func New(logger *slog.Logger, opts ...Option) *Renderer {
	r := &Renderer{logger: logger, bin: DefaultChromium, maxPages: DefaultMaxPages, resolver: net.DefaultResolver}
	for _, o := range opts {
		o(r)
	}
	if r.own == nil {
		// Its own proxies are refused to its renders even when nobody
		// shares the set.
		r.own = netpolicy.NewOwn()
	}
	r.pages = make(chan struct{}, r.maxPages)
	r.unlistSink = func() {}
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
	r.unlistSink()
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
	if err := fetchopts.Validate(opts); err != nil {
		return nil, failure.Wrap(failure.InvalidArgument, err, "invalid options")
	}
	timeout := fetchopts.Timeout(opts)
	// Waiting for a page slot and for a browser to launch has the page's
	// time and launchBudget more: a cold or relaunched Chromium on a busy
	// machine must not cost the page its own time, which starts once it
	// has a browser (render.go's render), the steps' budget after it.
	caller := ctx
	ctx, cancel := context.WithTimeoutCause(ctx, timeout+launchBudget, errTimeout)
	defer cancel()
	target := req.GetUrl()

	if opts.GetAllowLocal() && !r.allowLocal {
		return nil, failure.AllowLocalRefused()
	}
	// The host allowlists ctx carries reach the guard and, through it, the
	// render's egress proxy: every request the page makes passes them.
	g := newGuard(netpolicy.Policy{AllowLoopback: opts.GetAllowLocal(), Own: r.own, Allowlists: netpolicy.Allowlists(ctx)}, r.resolver)
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
	ctx, cancelPage := context.WithTimeoutCause(caller, timeout+fetchopts.StepsBudget(opts), errTimeout)
	defer cancelPage()
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

// launchBudget is how long a render may wait for a page slot and a
// browser's launch beyond its own timeout.
const launchBudget = 30 * time.Second

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
			r.unlistSink()
		default:
			return r.inst, nil
		}
	}
	inst, err := launch(ctx, r.logger, r.bin, r.noSandbox || os.Geteuid() == 0)
	if err != nil {
		return nil, err
	}
	r.logger.Info("chromium launched", "bin", r.bin, "pid", inst.pid)
	r.inst = inst
	r.unlistSink = r.own.Add(inst.sink.Addr(), "browser proxy sink")
	return inst, nil
}

// drop forgets a dead browser so the next Render launches a new one.
func (r *Renderer) drop(inst *instance) {
	r.mu.Lock()
	if r.inst == inst {
		r.inst = nil
		r.unlistSink()
	}
	r.mu.Unlock()
	r.logger.Warn("chromium crashed or stopped answering; relaunching on next render", "pid", inst.pid)
	r.kills.Go(inst.abort)
}

// render drives one page through the phases its request selects (see
// phases), and then takes down, in reverse, what they opened.
func (r *Renderer) render(ctx context.Context, inst *instance, g *guard, req *internalv1.RenderRequest) (*internalv1.RenderResponse, error) {
	j := r.newRenderJob(inst, g, req)
	defer j.end()
	for _, p := range j.plan() {
		if err := p.run(j, ctx); errors.Is(err, errAnswered) {
			break
		} else if err != nil {
			return nil, err
		}
	}
	return j.res, nil
}

// blockTypes are the resource types the render skips for options.block.
// Stylesheets are never among them: the layout, and with it what is
// visible and clickable, depends on them.
func blockTypes(kinds []string) []rodproto.NetworkResourceType {
	var out []rodproto.NetworkResourceType
	for _, k := range kinds {
		switch k {
		case "images":
			out = append(out, rodproto.NetworkResourceTypeImage)
		case "fonts":
			out = append(out, rodproto.NetworkResourceTypeFont)
		case "media":
			out = append(out, rodproto.NetworkResourceTypeMedia)
		}
	}
	return out
}

// cookiesAfter are the render's cookies once its steps ran, for the
// session that sent them: a step may have logged in. None when the
// renderer renders anonymously.
func (r *Renderer) cookiesAfter(t *tab) ([]*internalv1.Cookie, error) {
	if r.noCookies {
		return nil, nil
	}
	res, err := rodproto.StorageGetCookies{BrowserContextID: t.context}.Call(t.browser)
	if err != nil {
		return nil, fmt.Errorf("read cookies: %w", err)
	}
	out := make([]*internalv1.Cookie, 0, len(res.Cookies))
	for _, c := range res.Cookies {
		ck := &internalv1.Cookie{Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path, Secure: c.Secure, HttpOnly: c.HTTPOnly}
		if !c.Session {
			ck.Expires = int64(c.Expires)
		}
		out = append(out, ck)
	}
	return out, nil
}

// cookies are the request's cookies unless the renderer renders without.
func (r *Renderer) cookies(req *internalv1.RenderRequest) []*internalv1.Cookie {
	if r.noCookies {
		return nil
	}
	return req.GetCookies()
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
