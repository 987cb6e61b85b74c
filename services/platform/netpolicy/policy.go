// Package netpolicy decides which network addresses distill may connect to.
// It is the one place the SSRF policy lives: the fetcher applies it to URLs
// and, through Control, to every socket it dials, so a name that resolves to
// a private address at connect time is refused however it was spelled or
// however its DNS answer changed. It has no HTTP dependency so that the
// renderer can apply the same policy to the browser's requests.
package netpolicy

import (
	"fmt"
	"net/netip"
	"syscall"
)

// Policy is the set of destinations allowed. The zero value allows only
// publicly routable unicast addresses.
type Policy struct {
	// AllowLoopback frees 127.0.0.0/8, ::1 and the name localhost, for local
	// development and tests. It never frees private, link-local or metadata
	// addresses.
	AllowLoopback bool
	// Own, when set, holds the process's own listening addresses, which
	// are refused whatever AllowLoopback says.
	Own *Own
	// Allowlists, when set, are a host platform's lists for the actor the
	// call runs for: a URL or a host:port must pass every one of them as
	// well as the ranges above. They only ever narrow.
	Allowlists []*Allowlist
}

type blockedRange struct {
	prefix   netip.Prefix
	kind     string
	loopback bool
}

// Order matters: the first match names the reason, so narrower ranges come
// before the ranges that contain them.
var blockedV4 = []blockedRange{
	{prefix: netip.MustParsePrefix("0.0.0.0/32"), kind: "unspecified address"},
	{prefix: netip.MustParsePrefix("0.0.0.0/8"), kind: "this-network range"},
	{prefix: netip.MustParsePrefix("10.0.0.0/8"), kind: "private range"},
	{prefix: netip.MustParsePrefix("100.64.0.0/10"), kind: "shared address space (CGNAT)"},
	{prefix: netip.MustParsePrefix("127.0.0.0/8"), kind: "loopback", loopback: true},
	{prefix: netip.MustParsePrefix("169.254.169.254/32"), kind: "cloud metadata endpoint"},
	{prefix: netip.MustParsePrefix("169.254.0.0/16"), kind: "link-local range"},
	{prefix: netip.MustParsePrefix("172.16.0.0/12"), kind: "private range"},
	{prefix: netip.MustParsePrefix("192.0.0.0/24"), kind: "IETF protocol assignments"},
	{prefix: netip.MustParsePrefix("192.0.2.0/24"), kind: "documentation range"},
	{prefix: netip.MustParsePrefix("192.88.99.0/24"), kind: "6to4 relay anycast"},
	{prefix: netip.MustParsePrefix("192.168.0.0/16"), kind: "private range"},
	{prefix: netip.MustParsePrefix("198.18.0.0/15"), kind: "benchmarking range"},
	{prefix: netip.MustParsePrefix("198.51.100.0/24"), kind: "documentation range"},
	{prefix: netip.MustParsePrefix("203.0.113.0/24"), kind: "documentation range"},
	{prefix: netip.MustParsePrefix("224.0.0.0/4"), kind: "multicast"},
	{prefix: netip.MustParsePrefix("255.255.255.255/32"), kind: "broadcast"},
	{prefix: netip.MustParsePrefix("240.0.0.0/4"), kind: "reserved range"},
}

var blockedV6 = []blockedRange{
	{prefix: netip.MustParsePrefix("::/128"), kind: "unspecified address"},
	{prefix: netip.MustParsePrefix("::1/128"), kind: "loopback", loopback: true},
	{prefix: netip.MustParsePrefix("100::/64"), kind: "discard range"},
	{prefix: netip.MustParsePrefix("2001:2::/48"), kind: "benchmarking range"},
	{prefix: netip.MustParsePrefix("2001:10::/28"), kind: "ORCHID range"},
	{prefix: netip.MustParsePrefix("2001:20::/28"), kind: "ORCHIDv2 range"},
	{prefix: netip.MustParsePrefix("2001:db8::/32"), kind: "documentation range"},
	{prefix: netip.MustParsePrefix("3fff::/20"), kind: "documentation range"},
	{prefix: netip.MustParsePrefix("fc00::/7"), kind: "unique local range"},
	{prefix: netip.MustParsePrefix("fe80::/10"), kind: "link-local range"},
	{prefix: netip.MustParsePrefix("fec0::/10"), kind: "site-local range"},
	{prefix: netip.MustParsePrefix("ff00::/8"), kind: "multicast"},
}

// globalUnicast holds every IPv6 address assigned for public use. Anything
// outside it that is not an IPv4 embedding is reserved or special-purpose,
// so refusing it closes ranges IANA may carve out later.
var globalUnicast = netip.MustParsePrefix("2000::/3")

// embedding is an IPv6 range whose addresses carry an IPv4 address; the
// IPv4 address decides, because that is where the packets end up.
type embedding struct {
	prefix netip.Prefix
	kind   string
	// local is true when the IPv4 address is this host's own (IPv4-mapped
	// sockets), so AllowLoopback applies. Tunnelled forms reach another
	// machine, whose loopback is never ours to allow.
	local bool
	ipv4  func(a [16]byte) []netip.Addr
}

var embeddings = []embedding{
	{prefix: netip.MustParsePrefix("::ffff:0:0/96"), kind: "IPv4-mapped", local: true, ipv4: last32},
	{prefix: netip.MustParsePrefix("64:ff9b::/96"), kind: "NAT64", ipv4: last32},
	{prefix: netip.MustParsePrefix("64:ff9b:1::/48"), kind: "local-use NAT64", ipv4: rfc6052},
	{prefix: netip.MustParsePrefix("2002::/16"), kind: "6to4", ipv4: func(a [16]byte) []netip.Addr {
		return []netip.Addr{netip.AddrFrom4([4]byte{a[2], a[3], a[4], a[5]})}
	}},
	{prefix: netip.MustParsePrefix("2001::/32"), kind: "Teredo", ipv4: func(a [16]byte) []netip.Addr {
		// The client address is stored inverted (RFC 4380 section 4).
		return []netip.Addr{netip.AddrFrom4([4]byte{^a[12], ^a[13], ^a[14], ^a[15]})}
	}},
	// Last: :: and ::1 are in this range and are judged as themselves first.
	{prefix: netip.MustParsePrefix("::/96"), kind: "IPv4-compatible", ipv4: last32},
}

func last32(a [16]byte) []netip.Addr {
	return []netip.Addr{netip.AddrFrom4([4]byte{a[12], a[13], a[14], a[15]})}
}

// rfc6052 returns the IPv4 addresses a local-use NAT64 address may carry.
// The operator chooses the prefix length (48, 56, 64 or 96 inside
// 64:ff9b:1::/48) and it cannot be read off the address, so the /96 reading
// and every shorter layout whose reserved octet and suffix are zero, as
// RFC 6052 requires, are candidates, and one refused candidate refuses the
// address. This fails closed: /48 and /56 layouts read as 0.0.0.0 in the
// /96 layout and are always refused.
func rfc6052(a [16]byte) []netip.Addr {
	layouts := []struct {
		octets [4]int
		suffix int // first byte of the suffix, which must be zero
	}{
		{octets: [4]int{6, 7, 9, 10}, suffix: 11},
		{octets: [4]int{7, 9, 10, 11}, suffix: 12},
		{octets: [4]int{9, 10, 11, 12}, suffix: 13},
	}
	out := last32(a)
	for _, l := range layouts {
		if a[8] != 0 || !allZero(a[l.suffix:]) {
			continue
		}
		out = append(out, netip.AddrFrom4([4]byte{a[l.octets[0]], a[l.octets[1]], a[l.octets[2]], a[l.octets[3]]}))
	}
	return out
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// CheckAddr returns a *BlockedError if a may not be connected to.
func (p Policy) CheckAddr(a netip.Addr) error {
	if !a.IsValid() {
		return &BlockedError{Addr: a, Reason: "invalid address"}
	}
	// A zone only selects an interface; the address decides.
	a = a.WithZone("")
	if a.Is4() {
		if reason := p.v4Reason(a); reason != "" {
			return &BlockedError{Addr: a, Reason: reason}
		}
		return nil
	}
	if r, ok := match(blockedV6, a); ok {
		if r.loopback && p.AllowLoopback {
			return nil
		}
		return &BlockedError{Addr: a, Reason: r.kind + " " + r.prefix.String()}
	}
	for _, e := range embeddings {
		if !e.prefix.Contains(a) {
			continue
		}
		inner := Policy{AllowLoopback: p.AllowLoopback && e.local}
		for _, v4 := range e.ipv4(a.As16()) {
			if reason := inner.v4Reason(v4); reason != "" {
				return &BlockedError{Addr: a, Reason: fmt.Sprintf("%s %s carrying %s: %s", e.kind, e.prefix, v4, reason)}
			}
		}
		return nil
	}
	if !globalUnicast.Contains(a) {
		return &BlockedError{Addr: a, Reason: "outside global unicast " + globalUnicast.String()}
	}
	return nil
}

func (p Policy) v4Reason(a netip.Addr) string {
	r, ok := match(blockedV4, a)
	if !ok || (r.loopback && p.AllowLoopback) {
		return ""
	}
	return r.kind + " " + r.prefix.String()
}

func match(table []blockedRange, a netip.Addr) (blockedRange, bool) {
	for _, r := range table {
		if r.prefix.Contains(a) {
			return r, true
		}
	}
	return blockedRange{}, false
}

// CheckAddrPort is CheckAddr for a connection to a port: it also refuses
// the process's own listening addresses (Own).
func (p Policy) CheckAddrPort(ap netip.AddrPort) error {
	if err := p.CheckAddr(ap.Addr()); err != nil {
		return err
	}
	return p.Own.check(ap)
}

// Control is a net.Dialer Control function. It runs after name resolution,
// on the address about to be connected, so the verdict covers what is
// actually dialled: a DNS answer that changes between a check and the
// connect (rebinding) cannot slip through.
func (p Policy) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		// The dialer always hands over ip:port; anything else cannot be
		// judged, and what cannot be judged is refused.
		return &BlockedError{Host: address, Reason: "not an IP address on " + network}
	}
	return p.CheckAddrPort(ap)
}
