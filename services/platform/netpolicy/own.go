package netpolicy

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
)

// Own is the set of addresses the process itself listens on: its gRPC and
// MCP ports, its metrics, the renderer's egress proxies. A Policy that
// carries it refuses them even when loopback is allowed, so a caller with
// allow_local cannot turn distill on itself (its API, its proxies, whose
// other policies would then dial for it). One Own serves a whole process
// and is shared by every Policy made from it; listeners come and go while
// it is in use.
//
// A listener on an unspecified address (0.0.0.0, ::) answers on every
// address of the machine, so its port is refused on loopback and on every
// address the machine's interfaces had when it was added.
type Own struct {
	mu    sync.RWMutex
	exact map[netip.AddrPort]ownEntry
	// anyAddr holds the ports of listeners on unspecified addresses.
	anyAddr map[uint16]ownEntry
	// local are the machine's interface addresses when an unspecified
	// listener was added.
	local map[netip.Addr]bool
	next  uint64
}

type ownEntry struct {
	what string
	id   uint64
}

// OwnReason starts the reason of every refusal of an own address.
const OwnReason = "distill's own"

// NewOwn returns an empty set.
func NewOwn() *Own {
	return &Own{exact: map[netip.AddrPort]ownEntry{}, anyAddr: map[uint16]ownEntry{}, local: map[netip.Addr]bool{}}
}

// Add records a listening address; what names it in refusals ("gRPC
// port"). The returned remove forgets it again, for a listener that
// closes while the process goes on; it is safe to call more than once.
// An address that is not a TCP ip:port is ignored: nothing can dial it.
func (o *Own) Add(addr net.Addr, what string) (remove func()) {
	if o == nil || addr == nil {
		return func() {}
	}
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil {
		return func() {}
	}
	ap = netip.AddrPortFrom(ap.Addr().Unmap().WithZone(""), ap.Port())
	o.mu.Lock()
	defer o.mu.Unlock()
	o.next++
	e := ownEntry{what: what, id: o.next}
	if ap.Addr().IsUnspecified() {
		o.anyAddr[ap.Port()] = e
		for _, a := range interfaceAddrs() {
			o.local[a] = true
		}
		return func() {
			o.mu.Lock()
			defer o.mu.Unlock()
			if o.anyAddr[ap.Port()].id == e.id {
				delete(o.anyAddr, ap.Port())
			}
		}
	}
	o.exact[ap] = e
	return func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.exact[ap].id == e.id {
			delete(o.exact, ap)
		}
	}
}

// OwnAddr is one listening address held by an Own.
type OwnAddr struct {
	What string
	// Addr is the listening address; on an unspecified address it stands
	// for every address of the machine.
	Addr netip.AddrPort
}

// Addrs lists the addresses held now, for logs and tests.
func (o *Own) Addrs() []OwnAddr {
	if o == nil {
		return nil
	}
	o.mu.RLock()
	defer o.mu.RUnlock()
	var out []OwnAddr
	for ap, e := range o.exact {
		out = append(out, OwnAddr{What: e.what, Addr: ap})
	}
	for port, e := range o.anyAddr {
		out = append(out, OwnAddr{What: e.what, Addr: netip.AddrPortFrom(netip.IPv6Unspecified(), port)})
	}
	return out
}

// check returns a *BlockedError when ap is one of the process's own
// listening addresses.
func (o *Own) check(ap netip.AddrPort) error {
	if o == nil {
		return nil
	}
	a := ap.Addr().Unmap().WithZone("")
	ap = netip.AddrPortFrom(a, ap.Port())
	o.mu.RLock()
	defer o.mu.RUnlock()
	e, ok := o.exact[ap]
	if !ok {
		if e, ok = o.anyAddr[ap.Port()]; ok && !(a.IsLoopback() || a.IsUnspecified() || o.local[a]) {
			ok = false
		}
	}
	if !ok {
		return nil
	}
	return &BlockedError{Addr: a, Reason: fmt.Sprintf("%s %s %s, never reachable even with allow_local", OwnReason, e.what, ap)}
}

// interfaceAddrs are the machine's own addresses. A machine whose
// interfaces cannot be listed still has loopback, which check covers.
func interfaceAddrs() []netip.Addr {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range addrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil {
			out = append(out, p.Addr().Unmap().WithZone(""))
		}
	}
	return out
}
