package render

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"distill.dev/services/platform/netpolicy"
)

// egress is the only way out of the browser. Each render's browser context
// is pointed at its own egress, an HTTP proxy on loopback that resolves
// every host itself, judges each address with the render's policy and dials
// only addresses it judged: the browser never opens a socket to the
// network. This is what holds the policy at connect time for what request
// interception cannot see or cannot pin down: WebSocket connections (always
// tunnelled through the proxy), worker and service-worker requests,
// preconnects, and a host whose DNS answer changes after the URL was judged.
//
// Closing an egress ends every connection it carries, so nothing a page
// opened outlives its render.
type egress struct {
	logger   *slog.Logger
	policy   netpolicy.Policy
	resolver *net.Resolver
	dial     func(ctx context.Context, network, addr string) (net.Conn, error)

	ln        net.Listener
	unlisted  func() // takes ln out of the policy's own addresses
	srv       *http.Server
	transport *http.Transport
	forward   *httputil.ReverseProxy

	mu      sync.Mutex
	tunnels map[net.Conn]struct{}
	closed  bool
	refused error // the first refusal, to name why a navigation failed
}

// startEgress listens on a loopback port and serves until close. dial
// connects to an address already judged; nil means a plain dialer that
// judges it once more at connect.
func startEgress(logger *slog.Logger, p netpolicy.Policy, resolver *net.Resolver, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (*egress, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("egress proxy: %w", err)
	}
	if dial == nil {
		d := &net.Dialer{Timeout: 10 * time.Second, Control: p.Control}
		dial = d.DialContext
	}
	// A page of another render, or a fetch in this process, must never
	// reach this proxy: it would dial under this render's policy.
	e := &egress{logger: logger, policy: p, resolver: resolver, dial: dial, ln: ln, unlisted: p.Own.Add(ln.Addr(), "render egress proxy"), tunnels: map[net.Conn]struct{}{}}
	e.transport = &http.Transport{
		DialContext:           e.dialChecked,
		DisableCompression:    true, // the browser asked for its own encodings
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
	}
	e.forward = &httputil.ReverseProxy{
		// The browser sends absolute URLs to a proxy: forward them as they
		// are. Rewrite (rather than Director) adds no X-Forwarded headers,
		// so servers see the browser, not a proxy.
		Rewrite: func(r *httputil.ProxyRequest) {
			r.Out.URL = r.In.URL
			r.Out.Host = r.In.Host
		},
		Transport:    e.transport,
		ErrorLog:     slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
		ErrorHandler: e.refuse,
	}
	e.srv = &http.Server{Handler: e, ReadHeaderTimeout: 10 * time.Second, ErrorLog: e.forward.ErrorLog}
	go func() { _ = e.srv.Serve(ln) }()
	return e, nil
}

// proxyURL is the value for a browser context's proxyServer.
func (e *egress) proxyURL() string { return "http://" + e.ln.Addr().String() }

// close stops the proxy and cuts every connection it carries.
func (e *egress) close() {
	e.mu.Lock()
	e.closed = true
	tunnels := e.tunnels
	e.tunnels = nil
	e.mu.Unlock()
	_ = e.srv.Close()
	e.unlisted()
	for c := range tunnels {
		_ = c.Close()
	}
	e.transport.CloseIdleConnections()
}

// refusal returns the first connection the policy refused, or nil.
func (e *egress) refusal() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.refused
}

func (e *egress) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		e.tunnel(w, r)
	case r.URL.IsAbs() && r.URL.Scheme == "http":
		e.forward.ServeHTTP(w, r)
	default:
		http.Error(w, "distill egress: not a proxy request", http.StatusBadRequest)
	}
}

// tunnel serves CONNECT: HTTPS and every WebSocket.
func (e *egress) tunnel(w http.ResponseWriter, r *http.Request) {
	// A plain-http asset origin is never tunnelled to: its assets come
	// forwarded, and a tunnel could only be a WebSocket.
	if host, portStr, err := net.SplitHostPort(r.Host); err == nil {
		if port, err := strconv.ParseUint(portStr, 10, 16); err == nil {
			for _, a := range e.policy.Allowlists {
				if err := a.CheckTunnel(host, uint16(port)); err != nil {
					e.refuse(w, r, err)
					return
				}
			}
		}
	}
	upstream, err := e.dialChecked(r.Context(), "tcp", r.Host)
	if err != nil {
		e.refuse(w, r, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		_ = upstream.Close()
		http.Error(w, "distill egress: cannot tunnel", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		_ = upstream.Close()
		return
	}
	if !e.track(client, upstream) {
		_ = client.Close()
		_ = upstream.Close()
		return
	}
	defer e.untrack(client, upstream)
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() {
		// Bytes the browser sent after its CONNECT are already buffered.
		_, _ = io.Copy(upstream, buf.Reader)
		closeWrite(upstream)
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(client, upstream)
		closeWrite(client)
		done <- struct{}{}
	}()
	<-done
	<-done
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(interface{ CloseWrite() error }); ok {
		_ = tc.CloseWrite()
		return
	}
	_ = c.Close()
}

func (e *egress) track(conns ...net.Conn) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return false
	}
	for _, c := range conns {
		e.tunnels[c] = struct{}{}
	}
	return true
}

func (e *egress) untrack(conns ...net.Conn) {
	e.mu.Lock()
	for _, c := range conns {
		delete(e.tunnels, c)
	}
	e.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// refuse answers a request the policy refused or that failed upstream. A
// tunnel gets an error status, which the browser reports to the page as a
// failed connection. A plain HTTP request gets its connection closed
// without an answer: any answer would reach the page as if the server had
// sent it.
func (e *egress) refuse(w http.ResponseWriter, r *http.Request, err error) {
	target := r.Host
	if r.URL.IsAbs() {
		target = r.URL.String()
	}
	status := http.StatusBadGateway
	if be, blocked := errors.AsType[*netpolicy.BlockedError](err); blocked {
		status = http.StatusForbidden
		e.mu.Lock()
		if e.refused == nil {
			e.refused = be
		}
		e.mu.Unlock()
		e.logger.Debug("render connection refused", "target", target, "err", err.Error())
	} else {
		e.logger.Debug("render connection failed", "target", target, "err", err.Error())
	}
	if r.Method != http.MethodConnect {
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				_ = c.Close()
				return
			}
		}
	}
	http.Error(w, "distill egress: "+err.Error(), status)
}

// dialChecked resolves addr's host, refuses it when any address it names is
// outside the policy, and dials the first address that answers. The
// addresses dialled are the ones judged, so a DNS answer that changes
// between lookups cannot lead anywhere unjudged.
func (e *egress) dialChecked(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &netpolicy.BlockedError{Host: addr, Reason: "not a host:port"}
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || port == 0 {
		return nil, &netpolicy.BlockedError{Host: addr, Reason: "bad port " + strconv.Quote(portStr)}
	}
	addrs, err := e.policy.ResolvePort(ctx, e.resolver, host, uint16(port))
	if err != nil {
		return nil, err
	}
	var lastErr error
	for _, a := range addrs {
		c, err := e.dial(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return c, nil
		}
		lastErr = err
	}
	return nil, lastErr
}
