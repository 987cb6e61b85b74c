package identity

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync"
	"time"

	fhttp "github.com/bogdanfinn/fhttp"
	http2 "github.com/bogdanfinn/fhttp/http2"
	utls "github.com/bogdanfinn/utls"
)

// DialFunc opens a TCP connection; the fetcher's is the guarded dialer.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// Config is what a Transport is built with.
type Config struct {
	// Dial opens every TCP connection: the fetcher gives its guarded
	// dialer. Nil: a plain net.Dialer's, which judges nothing.
	Dial DialFunc
	// RootCAs verifies servers' certificates; nil: the system's roots.
	RootCAs *x509.CertPool
	// IdleConnTimeout closes idle connections (HTTP/1.1 and HTTP/2);
	// zero: 90 seconds.
	IdleConnTimeout time.Duration
	// TLSHandshakeTimeout bounds each handshake; zero: 10 seconds.
	TLSHandshakeTimeout time.Duration
	// MaxResponseHeaderBytes bounds a response's head over HTTP/1.1;
	// zero: 1 MiB. Over HTTP/2 the profile's SETTINGS_MAX_HEADER_LIST_SIZE
	// bounds it, as the browser's does.
	MaxResponseHeaderBytes int64
}

// Transport is a net/http RoundTripper that speaks as a browser profile:
// its ClientHello over TLS, its preface and pseudo-header order over
// HTTP/2, its header order on every request. Connections come from
// Config.Dial alone. It takes the fetcher's requests and gives net/http
// responses, so the fetcher's client (redirects, retries, traces) works
// over it unchanged.
type Transport struct {
	p   *Profile
	cfg Config
	h2  *http2.Transport // frames HTTP/2 connections opened here
	// sessions are the TLS sessions a new connection resumes, as the
	// browser's does.
	sessions utls.ClientSessionCache

	mu sync.Mutex
	// h2conns are the HTTP/2 connections by address; h1addrs the
	// addresses whose server settled HTTP/1.1; h1idle the idle HTTP/1.1
	// connections by scheme and address.
	h2conns map[string][]*h2conn
	dialing map[string]*h2dial
	h1addrs map[string]bool
	h1idle  map[string][]*h1conn
}

type h2conn struct {
	cc  *http2.ClientConn
	raw net.Conn // the dialled connection under TLS
}

// Transport returns a transport speaking as p over connections from
// cfg.Dial (a plain net.Dialer's when nil), or nil for a profile that is
// not a browser's: distill's own identity is Go's client, and the fetcher
// keeps its net/http transport for it.
func (p *Profile) Transport(cfg Config) *Transport {
	if !p.Browser() {
		return nil
	}
	if cfg.Dial == nil {
		cfg.Dial = new(net.Dialer).DialContext
	}
	if cfg.IdleConnTimeout == 0 {
		cfg.IdleConnTimeout = 90 * time.Second
	}
	if cfg.TLSHandshakeTimeout == 0 {
		cfg.TLSHandshakeTimeout = 10 * time.Second
	}
	if cfg.MaxResponseHeaderBytes <= 0 {
		cfg.MaxResponseHeaderBytes = 1 << 20
	}
	t := &Transport{p: p, cfg: cfg, h2conns: map[string][]*h2conn{}, dialing: map[string]*h2dial{}, h1addrs: map[string]bool{}, h1idle: map[string][]*h1conn{},
		sessions: utls.NewLRUClientSessionCache(64)}
	settings := map[http2.SettingID]uint32{}
	var order []http2.SettingID
	for _, s := range p.h2.settings {
		settings[s.ID] = s.Val
		order = append(order, s.ID)
	}
	prio := p.h2.headerPriority
	t.h2 = &http2.Transport{
		Settings:           settings,
		SettingsOrder:      order,
		ConnectionFlow:     p.h2.windowUpdate,
		HeaderPriority:     &prio,
		PseudoHeaderOrder:  slices.Clone(p.h2.pseudoOrder),
		IdleConnTimeout:    cfg.IdleConnTimeout,
		DisableCompression: true, // the fetcher asks for and decodes bodies itself
	}
	return t
}

// CloseIdleConnections closes the connections not in use, and the
// HTTP/2 ones once their requests in flight are over.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for addr, conns := range t.h2conns {
		for _, c := range conns {
			// Shutdown waits for the connection's streams to end: a
			// request in flight finishes, and no new one is given it.
			go func() { _ = c.cc.Shutdown(context.Background()) }()
		}
		delete(t.h2conns, addr)
	}
	for key, conns := range t.h1idle {
		for _, c := range conns {
			c.timer.Stop()
			_ = c.conn.Close()
		}
		delete(t.h1idle, key)
	}
}

// RoundTrip sends req as the profile would.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Scheme != "https" {
		return t.roundTrip1(req)
	}
	addr := hostPort(req)
	t.mu.Lock()
	h1 := t.h1addrs[addr]
	t.mu.Unlock()
	if h1 {
		return t.roundTrip1(req)
	}
	c, reused, err := t.h2conn(req.Context(), addr)
	if errors.Is(err, errSettledHTTP1) {
		return t.roundTrip1(req)
	}
	if err != nil {
		return nil, err
	}
	if trace := httptrace.ContextClientTrace(req.Context()); trace != nil && trace.GotConn != nil {
		trace.GotConn(httptrace.GotConnInfo{Conn: c.raw, Reused: reused})
	}
	fresp, err := c.cc.RoundTrip(t.request(req, false))
	if err != nil {
		return nil, err
	}
	return response(fresp, req), nil
}

// errSettledHTTP1 says the server chose HTTP/1.1; the connection waits
// among the idle HTTP/1.1 ones.
var errSettledHTTP1 = errors.New("identity: server settled HTTP/1.1")

// h2conn returns an HTTP/2 connection to addr that can take a request,
// dialling one when none can, and whether it was reused. Requests that
// find none while one is being dialled wait for it, as a browser's do:
// one connection to a site, not one per request in flight. A server that
// settles HTTP/1.1 gives errSettledHTTP1, and is spoken to over HTTP/1.1
// from then on.
func (t *Transport) h2conn(ctx context.Context, addr string) (*h2conn, bool, error) {
	for {
		t.mu.Lock()
		if c := t.liveH2Locked(addr); c != nil {
			t.mu.Unlock()
			return c, true, nil
		}
		d := t.dialing[addr]
		if d == nil {
			d = &h2dial{done: make(chan struct{})}
			t.dialing[addr] = d
			t.mu.Unlock()
			c, err := t.dialH2(ctx, addr)
			t.mu.Lock()
			delete(t.dialing, addr)
			t.mu.Unlock()
			d.err = err
			close(d.done)
			return c, false, err
		}
		t.mu.Unlock()
		select {
		case <-d.done:
		case <-ctx.Done():
			return nil, false, context.Cause(ctx)
		}
		if errors.Is(d.err, errSettledHTTP1) {
			return nil, false, d.err
		}
		// Its dial done (or failed, under another request's context),
		// look again.
	}
}

// h2dial is a dial under way that other requests wait for.
type h2dial struct {
	done chan struct{}
	err  error
}

// liveH2Locked is a connection to addr that can take a request, if any;
// it forgets those that never will again.
func (t *Transport) liveH2Locked(addr string) *h2conn {
	live := t.h2conns[addr][:0]
	var found *h2conn
	for _, c := range t.h2conns[addr] {
		if c.cc.CanTakeNewRequest() {
			live = append(live, c)
			if found == nil {
				found = c
			}
		}
	}
	t.h2conns[addr] = live
	return found
}

// dialH2 dials addr for HTTP/2, or leaves the connection for HTTP/1.1
// when the server settles that.
func (t *Transport) dialH2(ctx context.Context, addr string) (*h2conn, error) {
	conn, raw, err := t.dialTLS(ctx, addr)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if conn.ConnectionState().NegotiatedProtocol != "h2" {
		t.h1addrs[addr] = true
		c := newH1conn(conn, raw)
		c.fresh = true
		t.putIdleLocked("https://"+addr, c)
		return nil, errSettledHTTP1
	}
	return t.addH2Locked(addr, conn, raw)
}

// addH2Locked makes conn an HTTP/2 connection of the transport's.
func (t *Transport) addH2Locked(addr string, conn *utls.UConn, raw net.Conn) (*h2conn, error) {
	cc, err := t.h2.NewClientConn(conn)
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("identity: HTTP/2 to %s: %w", addr, err)
	}
	c := &h2conn{cc: cc, raw: raw}
	t.h2conns[addr] = append(t.h2conns[addr], c)
	return c, nil
}

// dialTLS dials addr with the guarded dialer and makes the profile's TLS
// handshake over it: the TLS connection and the dialled one under it.
func (t *Transport) dialTLS(ctx context.Context, addr string) (*utls.UConn, net.Conn, error) {
	raw, err := t.cfg.Dial(ctx, "tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	conn := utls.UClient(raw, &utls.Config{ServerName: host, RootCAs: t.cfg.RootCAs, ClientSessionCache: t.sessions, OmitEmptyPsk: true}, utls.HelloCustom, false, false, true)
	if err := conn.ApplyPreset(t.p.hello()); err != nil {
		_ = raw.Close()
		return nil, nil, fmt.Errorf("identity: %s ClientHello: %w", t.p.Name(), err)
	}
	hctx, cancel := context.WithTimeoutCause(ctx, t.cfg.TLSHandshakeTimeout, errHandshakeTimeout)
	defer cancel()
	if err := conn.HandshakeContext(hctx); err != nil {
		_ = raw.Close()
		if ve, ok := errors.AsType[*utls.CertificateVerificationError](err); ok {
			// The fetcher tells a certificate problem (not retried) by
			// crypto/tls's type.
			return nil, nil, &tls.CertificateVerificationError{UnverifiedCertificates: ve.UnverifiedCertificates, Err: ve.Err}
		}
		return nil, nil, fmt.Errorf("tls handshake with %s: %w", addr, err)
	}
	return conn, raw, nil
}

var errHandshakeTimeout = errors.New("identity: TLS handshake timed out")

// request is req for fhttp, with the profile's header order: over
// HTTP/1.1 (h1) with the browser's case of each name and without the
// fields it sends over HTTP/2 alone.
func (t *Transport) request(req *http.Request, h1 bool) *fhttp.Request {
	h := fhttp.Header{}
	for name, values := range req.Header {
		lower := strings.ToLower(name)
		switch {
		case !h1:
			h[name] = slices.Clone(values)
		case slices.Contains(t.p.h1.omit, lower):
		case slices.Contains(t.p.h1.lower, lower):
			h[lower] = slices.Clone(values)
		default:
			h[name] = slices.Clone(values)
		}
	}
	order := t.p.headerOrder(isHop(req.Context()))
	if h1 {
		order = append(slices.Clone(t.p.h1.first), order...)
		if req.Header.Get("Connection") == "" && !req.Close {
			h["Connection"] = []string{"keep-alive"}
		}
	}
	h[fhttp.HeaderOrderKey] = order
	h[fhttp.PHeaderOrderKey] = slices.Clone(t.p.h2.pseudoOrder)
	freq := &fhttp.Request{
		Method:        req.Method,
		URL:           req.URL,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          req.Body,
		GetBody:       req.GetBody,
		ContentLength: req.ContentLength,
		Host:          req.Host,
		Close:         req.Close,
	}
	return freq.WithContext(req.Context())
}

// response is fresp for net/http.
func response(fresp *fhttp.Response, req *http.Request) *http.Response {
	return &http.Response{
		Status:           fresp.Status,
		StatusCode:       fresp.StatusCode,
		Proto:            fresp.Proto,
		ProtoMajor:       fresp.ProtoMajor,
		ProtoMinor:       fresp.ProtoMinor,
		Header:           http.Header(fresp.Header),
		Body:             fresp.Body,
		ContentLength:    fresp.ContentLength,
		TransferEncoding: fresp.TransferEncoding,
		Close:            fresp.Close,
		Uncompressed:     fresp.Uncompressed,
		Trailer:          http.Header(fresp.Trailer),
		Request:          req,
	}
}

// hostPort is req's address, with the scheme's port when it names none.
func hostPort(req *http.Request) string {
	if _, _, err := net.SplitHostPort(req.URL.Host); err == nil {
		return req.URL.Host
	}
	port := "443"
	if req.URL.Scheme == "http" {
		port = "80"
	}
	return net.JoinHostPort(req.URL.Hostname(), port)
}
