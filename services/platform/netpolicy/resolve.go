package netpolicy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
)

// Resolve returns the addresses host stands for, refusing it when any of
// them is outside p. host is a URL's host without port or brackets. An
// address literal, in any spelling CheckURL reads, is judged and returned
// without a lookup; a name is looked up with r (nil means
// net.DefaultResolver) and every address of the answer is judged, so a
// caller that dials only the addresses returned dials nothing unjudged.
// Addresses come back with IPv4-mapped forms unmapped.
//
// A refusal is a *BlockedError naming host, and so is a host CheckURL
// cannot read. A failed lookup or an empty answer is a plain error: the
// host may be fine, it just cannot be reached now.
func (p Policy) Resolve(ctx context.Context, r *net.Resolver, host string) ([]netip.Addr, error) {
	// CheckURL reads the host as a browser would (IPv4 in any spelling,
	// IPv6, reserved names) and judges it when it is a literal.
	// The allowlists judge a host with its port (ResolvePort); here only
	// the ranges do.
	u, err := p.checkURL("http://" + net.JoinHostPort(host, "80") + "/")
	if err != nil {
		if be, ok := errors.AsType[*BlockedError](err); ok {
			return nil, be
		}
		return nil, &BlockedError{Host: host, Reason: err.Error()}
	}
	if a, err := netip.ParseAddr(u.Hostname()); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	if r == nil {
		r = net.DefaultResolver
	}
	addrs, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", host)
	}
	for i, a := range addrs {
		a = a.Unmap()
		if err := p.CheckAddr(a); err != nil {
			return nil, withHost(err, host)
		}
		addrs[i] = a
	}
	return addrs, nil
}

// ResolvePort is Resolve for a connection to port: an answer that is one
// of the process's own listening addresses (Own) refuses host too, and so
// does a host or port off one of p.Allowlists. The scheme is not judged:
// a proxy's CONNECT does not say it.
func (p Policy) ResolvePort(ctx context.Context, r *net.Resolver, host string, port uint16) ([]netip.Addr, error) {
	for _, a := range p.Allowlists {
		if err := a.CheckHostPort(host, port); err != nil {
			return nil, err
		}
	}
	addrs, err := p.Resolve(ctx, r, host)
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		if err := p.Own.check(netip.AddrPortFrom(a, port)); err != nil {
			return nil, withHost(err, host)
		}
	}
	return addrs, nil
}
