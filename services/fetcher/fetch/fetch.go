// Package fetch retrieves web pages for distill under the network policy:
// every URL and redirect is checked before it is requested, every socket
// is checked on the address actually dialled, and bytes, time, retries and
// per-host load are bounded by the request's FetchOptions.
package fetch

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/cache"
	"distill.dev/services/fetcher/cookies"
	"distill.dev/services/fetcher/identity"
	"distill.dev/services/fetcher/robots"
	"distill.dev/services/platform/netpolicy"
	"distill.dev/services/platform/telemetry"
)

// MaxRedirects is how many redirects one fetch follows.
const MaxRedirects = 10

const (
	defaultBackoffBase = 250 * time.Millisecond
	defaultBackoffMax  = 8 * time.Second

	accept         = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
	acceptLanguage = "en-US,en;q=0.9"
	acceptEncoding = "gzip, deflate, br, zstd"
)

// Fetcher fetches pages. It is called in-process, and serves
// FetcherService through the fetcher's server. Its connection pools and
// per-host limits are shared by every call, so one Fetcher should serve a
// whole process.
type Fetcher struct {
	logger      *slog.Logger
	userAgent   string
	backoffBase time.Duration
	backoffMax  time.Duration
	resolver    *net.Resolver
	hosts       *hostGate
	robots      robotsCaches
	cache       *cache.Cache // nil: no cache
	// allowLocal is the operator's permission for calls to ask for
	// loopback; own are the process's listeners, refused to every call.
	allowLocal bool
	own        *netpolicy.Own
	// recorder, when set, is handed every HTTP exchange (WithRecorder).
	recorder Recorder
	// profile is the identity the fetcher presents when a call names
	// none (WithProfile); distill's, Go's client with distill's
	// User-Agent, unless set.
	profile *identity.Profile
	// rootCAs verifies servers' certificates; nil: the system's.
	rootCAs *x509.CertPool

	// clients are the HTTP clients of each profile a call has asked
	// for, by name, made on first use and kept: each profile has its own
	// connection pools, so a connection one identity opened never
	// carries another's request.
	mu      sync.Mutex
	clients map[string]*clients
}

// clients are one profile's HTTP clients, one per policy: a connection
// opened while loopback was allowed must never be reused by a call that
// does not allow it.
type clients struct {
	profile               *identity.Profile
	strict, allowLoopback *http.Client
}

// Option configures a Fetcher.
type Option func(*Fetcher)

// WithUserAgent sets the version in the User-Agent header,
// distill/<version> (+https://distill.dev).
func WithUserAgent(version string) Option {
	return func(f *Fetcher) {
		if version != "" {
			f.userAgent = userAgent(version)
		}
	}
}

// WithBackoff sets the retry backoff: full jitter over base·2^attempt,
// capped at max. Tests shorten it.
func WithBackoff(base, max time.Duration) Option {
	return func(f *Fetcher) { f.backoffBase, f.backoffMax = base, max }
}

// WithResolver sets the resolver used to dial; the policy still judges
// every address it returns. Tests use it to fake DNS.
func WithResolver(r *net.Resolver) Option {
	return func(f *Fetcher) { f.resolver = r }
}

// WithAllowLocal lets calls ask for loopback (options.allow_local). It is
// the operator's to give: without it a call that asks is refused, so
// whoever can reach this fetcher cannot point it at the machine's own
// services.
func WithAllowLocal(allow bool) Option {
	return func(f *Fetcher) { f.allowLocal = allow }
}

// WithOwn refuses every call the process's own listening addresses, even
// when loopback is allowed.
func WithOwn(own *netpolicy.Own) Option {
	return func(f *Fetcher) { f.own = own }
}

// WithProfile makes the fetcher present the network identity p to the
// calls whose options name no browser (FetchOptions.browser): with a
// browser's profile (identity.Chrome) the TLS handshake, the HTTP/2
// preface and framing and the request headers (User-Agent included, in
// place of WithUserAgent's) are that browser's. Every connection is still
// dialled by the fetcher's guarded dialer, so the network policy judges
// it at connect time whatever the profile. Without it, or with
// identity.Distill, the fetcher is Go's client and says it is distill.
func WithProfile(p *identity.Profile) Option {
	return func(f *Fetcher) { f.profile = p }
}

// WithRootCAs verifies servers' certificates against roots instead of
// the system's: a private CA's sites, or a test's server.
func WithRootCAs(roots *x509.CertPool) Option {
	return func(f *Fetcher) { f.rootCAs = roots }
}

func userAgent(version string) string {
	return "distill/" + version + " (+https://distill.dev)"
}

// New returns a Fetcher. Close releases its idle connections.
func New(logger *slog.Logger, opts ...Option) *Fetcher {
	f := &Fetcher{
		logger:      logger,
		userAgent:   userAgent("dev"),
		backoffBase: defaultBackoffBase,
		backoffMax:  defaultBackoffMax,
		hosts:       newHostGate(),
		robots:      newRobotsCaches(),
	}
	for _, o := range opts {
		o(f)
	}
	if f.profile == nil {
		f.profile = identity.Distill()
	}
	f.clients = map[string]*clients{}
	f.clientsOf(f.profile)
	return f
}

// profileOf is the profile a call's options name, the fetcher's own when
// they name none; a name no profile has is the caller's mistake.
func (f *Fetcher) profileOf(raw string, o *distillv1.FetchOptions) (*identity.Profile, error) {
	if o.GetBrowser() == "" {
		return f.profile, nil
	}
	// A profile asked for before is the one its clients were made for:
	// it is not built again for every call.
	f.mu.Lock()
	cs, ok := f.clients[strings.ToLower(o.GetBrowser())]
	f.mu.Unlock()
	if ok {
		return cs.profile, nil
	}
	p, err := identity.Named(o.GetBrowser())
	if err != nil {
		return nil, failure.Wrap(failure.InvalidArgument, err, "fetch %s: --browser", display(raw))
	}
	return p, nil
}

// clientsOf is p's clients, made the first time a call asks for p.
func (f *Fetcher) clientsOf(p *identity.Profile) *clients {
	f.mu.Lock()
	defer f.mu.Unlock()
	cs, ok := f.clients[p.Name()]
	if !ok {
		cs = &clients{
			profile:       p,
			strict:        f.newClient(p, netpolicy.Policy{Own: f.own}),
			allowLoopback: f.newClient(p, netpolicy.Policy{AllowLoopback: true, Own: f.own}),
		}
		f.clients[p.Name()] = cs
	}
	return cs
}

func (f *Fetcher) newClient(prof *identity.Profile, p netpolicy.Policy) *http.Client {
	dialer := &net.Dialer{
		Timeout:   10 * time.Second,
		KeepAlive: 30 * time.Second,
		Resolver:  f.resolver,
		Control:   p.Control,
	}
	// Every connection, whatever speaks over it, is this dialer's: the
	// policy's check at connect is the one below all profiles.
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dialer.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &watchedConn{Conn: c}, nil
	}
	return &http.Client{
		Transport: f.transport(prof, dial),
		// Redirects are followed by hand so that each hop is checked,
		// recorded, and counted against its own host's limits.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// transport is the fetcher's HTTP transport over dial: p's when it is a
// browser's, else Go's.
func (f *Fetcher) transport(p *identity.Profile, dial identity.DialFunc) http.RoundTripper {
	if t := p.Transport(identity.Config{
		Dial: dial, RootCAs: f.rootCAs, IdleConnTimeout: 90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second, MaxResponseHeaderBytes: 1 << 20,
	}); t != nil {
		return t
	}
	var tlsConfig *tls.Config
	if f.rootCAs != nil {
		tlsConfig = &tls.Config{RootCAs: f.rootCAs}
	}
	return &http.Transport{
		// A proxy would dial on our behalf, out of the policy's sight.
		Proxy:                  nil,
		DialContext:            dial,
		TLSClientConfig:        tlsConfig,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		MaxIdleConns:           100,
		IdleConnTimeout:        90 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 1 << 20,
		// We ask for compressed bodies and decode ourselves, so the
		// decoded size is what the byte cap counts.
		DisableCompression: true,
	}
}

// Close releases idle connections, every profile's. The Fetcher stays
// usable.
func (f *Fetcher) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, cs := range f.clients {
		cs.strict.CloseIdleConnections()
		cs.allowLoopback.CloseIdleConnections()
	}
}

// message is what one hop sends: the method and, for a POST, its body.
type message struct {
	method      string
	body        []byte
	contentType string
	// anonymous sends no cookies and keeps none, whatever the call's jar.
	anonymous bool
}

// plainGet is the message of every page GET, and of redirects turned into
// GETs.
var plainGet = message{method: http.MethodGet}

// robotsGet fetches robots.txt: a crawler's request, not the session's.
var robotsGet = message{method: http.MethodGet, anonymous: true}

// call is one Fetch: its options, read once, and the URL it was asked for.
type call struct {
	raw    string
	send   message
	opts   *distillv1.FetchOptions
	policy netpolicy.Policy
	// profile is the identity the call presents, client its transport
	// under the call's policy: every hop, retry and robots.txt read of
	// the call goes through them.
	profile    *identity.Profile
	client     *http.Client
	timeout    time.Duration
	maxBytes   int64
	maxRetries int
	perHost    int
	rate       float64
	// jar is the session's cookie jar, nil when the call keeps no cookies;
	// setCookies collects what the call's hops set in it.
	jar        *cookies.Jar
	setCookies []*internalv1.JarEntry
	// anyType takes a body of any media type: a resource read as bytes
	// (a gzipped sitemap), not a page to distill.
	anyType bool
	// follow, when set, judges each redirect before it is followed.
	follow func(to *url.URL) error
	// origin is the URL the call starts from: the caller's headers go to
	// its origin only.
	origin *url.URL
	// pace, when set, waits for the host's turn right before each request
	// goes out; sent hears when it did.
	pace func(ctx context.Context, u *url.URL) error
	sent func(u *url.URL, at time.Time)
	// robotsFrom, when set, gives the robots.txt of each hop's origin in
	// place of the Fetcher's own cache, unless it says it has none.
	robotsFrom func(ctx context.Context, u *url.URL) (*robots.Robots, bool, error)
}

// CallOption adds to one call what only an in-process caller can give: a
// function, which no FetchOptions field can carry.
type CallOption func(*call)

// FollowIf makes a call follow a redirect only when judge returns nil for
// its target (after the network policy and before robots.txt): a crawl
// keeps to its scope on every hop, not only on the links it queues. A
// refusal ends the fetch with a failure.Blocked naming the target and
// judge's reason.
func FollowIf(judge func(to *url.URL) error) CallOption {
	return func(c *call) { c.follow = judge }
}

// PaceWith makes every request of a call (each attempt, each redirect hop,
// a robots.txt read) wait for turn(ctx, u) once it holds its per-host slot
// and token, right before it is sent, and tells sent the moment it was
// written, or a zero time when it failed before: a crawl's politeness is
// kept between the requests themselves, not between the pages that cause
// them, which hops, retries and a slot waited for would bunch, and a pacer
// can hold the host from a turn until its request is out.
func PaceWith(turn func(ctx context.Context, u *url.URL) error, sent func(u *url.URL, at time.Time)) CallOption {
	return func(c *call) { c.pace, c.sent = turn, sent }
}

// RobotsFrom makes a call take the robots.txt of each hop's origin from
// get rather than from the Fetcher's cache: the workers of a crawl in
// several processes share one copy per host, read once, instead of one
// per process. get answers as robots.Cache.Get does: a file that cannot
// be had is an answer (allow all or disallow all), the only error is the
// context's or the store's. get's ok is false when it keeps no copy for
// the call (its caller reads robots.txt itself): the call reads it then
// as it would without RobotsFrom.
func RobotsFrom(get func(ctx context.Context, u *url.URL) (file *robots.Robots, ok bool, err error)) CallOption {
	return func(c *call) { c.robotsFrom = get }
}

func redirectRefused(from, to string, err error) error {
	return failure.Wrap(failure.Blocked, err, "fetch %s: redirect to %s not followed", display(from), display(to))
}

// Fetch retrieves req.url. HTTP error statuses are answers; policy
// refusals, limits and network failures are *failure.Error values whose
// one-line message names the URL.
func (f *Fetcher) Fetch(ctx context.Context, req *internalv1.FetcherServiceFetchRequest) (resp *internalv1.FetcherServiceFetchResponse, err error) {
	return f.FetchWith(ctx, req)
}

// FetchWith is Fetch with options only a caller in this process can give.
func (f *Fetcher) FetchWith(ctx context.Context, req *internalv1.FetcherServiceFetchRequest, opts ...CallOption) (resp *internalv1.FetcherServiceFetchResponse, err error) {
	start := time.Now()
	ctx, done := telemetry.StartRequest(ctx, "distill.fetch", "fetcher", "Fetch", telemetry.URLAttributes(req.GetUrl())...)
	defer func() {
		telemetry.RecordFetch(ctx, time.Since(start), resp.GetFromCache(), err)
		if resp != nil {
			trace.SpanFromContext(ctx).SetAttributes(semconv.HTTPResponseStatusCode(int(resp.GetStatus())),
				telemetry.FromCache.Bool(resp.GetFromCache()), telemetry.Redirects.Int(len(resp.GetRedirectHistory())))
		}
		done(err)
	}()
	o := req.GetOptions()
	send, err := messageOf(req)
	if err != nil {
		return nil, err
	}
	c, err := f.newCall(ctx, req.GetUrl(), send, o)
	if err != nil {
		return nil, err
	}
	if req.GetUseCookies() {
		c.jar = cookies.FromEntries(req.GetJar())
	}
	for _, o := range opts {
		o(c)
	}
	resp, err = f.run(ctx, c, start)
	if err == nil && resp.GetFromCache() && c.follow != nil {
		// A cached answer's hops were followed by an earlier call, which
		// may not have judged them: they are judged now.
		if err := c.judgeHops(resp); err != nil {
			return nil, err
		}
	}
	return resp, err
}

// judgeHops applies the call's FollowIf to every hop after the first of a
// cached answer.
func (c *call) judgeHops(resp *internalv1.FetcherServiceFetchResponse) error {
	hops := append(slices.Clone(resp.GetRedirectHistory()), resp.GetFinalUrl())
	for i := 1; i < len(hops); i++ {
		u, err := url.Parse(hops[i])
		if err != nil {
			return failure.Wrap(failure.InvalidURL, err, "fetch %s", display(c.raw))
		}
		if err := c.follow(u); err != nil {
			return redirectRefused(hops[i-1], hops[i], err)
		}
	}
	return nil
}

// newCall reads the options of one call, refusing allow_local unless the
// operator gave it. The host allowlists ctx carries judge every URL of the
// call, the redirects and robots.txt included.
func (f *Fetcher) newCall(ctx context.Context, raw string, send message, o *distillv1.FetchOptions) (*call, error) {
	if o.GetAllowLocal() && !f.allowLocal {
		return nil, failure.AllowLocalRefused()
	}
	profile, err := f.profileOf(raw, o)
	if err != nil {
		return nil, err
	}
	c := &call{
		raw:        raw,
		send:       send,
		opts:       o,
		policy:     netpolicy.Policy{AllowLoopback: o.GetAllowLocal(), Own: f.own, Allowlists: netpolicy.Allowlists(ctx)},
		timeout:    fetchopts.Timeout(o),
		maxBytes:   fetchopts.MaxBytes(o),
		maxRetries: fetchopts.MaxRetries(o),
		perHost:    fetchopts.PerHostConcurrency(o),
		rate:       o.GetRateLimit(),
		profile:    profile,
	}
	cs := f.clientsOf(profile)
	c.client = cs.strict
	if c.policy.AllowLoopback {
		c.client = cs.allowLoopback
	}
	return c, nil
}

// run answers a call from the cache or the network, and logs how it went.
func (f *Fetcher) run(ctx context.Context, c *call, start time.Time) (*internalv1.FetcherServiceFetchResponse, error) {
	useCache := f.usesCache(c)
	if useCache && f.recorder == nil {
		if resp, ok := f.fromCache(ctx, c); ok {
			telemetry.CountCacheLookup(ctx, telemetry.CacheHit)
			f.logger.Debug("fetched from cache", "url", c.raw, "final_url", resp.GetFinalUrl(), "status", resp.GetStatus(), "elapsed", time.Since(start))
			return resp, nil
		}
		telemetry.CountCacheLookup(ctx, telemetry.CacheMiss)
	}
	resp, err := f.fetch(ctx, c)
	if err != nil {
		level := slog.LevelInfo
		if failure.CodeOf(err) == failure.Blocked {
			level = slog.LevelWarn
		}
		f.logger.Log(ctx, level, "fetch failed", "url", c.raw, "code", failure.CodeOf(err).String(), "err", err.Error(), "elapsed", time.Since(start))
		return nil, err
	}
	f.logger.Debug("fetched", "url", c.raw, "final_url", resp.GetFinalUrl(), "status", resp.GetStatus(),
		"bytes", len(resp.GetBody()), "redirects", len(resp.GetRedirectHistory()), "elapsed", time.Since(start))
	if useCache {
		f.store(ctx, c, resp)
	}
	return resp, nil
}

func (f *Fetcher) fetch(ctx context.Context, c *call) (*internalv1.FetcherServiceFetchResponse, error) {
	where := "fetch " + display(c.raw)
	if err := fetchopts.Validate(c.opts); err != nil {
		return nil, failure.Wrap(failure.InvalidArgument, err, "%s: bad options", where)
	}
	u, err := c.policy.CheckURL(c.raw)
	if err != nil {
		return nil, c.classify(ctx, where, err)
	}
	c.origin = u

	ctx, cancel := context.WithTimeoutCause(ctx, c.timeout, errTimeout)
	defer cancel()

	var history []string
	send := c.send
	for hop := 0; ; hop++ {
		if err := f.checkRobots(ctx, c, u, where); err != nil {
			return nil, err
		}
		resp, err := f.sendWithRetries(hopContext(ctx, hop), c, u, send)
		if err != nil {
			return nil, c.classify(ctx, where, err)
		}
		next, err := redirectTarget(resp, u)
		if err != nil {
			discard(resp)
			return nil, c.classify(ctx, where, err)
		}
		if next == "" {
			retry := f.retryAfterOf(resp)
			out, err := c.answer(ctx, where, u, resp, history)
			if err != nil {
				return nil, err
			}
			out.SetCookies, out.RetryAfterSecs = c.setCookies, retry
			return out, nil
		}
		discard(resp)
		if hop == MaxRedirects {
			return nil, failure.New(failure.Network, "%s: stopped after %d redirects, next was %s", where, MaxRedirects, display(next))
		}
		nu, err := c.policy.CheckURL(next)
		if err != nil {
			return nil, c.classify(ctx, where+": redirect to "+display(next), err)
		}
		if c.follow != nil {
			if err := c.follow(nu); err != nil {
				return nil, redirectRefused(u.String(), nu.String(), err)
			}
		}
		send, err = redirected(send, resp.StatusCode, u, nu)
		if err != nil {
			return nil, failure.Wrap(failure.Blocked, err, "%s: redirect to %s", where, display(next))
		}
		history = append(history, u.String())
		u = nu
		where = "fetch " + display(c.raw) + ": redirect to " + display(next)
	}
}

// hopContext marks the requests of a redirect hop (hop > 0) as such: a
// browser's profile writes them in the browser's order for a hop.
func hopContext(ctx context.Context, hop int) context.Context {
	if hop == 0 {
		return ctx
	}
	return identity.RedirectHop(ctx)
}

// redirectTarget returns the absolute URL a redirect points to, or "" when
// resp is not a redirect to follow.
func redirectTarget(resp *http.Response, from *url.URL) (string, error) {
	switch resp.StatusCode {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
	default:
		return "", nil
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		return "", nil
	}
	target, err := from.Parse(loc)
	if err != nil {
		return "", &netpolicy.InvalidURLError{URL: loc, Reason: fmt.Sprintf("redirect Location %s: %v", display(loc), unwrapURLError(err))}
	}
	return target.String(), nil
}

// messageOf reads what the request asks to send.
func messageOf(req *internalv1.FetcherServiceFetchRequest) (message, error) {
	switch m := strings.ToUpper(req.GetMethod()); m {
	case "", http.MethodGet:
		if len(req.GetBody()) > 0 {
			return message{}, failure.New(failure.InvalidArgument, "fetch %s: a GET carries no body", display(req.GetUrl()))
		}
		return plainGet, nil
	case http.MethodPost:
		return message{method: m, body: req.GetBody(), contentType: req.GetBodyContentType()}, nil
	default:
		return message{}, failure.New(failure.InvalidArgument, "fetch %s: method %q is not GET or POST", display(req.GetUrl()), req.GetMethod())
	}
}

// errBodyAcrossOrigins refuses a 307 or 308 that would resend a body to
// another origin: the body was meant for the site that asked for it.
var errBodyAcrossOrigins = errors.New("refusing to resend a request body to another origin")

// redirected returns what the next hop sends after a redirect of the given
// status from one URL to another, as browsers do: 301, 302 and 303 turn a
// POST into a GET without a body; 307 and 308 keep method and body, but
// only within the same origin.
func redirected(m message, status int, from, to *url.URL) (message, error) {
	if m.method == http.MethodGet {
		return m, nil
	}
	switch status {
	case http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		if !sameOrigin(from, to) {
			return message{}, errBodyAcrossOrigins
		}
		return m, nil
	default:
		return plainGet, nil
	}
}

func sameOrigin(a, b *url.URL) bool {
	return a.Scheme == b.Scheme && strings.EqualFold(a.Hostname(), b.Hostname()) && portOf(a) == portOf(b)
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if u.Scheme == "https" {
		return "443"
	}
	return "80"
}

// request builds the request of one attempt, with p's headers.
func (f *Fetcher) request(ctx context.Context, p *identity.Profile, u *url.URL, m message) (*http.Request, error) {
	var body io.Reader
	if m.method != http.MethodGet {
		body = bytes.NewReader(m.body)
	}
	req, err := http.NewRequestWithContext(ctx, m.method, u.String(), body)
	if err != nil {
		return nil, err
	}
	if m.contentType != "" {
		req.Header.Set("Content-Type", m.contentType)
	}
	if p.Browser() {
		p.SetHeaders(req.Header)
		return req, nil
	}
	req.Header.Set("User-Agent", f.userAgent)
	req.Header.Set("Accept", accept)
	req.Header.Set("Accept-Language", acceptLanguage)
	req.Header.Set("Accept-Encoding", acceptEncoding)
	return req, nil
}

// display keeps a URL on one line in messages: anything with spaces or
// control characters is quoted.
func display(raw string) string {
	for _, r := range raw {
		if r <= ' ' || r == 0x7f {
			return fmt.Sprintf("%q", raw)
		}
	}
	return raw
}

func unwrapURLError(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}

// hostKey is what per-host limits count by: the host name without port, so
// that one machine is not hammered through several ports.
func hostKey(u *url.URL) string {
	return strings.ToLower(u.Hostname())
}
