package render

import (
	"context"
	"net"
	"net/url"
	"strconv"
	"sync"

	"distill.dev/services/platform/netpolicy"
)

// guard applies the network policy to the requests of one render. It
// judges each URL and every address its host resolves to before the
// browser is let go, so a refused request fails at once with a clear
// reason. It is the first of two checks: the connection itself goes through
// the render's egress proxy, which resolves again and dials only what it
// judged, so a DNS answer that changes after this check (rebinding) still
// leads nowhere unjudged. Answers are cached for the render so a page of
// many resources costs one lookup per host and port.
type guard struct {
	policy   netpolicy.Policy
	resolver *net.Resolver

	mu    sync.Mutex
	hosts map[string]error
}

func newGuard(p netpolicy.Policy, r *net.Resolver) *guard {
	return &guard{policy: p, resolver: r, hosts: map[string]error{}}
}

// check returns nil when raw may be requested.
func (g *guard) check(ctx context.Context, raw string) error {
	u, err := g.policy.CheckURL(raw)
	if err != nil {
		return err
	}
	return g.checkHost(ctx, u)
}

// checkAsset is check for a subresource, which may also come from an
// approved asset origin of the host's allowlist.
func (g *guard) checkAsset(ctx context.Context, raw string) error {
	u, err := g.policy.CheckAssetURL(raw)
	if err != nil {
		return err
	}
	return g.checkHost(ctx, u)
}

func (g *guard) checkHost(ctx context.Context, u *url.URL) error {
	// The port matters too: the process's own listeners are refused on
	// whichever address leads to them.
	port, ok := netpolicy.Port(u)
	if !ok {
		return &netpolicy.BlockedError{Host: u.Host, Reason: "bad port " + strconv.Quote(u.Port())}
	}
	key := net.JoinHostPort(u.Hostname(), strconv.Itoa(int(port)))
	g.mu.Lock()
	err, seen := g.hosts[key]
	g.mu.Unlock()
	if seen {
		return err
	}
	_, err = g.policy.ResolvePort(ctx, g.resolver, u.Hostname(), port)
	g.mu.Lock()
	g.hosts[key] = err
	g.mu.Unlock()
	return err
}
