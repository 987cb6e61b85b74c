package mcp

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"distill.dev/services/platform/envflag"
)

// Path is where streamable HTTP is served.
const Path = "/mcp"

// GracePeriod is how long in-flight tool calls get to finish on shutdown
// before their connections are cut.
const GracePeriod = 10 * time.Second

// idleSession is how long an MCP session over HTTP may go without a
// request before it is dropped; the client then starts a new one.
const idleSession = time.Hour

// Serve serves streamable HTTP on lis until ctx ends, then stops
// gracefully. With a token, every request must carry "Authorization:
// Bearer <token>"; an empty token serves without authentication. On a
// loopback listener, requests naming another host are refused (DNS
// rebinding).
func (s *Server) Serve(ctx context.Context, lis net.Listener, token string) error {
	// Clients hold a GET stream open for server messages; shutdown ends
	// those at once, while tool calls in flight get the grace period.
	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	srv := &http.Server{
		Handler:           s.handler(token, loopback(lis.Addr()), streams),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
	}
	// net/http's Shutdown waits up to five seconds for a connection that
	// was accepted but has carried no request yet (a client's spare dial);
	// with no request on it, nothing is in flight, so shutting down closes
	// it at once, and any the accept loop hands over afterwards.
	var mu sync.Mutex
	fresh := map[net.Conn]bool{}
	closing := false
	srv.ConnState = func(c net.Conn, st http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch {
		case st == http.StateNew && closing:
			c.Close()
		case st == http.StateNew:
			fresh[c] = true
		default:
			delete(fresh, c)
		}
	}
	srv.RegisterOnShutdown(func() {
		endStreams()
		mu.Lock()
		defer mu.Unlock()
		closing = true
		for c := range fresh {
			c.Close()
		}
	})
	s.logger.Info("mcp serving", "url", "http://"+lis.Addr().String()+Path, "auth", token != "")

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lis) }()
	select {
	case err := <-errc:
		return fmt.Errorf("mcp serve: %w", err)
	case <-ctx.Done():
	}
	grace, cancel := context.WithTimeout(context.Background(), GracePeriod)
	defer cancel()
	if err := srv.Shutdown(grace); err != nil {
		s.logger.Warn("mcp shutdown cut connections", "err", err.Error())
		srv.Close()
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("mcp serve: %w", err)
	}
	s.logger.Info("mcp stopped", "addr", lis.Addr().String())
	return nil
}

// handler checks, in order: the Host header (when guardHost), the origin of
// browser requests, and the bearer token (when set); then serves MCP.
func (s *Server) handler(token string, guardHost bool, streams context.Context) http.Handler {
	sdk := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return s.sdk },
		&mcpsdk.StreamableHTTPOptions{Logger: s.logger, SessionTimeout: idleSession})
	mux := http.NewServeMux()
	mux.Handle(Path, http.NewCrossOriginProtection().Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" && !bearer(r, token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="distill"`)
			http.Error(w, "unauthorized: send Authorization: Bearer <token> with the token in "+string(envflag.MCPToken), http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodGet {
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			defer context.AfterFunc(streams, cancel)()
			r = r.WithContext(ctx)
		}
		sdk.ServeHTTP(w, r)
	})))
	if !guardHost {
		return mux
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			http.Error(w, fmt.Sprintf("forbidden: Host %q is not this loopback server", r.Host), http.StatusForbidden)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func bearer(r *http.Request, token string) bool {
	scheme, cred, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	return ok && strings.EqualFold(scheme, "Bearer") &&
		subtle.ConstantTimeCompare([]byte(strings.TrimSpace(cred)), []byte(token)) == 1
}

func loopback(addr net.Addr) bool {
	ap, err := netip.ParseAddrPort(addr.String())
	return err == nil && ap.Addr().IsLoopback()
}

// loopbackHost reports whether a Host header names this machine's loopback:
// localhost or a loopback address, with any port.
func loopbackHost(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
