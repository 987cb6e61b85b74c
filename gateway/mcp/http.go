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
	"os"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"distill.dev/gateway/host"
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

// Listener is one address the server was told to serve: the listener, and
// the address as the operator wrote it, whose host is then a name requests
// may use.
type Listener struct {
	net.Listener
	// Asked is the host:port the listener was opened for; empty means its
	// own address.
	Asked string
}

// Serve serves streamable HTTP on lis until ctx ends, then stops
// gracefully: ServeListeners with one listener.
func (s *Server) Serve(ctx context.Context, lis net.Listener, token string) error {
	return s.ServeListeners(ctx, token, Listener{Listener: lis})
}

// ServeListeners serves streamable HTTP on every listener until ctx ends,
// then stops gracefully. With a token, every request must carry
// "Authorization: Bearer <token>"; an empty token serves without
// authentication. A request whose Host header names none of the addresses
// the server was told to serve is refused, so a page whose name rebinds to
// this machine (DNS rebinding) cannot talk to it.
func (s *Server) ServeListeners(ctx context.Context, token string, listeners ...Listener) error {
	if len(listeners) == 0 {
		return errors.New("mcp serve: no address to serve")
	}
	// Clients hold a GET stream open for server messages; shutdown ends
	// those at once, while tool calls in flight get the grace period.
	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	srv := &http.Server{
		Handler:           s.handler(token, hostsOf(listeners), streams),
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
	errc := make(chan error, len(listeners))
	for _, l := range listeners {
		s.logger.Info("mcp serving", "url", "http://"+l.Addr().String()+Path, "auth", token != "")
		go func() { errc <- srv.Serve(l) }()
	}
	var failed error
	select {
	case err := <-errc:
		failed = fmt.Errorf("mcp serve: %w", err)
	case <-ctx.Done():
	}
	grace, cancel := context.WithTimeout(context.Background(), GracePeriod)
	defer cancel()
	if err := srv.Shutdown(grace); err != nil {
		s.logger.Warn("mcp shutdown cut connections", "err", err.Error())
		srv.Close()
	}
	pending := len(listeners)
	if failed != nil {
		pending--
	}
	for range pending {
		if err := <-errc; !errors.Is(err, http.ErrServerClosed) && failed == nil {
			failed = fmt.Errorf("mcp serve: %w", err)
		}
	}
	if failed != nil {
		return failed
	}
	for _, l := range listeners {
		s.logger.Info("mcp stopped", "addr", l.Addr().String())
	}
	return nil
}

// handler checks, in order: the Host header, the origin of browser
// requests, and the caller's token; then serves MCP to the caller, whose
// sessions no other caller may use.
func (s *Server) handler(token string, hosts hostSet, streams context.Context) http.Handler {
	sdk := mcpsdk.NewStreamableHTTPHandler(func(r *http.Request) *mcpsdk.Server {
		if s.host == nil {
			return s.sdk
		}
		return s.host.server(callerOf(r.Context()))
	}, &mcpsdk.StreamableHTTPOptions{Logger: s.logger, SessionTimeout: idleSession})
	// The SDK binds a session to the user its token info names, and
	// refuses the session to requests of another: a session begun with one
	// actor's token is never used with another's.
	bound := auth.RequireBearerToken(func(ctx context.Context, _ string, _ *http.Request) (*auth.TokenInfo, error) {
		return &auth.TokenInfo{UserID: callerOf(ctx)}, nil
	}, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(sdk)
	mux := http.NewServeMux()
	mux.Handle(Path, http.NewCrossOriginProtection().Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller, withToken, ok := s.caller(r, token)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="distill"`)
			msg := "unauthorized: send Authorization: Bearer <token> with the token in " + string(envflag.MCPToken)
			if s.host != nil {
				msg += " or a token the host's policy names"
			}
			http.Error(w, msg, http.StatusUnauthorized)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), callerKey{}, caller))
		if r.Method == http.MethodGet {
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			defer context.AfterFunc(streams, cancel)()
			r = r.WithContext(ctx)
		}
		if withToken {
			bound.ServeHTTP(w, r)
			return
		}
		sdk.ServeHTTP(w, r)
	})))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !hosts.allows(r.Host) {
			http.Error(w, fmt.Sprintf("forbidden: Host %q is not an address this server was told to serve", r.Host), http.StatusForbidden)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// callerKey holds, in a request's context, the actor it runs as.
type callerKey struct{}

func callerOf(ctx context.Context) string {
	c, _ := ctx.Value(callerKey{}).(string)
	return c
}

// caller is the actor a request runs as, and whether it carried a token.
// Outside host mode there is one caller, with the operator's token or,
// without one, anyone. In host mode the operator's token runs as
// "default", and so does a request without a token when the server has
// no token and does not require one (--no-auth); a token of the policy in
// force runs as its actor; any other token is refused, never served as
// "default".
func (s *Server) caller(r *http.Request, token string) (actor string, withToken, ok bool) {
	cred, has := bearerToken(r)
	matches := has && token != "" && subtle.ConstantTimeCompare([]byte(cred), []byte(token)) == 1
	if s.host == nil {
		return host.DefaultActor, matches, token == "" || matches
	}
	switch {
	case r.Header.Get("Authorization") == "":
		return host.DefaultActor, false, token == "" && !s.tokenRequired
	case matches:
		return host.DefaultActor, true, true
	case has:
		actor, ok := s.host.actorOf(cred)
		return actor, true, ok
	}
	return "", false, false
}

// hostSet is what a request's Host header may name: the hosts the server
// was told to serve, the addresses it listens on, and, when it listens on
// loopback or on every address, this machine's loopback names.
type hostSet struct {
	names    map[string]bool
	loopback bool
}

func hostsOf(listeners []Listener) hostSet {
	hs := hostSet{names: map[string]bool{}}
	for _, l := range listeners {
		if h, _, err := net.SplitHostPort(l.Asked); err == nil && h != "" {
			hs.add(h)
		}
		ap, err := netip.ParseAddrPort(l.Addr().String())
		if err != nil {
			continue
		}
		a := ap.Addr().Unmap().WithZone("")
		switch {
		case a.IsUnspecified():
			// Every address of the machine serves, and every name it
			// calls itself.
			hs.loopback = true
			if addrs, err := net.InterfaceAddrs(); err == nil {
				for _, ia := range addrs {
					if p, err := netip.ParsePrefix(ia.String()); err == nil {
						hs.add(p.Addr().WithZone("").String())
					}
				}
			}
			if name, err := os.Hostname(); err == nil {
				hs.add(name)
			}
		case a.IsLoopback():
			hs.loopback = true
		default:
			hs.add(a.String())
		}
	}
	return hs
}

func (hs hostSet) add(host string) { hs.names[canonicalHost(host)] = true }

func (hs hostSet) allows(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	if hs.loopback && loopbackHost(host) {
		return true
	}
	return hs.names[canonicalHost(host)]
}

// canonicalHost is host as the set keeps it: lower case, without
// brackets or a trailing dot, an address in its canonical spelling.
func canonicalHost(host string) string {
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap().WithZone("").String()
	}
	return host
}

// bearerToken is the request's bearer credential, if it carries one.
func bearerToken(r *http.Request) (string, bool) {
	scheme, cred, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	cred = strings.TrimSpace(cred)
	return cred, ok && strings.EqualFold(scheme, "Bearer") && cred != ""
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
