package render

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/cdp"
	"github.com/go-rod/rod/lib/proto"

	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/netpolicy"
)

// tab is one render's page with everything opened for it alone: an egress
// proxy, a CDP connection, a browser context and a target. What its
// listeners learn while the page loads is kept under mu.
type tab struct {
	page   *rod.Page
	egress *egress
	// browser, context and target name the page to the browser, for what
	// is asked of the browser about it (its popups).
	browser *rod.Browser
	context proto.BrowserBrowserContextID
	target  proto.TargetTargetID
	// block is the resource types the render skips (options.block);
	// blocked counts the requests it failed for it.
	block   []proto.NetworkResourceType
	blocked atomic.Int32
	// holdUnsafe, once the steps of a request with withhold_unsafe begin,
	// fails every request other than GET, HEAD or OPTIONS, and withheld
	// records the first, with current, the step running then.
	holdUnsafe atomic.Bool
	current    atomic.Pointer[stepRef]
	// undo takes down what openPage opened, last opened first.
	undo []func()

	// leave ends everything the page is waited for, once its main frame
	// has given up its content for an error page.
	leave context.CancelCauseFunc

	mu sync.Mutex
	// status is the main document's HTTP status, 0 until it answers.
	status int
	// refusedDocs are the documents the guard refused, by URL, and
	// blockedNav the first of them: they name why a navigation failed
	// better than the browser's error does.
	refusedDocs map[string]error
	blockedNav  error
	// mainRefused is the first document the guard refused the main frame,
	// load or later: a step that navigated there failed.
	mainRefused error
	// unreachable is the URL the main frame failed to load, once it shows
	// Chromium's error page in place of a document.
	unreachable string
	withheld    *distillv1.WithheldRequest
}

// stepRef names the step running, for what it caused.
type stepRef struct {
	index         int
	typ, selector string
}

// errLeft is why a page's waits end when its main frame fails to load.
var errLeft = errors.New("the page's main frame failed to load")

// openPage opens a blank page in a browser context of its own, which
// reaches the network only through an egress proxy of its own judging with
// policy. Whatever fails on the way, what was opened is taken down again.
func (r *Renderer) openPage(ctx context.Context, inst *instance, policy netpolicy.Policy) (_ *tab, err error) {
	t := &tab{refusedDocs: map[string]error{}}
	defer func() {
		if err != nil {
			t.close()
		}
	}()

	eg, err := startEgress(r.logger, policy, r.resolver, r.dialAddr)
	if err != nil {
		return nil, err
	}
	t.egress = eg
	t.onClose(eg.close)
	conn, err := inst.connect(ctx)
	if err != nil {
		return nil, err
	}
	t.onClose(conn.close)

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
	t.onClose(func() { inst.dispose(bc.BrowserContextID) })

	created, err := proto.TargetCreateTarget{URL: "about:blank", BrowserContextID: bc.BrowserContextID}.Call(conn.browser)
	if err != nil {
		return nil, fmt.Errorf("open page: %w", err)
	}
	t.browser, t.context, t.target = conn.browser, bc.BrowserContextID, created.TargetID
	page, err := conn.browser.PageFromTarget(created.TargetID)
	if err != nil {
		return nil, fmt.Errorf("attach to page: %w", err)
	}
	pctx, stop := context.WithCancelCause(ctx)
	t.onClose(func() { stop(nil) })
	t.leave = stop
	t.page = page.Context(pctx)
	return t, nil
}

func (t *tab) onClose(f func()) { t.undo = append(t.undo, f) }

// close takes the tab down in reverse: the page stops, its context and
// cookies are destroyed, the render's CDP connection closes, and the
// egress proxy cuts the page's connections.
func (t *tab) close() {
	for i := len(t.undo) - 1; i >= 0; i-- {
		t.undo[i]()
	}
}

// guardPage puts the page under the policy before it loads anything: it
// listens for what the render reports (the main document's status, a
// refused navigation), answers the page's dialogs, locks down what the
// egress proxy cannot judge, and holds every request the page makes until
// the guard has judged it. The returned func stops holding requests.
func (r *Renderer) guardPage(ctx context.Context, t *tab, g *guard) (stop func(), err error) {
	page := t.page
	// Subscribe before anything else enables the Network domain: rod
	// disables a domain when the subscription that enabled it ends, and this
	// one lives as long as the page.
	go page.EachEvent(func(e *proto.NetworkResponseReceived) {
		if e.Type == proto.NetworkResourceTypeDocument && e.FrameID == page.FrameID {
			t.mu.Lock()
			t.status = e.Response.Status
			t.mu.Unlock()
		}
	}, func(e *proto.PageFrameNavigated) {
		// The main frame committed Chromium's error page: whenever the
		// page went, at load or later by itself, what it shows now is not
		// its content, and nothing the render waits for will come.
		if e.Frame.ParentID == "" && e.Frame.UnreachableURL != "" {
			t.mu.Lock()
			if t.unreachable == "" {
				t.unreachable = e.Frame.UnreachableURL
			}
			t.mu.Unlock()
			t.leave(errLeft)
		}
	})()

	go page.EachEvent(func(e *proto.PageJavascriptDialogOpening) {
		answerDialog(page, e)
	})()

	if err := lockDown(page); err != nil {
		return nil, err
	}

	// Subscribing enables the Fetch domain for every request, and ending
	// the subscription disables it.
	held, release := context.WithCancel(page.GetContext())
	wait := page.Context(held).EachEvent(func(e *proto.FetchRequestPaused) {
		go r.judge(ctx, t, g, e)
	})
	go wait()
	return func() {
		release()
		_ = proto.FetchDisable{}.Call(page)
	}, nil
}

// judge releases a held request or fails it. A released request is not
// fetched by us: the browser's own stack keeps its caching, HTTP/2 and
// cookie handling, and the render's egress proxy judges the connection.
func (r *Renderer) judge(ctx context.Context, t *tab, g *guard, e *proto.FetchRequestPaused) {
	u := e.Request.URL
	fail := proto.FetchFailRequest{RequestID: e.RequestID, ErrorReason: proto.NetworkErrorReasonBlockedByClient}
	if chromiumsOwn(e) {
		r.logger.Debug("chromium request in a render refused", "url", u)
		_ = fail.Call(t.page)
		return
	}
	if t.holdUnsafe.Load() && unsafeMethod(e.Request.Method) {
		t.withhold(e)
		_ = fail.Call(t.page)
		return
	}
	if slices.Contains(t.block, e.ResourceType) {
		t.blocked.Add(1)
		_ = fail.Call(t.page)
		return
	}
	check := g.check
	if assetTypes[e.ResourceType] {
		check = g.checkAsset
	}
	if err := check(ctx, u); err != nil {
		if e.ResourceType == proto.NetworkResourceTypeDocument {
			t.mu.Lock()
			if t.blockedNav == nil {
				t.blockedNav = err
			}
			t.refusedDocs[u] = err
			if e.FrameID == t.page.FrameID && t.mainRefused == nil {
				t.mainRefused = err
			}
			t.mu.Unlock()
		}
		r.logger.Debug("render request refused", "url", u, "err", err.Error())
		_ = fail.Call(t.page)
		return
	}
	_ = proto.FetchContinueRequest{RequestID: e.RequestID}.Call(t.page)
}

// assetTypes are the requests a host's approved asset origins (a page's
// CDN) may answer: what a page is built from, never a page, a frame, a
// fetch or an XHR.
var assetTypes = map[proto.NetworkResourceType]bool{
	proto.NetworkResourceTypeImage: true, proto.NetworkResourceTypeStylesheet: true, proto.NetworkResourceTypeScript: true,
	proto.NetworkResourceTypeFont: true, proto.NetworkResourceTypeMedia: true,
}

// unsafeMethod reports whether a request may change something on the
// server: any method but GET, HEAD and OPTIONS (a CORS preflight, which
// only asks).
func unsafeMethod(m string) bool {
	switch strings.ToUpper(m) {
	case "GET", "HEAD", "OPTIONS":
		return false
	}
	return true
}

// maxWithheldBody bounds the body a withheld request reports.
const maxWithheldBody = 4 << 10

// withhold records the first request withheld, and the step that caused
// it.
func (t *tab) withhold(e *proto.FetchRequestPaused) {
	w := &distillv1.WithheldRequest{Method: e.Request.Method, Url: e.Request.URL}
	if ref := t.current.Load(); ref != nil {
		w.StepIndex, w.StepType, w.Selector = int32(ref.index), ref.typ, ref.selector
	}
	if e.Request.HasPostData {
		body := e.Request.PostData
		if len(body) > maxWithheldBody {
			body = body[:maxWithheldBody]
		}
		w.Body = &body
	}
	t.mu.Lock()
	if t.withheld == nil {
		t.withheld = w
	}
	t.mu.Unlock()
}

// sameWindowScript keeps a form that posts to another window in this one:
// the request of a new window is not the page's to hold, and would be sent
// before the window could be closed.
const sameWindowScript = `() => {
	const here = f => { if (f && f.target && f.target !== '_self' && (f.method || '').toLowerCase() !== 'get') f.target = '_self'; };
	addEventListener('submit', e => here(e.target), true);
	const submit = HTMLFormElement.prototype.submit;
	HTMLFormElement.prototype.submit = function () { here(this); return submit.call(this); };
	const requestSubmit = HTMLFormElement.prototype.requestSubmit;
	if (requestSubmit) HTMLFormElement.prototype.requestSubmit = function (b) { here(this); return requestSubmit.call(this, b); };
}`

// holdUnsafeRequests starts withholding the requests other than GET the
// page sends, keeping its forms' posts in its own window where they are
// held.
func (t *tab) holdUnsafeRequests() error {
	if _, err := t.page.EvalOnNewDocument("(" + sameWindowScript + ")()"); err != nil {
		return fmt.Errorf("install same-window forms: %w", err)
	}
	if _, err := t.page.Eval(sameWindowScript); err != nil {
		return fmt.Errorf("install same-window forms: %w", err)
	}
	t.holdUnsafe.Store(true)
	return nil
}

// withheldRequest is the request withhold recorded, or nil.
func (t *tab) withheldRequest() *distillv1.WithheldRequest {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.withheld
}

// chromiumsOwn reports whether a request is Chromium's own, made in the
// page's name rather than by the page: the favicon it fetches for every
// page it shows (and any other image it downloads for itself). Those have
// no resource type of the page's (an <img>, a CSS image, a preload are all
// Image) yet ask for an image. Nothing but the page's own requests leaves
// a render.
func chromiumsOwn(e *proto.FetchRequestPaused) bool {
	return e.ResourceType == proto.NetworkResourceTypeOther &&
		strings.HasPrefix(e.Request.Headers["Accept"].Str(), "image/")
}

// answerDialog closes a dialog as soon as it opens: until it is closed
// the page's scripts, its load and every evaluation wait, and nobody is
// there to close it. alert has only one answer and beforeunload is let
// leave, so the page goes where it was going; confirm and prompt are
// cancelled, the answer least likely to make the page do something.
func answerDialog(page *rod.Page, e *proto.PageJavascriptDialogOpening) {
	accept := e.Type == proto.PageDialogTypeAlert || e.Type == proto.PageDialogTypeBeforeunload
	_ = proto.PageHandleJavaScriptDialog{Accept: accept}.Call(page)
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

// setCookies gives the page a session's cookies. A cookie without a domain
// belongs to the target's host, as it would had the target set it.
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

// idleWatch is a wait for the page's network to go quiet. It starts
// counting before navigation, or it would miss the requests the load
// makes; cancel ends the wait, at its budget or with the render.
type idleWatch struct {
	wait   func()
	cancel context.CancelFunc
}

func (t *tab) watchIdle() idleWatch {
	ctx, cancel := context.WithCancel(t.page.GetContext())
	return idleWatch{wait: t.page.Context(ctx).WaitRequestIdle(idleQuiet, nil, nil, nil), cancel: cancel}
}

// navigate loads target up to its load event. A navigation that fails
// because the guard or the egress proxy refused it is Blocked, naming the
// refusal, rather than the network error the browser reports for it.
func (t *tab) navigate(target string) error { return t.navigateIn(t.page, target) }

// navigateIn navigates with page, the tab's page under a context of the
// caller's.
func (t *tab) navigateIn(page *rod.Page, target string) error {
	if err := page.Navigate(target); err != nil {
		t.mu.Lock()
		blocked := t.blockedNav
		t.mu.Unlock()
		if blocked != nil {
			return failure.Wrap(failure.Blocked, blocked, "render %s", target)
		}
		if ne, ok := errors.AsType[*rod.NavigationError](err); ok {
			if refused := t.egress.refusal(); refused != nil {
				return failure.Wrap(failure.Blocked, refused, "render %s", target)
			}
			return failure.Wrap(failure.Network, ne, "render %s", target)
		}
		// The page may have failed to load before Chromium answered.
		if left := t.left(target); left != nil {
			return left
		}
		return fmt.Errorf("navigate: %w", err)
	}
	if err := waitLoad(page); err != nil {
		if left := t.left(target); left != nil {
			return left
		}
		return fmt.Errorf("wait for load: %w", err)
	}
	return t.left(target)
}

// loadRetries is how many documents waitLoad follows when the one it
// waits for goes away before its load event.
const loadRetries = 5

// waitLoad waits for the page's load event. A page that leaves before it
// (a refresh, a script's location) takes the wait with it: the wait then
// follows the document it went to, up to loadRetries of them, so that a
// refused one is seen committed as Chromium's error page (which ends the
// page's waits) rather than reported as a lost wait.
func waitLoad(page *rod.Page) error {
	err := page.WaitLoad()
	for range loadRetries {
		if !documentLeft(err) {
			break
		}
		err = page.WaitLoad()
	}
	return err
}

// documentLeft reports whether err says the document a call ran in was
// replaced while it ran.
func documentLeft(err error) bool {
	ce, ok := errors.AsType[*cdp.Error](err)
	return ok && (errors.Is(err, cdp.ErrCtxDestroyed) || strings.Contains(ce.Message, "navigated or closed"))
}

// left returns, once the main frame shows an error page in place of a
// document, why it failed to load: Blocked when the guard refused that
// document (or, failing that, any document or connection of the page),
// Network otherwise. It returns nil while the page shows its own content.
func (t *tab) left(target string) error {
	t.mu.Lock()
	unreachable := t.unreachable
	refused, exact := t.refusedDocs[unreachable]
	if !exact {
		refused = t.blockedNav
	}
	t.mu.Unlock()
	if unreachable == "" {
		return nil
	}
	if refused == nil {
		refused = t.egress.refusal()
	}
	if unreachable == target {
		if refused != nil {
			return failure.Wrap(failure.Blocked, refused, "render %s", target)
		}
		return failure.New(failure.Network, "render %s: the page failed to load", target)
	}
	if refused != nil {
		return failure.Wrap(failure.Blocked, refused, "render %s: the page went on to %s", target, unreachable)
	}
	return failure.New(failure.Network, "render %s: the page went on to %s, which failed to load", target, unreachable)
}

// refusedNav is why the main frame's last refused navigation was refused,
// or nil when none was.
func (t *tab) refusedNav() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mainRefused
}

// quietAfter starts counting the page's requests; the func it returns
// waits, at most budget, until they have been quiet for stepQuiet. It
// starts before what it waits after, or it would miss the requests made at
// once.
func (t *tab) quietAfter(ctx context.Context) func(budget time.Duration) {
	qctx, cancel := context.WithCancel(ctx)
	wait := t.page.Context(qctx).WaitRequestIdle(stepQuiet, nil, nil, nil)
	return func(budget time.Duration) {
		defer cancel()
		if budget <= 0 {
			return
		}
		timer := time.AfterFunc(budget, cancel)
		defer timer.Stop()
		wait()
	}
}

// closePopups closes every page the render's page opens (window.open, a
// link to a new window) as soon as it opens: nothing reads it, and it
// would go on loading in the render's context.
func (t *tab) closePopups() error {
	if err := (proto.TargetSetDiscoverTargets{Discover: true}).Call(t.browser); err != nil {
		return fmt.Errorf("watch for popups: %w", err)
	}
	go t.browser.Context(t.page.GetContext()).EachEvent(func(e *proto.TargetTargetCreated) {
		info := e.TargetInfo
		if info.BrowserContextID == t.context && info.TargetID != t.target && info.Type == proto.TargetTargetInfoTypePage {
			_, _ = proto.TargetCloseTarget{TargetID: info.TargetID}.Call(t.browser)
		}
	})()
	return nil
}

// settle waits, after the load event, until the page's scripts have built
// what there is to read. A selector says when the page is ready: wait for
// it alone, and for network quiet too only when js_wait asks for it.
// Without one, wait for quiet within js_wait or the default budget.
func settle(ctx context.Context, page *rod.Page, opts *distillv1.FetchOptions, idle idleWatch) error {
	sel := opts.GetJsWaitFor()
	if sel != "" {
		if _, err := page.Element(sel); err != nil {
			if ctx.Err() != nil {
				return failure.Wrap(failure.Timeout, err, "js_wait_for selector %q did not appear within %s", sel, fetchopts.Timeout(opts))
			}
			return fmt.Errorf("js_wait_for %q: %w", sel, err)
		}
	}
	if budget := fetchopts.JSWait(opts); sel == "" || budget > 0 {
		if budget <= 0 {
			budget = defaultIdleBudget
		}
		timer := time.AfterFunc(budget, idle.cancel)
		idle.wait()
		timer.Stop()
	}
	return nil
}

// mainStatus is the main document's status, 200 when none was seen.
func (t *tab) mainStatus() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.status == 0 {
		return 200
	}
	return t.status
}

// snapshot reads the settled page: the URL it ended at, its main
// document's status (200 when none was seen) and its DOM, refused as
// TooLarge over MaxHTMLBytes. A page whose main frame failed to load (see
// left) has nothing to read.
func (t *tab) snapshot(target string) (*internalv1.RenderResponse, error) {
	info, err := t.page.Info()
	if err != nil {
		if left := t.left(target); left != nil {
			return nil, left
		}
		return nil, fmt.Errorf("page info: %w", err)
	}
	html, err := serialize(t.page)
	// Read last: the page may have left while it was read.
	if left := t.left(target); left != nil {
		return nil, left
	}
	if err != nil {
		if fe, ok := errors.AsType[*failure.Error](err); ok {
			return nil, failure.Wrap(fe.Code, fe, "render %s", target)
		}
		return nil, err
	}
	t.mu.Lock()
	code := t.status
	t.mu.Unlock()
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
