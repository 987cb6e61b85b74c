package netpolicy

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// checkAddrCases are addresses at the edges of every range the policy
// knows, and the IPv6 forms that carry an IPv4 address; FuzzCheckAddr
// starts from them too.
var checkAddrCases = []struct {
	name  string
	addr  string
	allow bool   // AllowLoopback
	want  string // "" = allowed, else a substring of the refusal
}{
	// Public addresses, including the edges of the blocked ranges.
	{name: "public IPv4", addr: "93.184.215.14"},
	{name: "public resolver", addr: "8.8.8.8"},
	{name: "just below CGNAT", addr: "100.63.255.255"},
	{name: "just above CGNAT", addr: "100.128.0.0"},
	{name: "just below 172.16/12", addr: "172.15.255.255"},
	{name: "just above 172.16/12", addr: "172.32.0.0"},
	{name: "just below benchmarking", addr: "198.17.255.255"},
	{name: "just above benchmarking", addr: "198.20.0.0"},
	{name: "last unicast before multicast", addr: "223.255.255.255"},
	{name: "public IPv6", addr: "2606:4700:4700::1111"},
	{name: "public IPv6 Google", addr: "2001:4860:4860::8888"},
	{name: "IPv4-mapped public", addr: "::ffff:8.8.8.8"},
	{name: "IPv4-compatible public", addr: "::8.8.8.8"},
	{name: "NAT64 public", addr: "64:ff9b::808:808"},
	{name: "local-use NAT64 /96 public", addr: "64:ff9b:1::808:808"},
	{name: "local-use NAT64 /64 public", addr: "64:ff9b:1:0:8:808:800:0"},
	{name: "6to4 public", addr: "2002:808:808::1"},
	{name: "Teredo public client", addr: "2001:0:4136:e378:8000:63bf:f7f7:f7f7"},

	// Loopback, and what allow_local frees.
	{name: "loopback", addr: "127.0.0.1", want: "loopback 127.0.0.0/8"},
	{name: "loopback high", addr: "127.255.255.254", want: "loopback"},
	{name: "loopback IPv6", addr: "::1", want: "loopback ::1/128"},
	{name: "loopback IPv4-mapped", addr: "::ffff:127.0.0.1", want: "IPv4-mapped ::ffff:0.0.0.0/96 carrying 127.0.0.1: loopback"},
	{name: "allowed loopback", addr: "127.0.0.1", allow: true},
	{name: "allowed loopback high", addr: "127.8.9.10", allow: true},
	{name: "allowed loopback IPv6", addr: "::1", allow: true},
	{name: "allowed loopback IPv4-mapped", addr: "::ffff:127.0.0.1", allow: true},
	{name: "allow_local keeps private blocked", addr: "10.0.0.1", allow: true, want: "private range"},
	{name: "allow_local keeps metadata blocked", addr: "169.254.169.254", allow: true, want: "cloud metadata"},
	{name: "allow_local keeps unspecified blocked", addr: "0.0.0.0", allow: true, want: "unspecified"},
	{name: "allow_local keeps IPv6 unspecified blocked", addr: "::", allow: true, want: "unspecified"},
	{name: "allow_local keeps ULA blocked", addr: "fd00::1", allow: true, want: "unique local"},
	{name: "allow_local does not free NAT64 loopback", addr: "64:ff9b::7f00:1", allow: true, want: "NAT64 64:ff9b::/96 carrying 127.0.0.1"},
	{name: "allow_local does not free 6to4 loopback", addr: "2002:7f00:1::", allow: true, want: "6to4"},
	{name: "allow_local does not free compatible loopback", addr: "::127.0.0.1", allow: true, want: "IPv4-compatible"},

	// IPv4 special ranges.
	{name: "unspecified", addr: "0.0.0.0", want: "unspecified address"},
	{name: "this network", addr: "0.1.2.3", want: "this-network range 0.0.0.0/8"},
	{name: "private 10/8", addr: "10.0.0.1", want: "private range 10.0.0.0/8"},
	{name: "private 10/8 top", addr: "10.255.255.255", want: "private range 10.0.0.0/8"},
	{name: "private 172.16/12", addr: "172.16.0.1", want: "private range 172.16.0.0/12"},
	{name: "private 172.16/12 top", addr: "172.31.255.255", want: "private range 172.16.0.0/12"},
	{name: "private 192.168/16", addr: "192.168.1.1", want: "private range 192.168.0.0/16"},
	{name: "cloud metadata", addr: "169.254.169.254", want: "cloud metadata endpoint"},
	{name: "link-local", addr: "169.254.1.1", want: "link-local range 169.254.0.0/16"},
	{name: "CGNAT", addr: "100.64.0.1", want: "CGNAT"},
	{name: "CGNAT top", addr: "100.127.255.255", want: "CGNAT"},
	{name: "IETF protocol assignments", addr: "192.0.0.8", want: "192.0.0.0/24"},
	{name: "TEST-NET-1", addr: "192.0.2.1", want: "documentation range 192.0.2.0/24"},
	{name: "TEST-NET-2", addr: "198.51.100.7", want: "documentation range 198.51.100.0/24"},
	{name: "TEST-NET-3", addr: "203.0.113.9", want: "documentation range 203.0.113.0/24"},
	{name: "6to4 relay anycast", addr: "192.88.99.1", want: "192.88.99.0/24"},
	{name: "benchmarking", addr: "198.18.0.1", want: "benchmarking range 198.18.0.0/15"},
	{name: "benchmarking top", addr: "198.19.255.255", want: "benchmarking"},
	{name: "multicast", addr: "224.0.0.1", want: "multicast 224.0.0.0/4"},
	{name: "SSDP multicast", addr: "239.255.255.250", want: "multicast"},
	{name: "reserved", addr: "240.0.0.1", want: "reserved range 240.0.0.0/4"},
	{name: "broadcast", addr: "255.255.255.255", want: "broadcast"},

	// IPv6 special ranges.
	{name: "IPv6 unspecified", addr: "::", want: "unspecified address ::/128"},
	{name: "ULA fc", addr: "fc00::1", want: "unique local range fc00::/7"},
	{name: "ULA fd", addr: "fd12:3456:789a::1", want: "unique local"},
	{name: "IPv6 link-local", addr: "fe80::1", want: "link-local range fe80::/10"},
	{name: "IPv6 link-local with zone", addr: "fe80::1%eth0", want: "link-local"},
	{name: "IPv6 link-local top", addr: "febf::1", want: "link-local"},
	{name: "IPv6 site-local", addr: "fec0::1", want: "site-local range fec0::/10"},
	{name: "IPv6 multicast all nodes", addr: "ff02::1", want: "multicast ff00::/8"},
	{name: "IPv6 multicast global", addr: "ff0e::1", want: "multicast"},
	{name: "IPv6 documentation", addr: "2001:db8::1", want: "documentation range 2001:db8::/32"},
	{name: "IPv6 documentation 3fff", addr: "3fff:1::1", want: "documentation range 3fff::/20"},
	{name: "IPv6 discard", addr: "100::1", want: "discard range 100::/64"},
	{name: "IPv6 benchmarking", addr: "2001:2::1", want: "benchmarking"},
	{name: "ORCHIDv2", addr: "2001:20::1", want: "ORCHIDv2"},
	{name: "outside global unicast", addr: "4000::1", want: "outside global unicast 2000::/3"},
	{name: "SRv6 SID space", addr: "5f00::1", want: "outside global unicast"},
	{name: "IPv4-translated SIIT", addr: "::ffff:0:a00:1", want: "outside global unicast"},

	// IPv6 forms carrying a blocked IPv4 address.
	{name: "IPv4-mapped private", addr: "::ffff:10.0.0.1", want: "IPv4-mapped ::ffff:0.0.0.0/96 carrying 10.0.0.1: private range"},
	{name: "IPv4-mapped metadata hex", addr: "::ffff:a9fe:a9fe", want: "carrying 169.254.169.254: cloud metadata"},
	{name: "IPv4-compatible private", addr: "::10.0.0.1", want: "IPv4-compatible ::/96 carrying 10.0.0.1"},
	{name: "NAT64 private", addr: "64:ff9b::a00:1", want: "NAT64 64:ff9b::/96 carrying 10.0.0.1"},
	{name: "NAT64 metadata", addr: "64:ff9b::169.254.169.254", want: "cloud metadata"},
	{name: "local-use NAT64 /96 private", addr: "64:ff9b:1::a00:1", want: "local-use NAT64"},
	{name: "local-use NAT64 /64 private", addr: "64:ff9b:1:0:a:0:100:0", want: "carrying 10.0.0.1"},
	{name: "local-use NAT64 /48 layout fails closed", addr: "64:ff9b:1:808:8:800::", want: "local-use NAT64"},
	{name: "6to4 private", addr: "2002:a00:1::1", want: "6to4 2002::/16 carrying 10.0.0.1"},
	{name: "6to4 metadata", addr: "2002:a9fe:a9fe::", want: "cloud metadata"},
	{name: "Teredo private client", addr: "2001:0:4136:e378:8000:63bf:f5ff:fffe", want: "Teredo 2001::/32 carrying 10.0.0.1"},
	{name: "Teredo loopback client", addr: "2001:0:4136:e378:8000:63bf:80ff:fffe", want: "carrying 127.0.0.1"},

	{name: "zero value", addr: "", want: "invalid address"},
}

func TestCheckAddr(t *testing.T) {
	for _, tt := range checkAddrCases {
		t.Run(tt.name, func(t *testing.T) {
			var a netip.Addr
			if tt.addr != "" {
				a = netip.MustParseAddr(tt.addr)
			}
			err := Policy{AllowLoopback: tt.allow}.CheckAddr(a)
			checkVerdict(t, err, tt.want)
		})
	}
}

func checkVerdict(t *testing.T, err error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("refused, want allowed: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("allowed, want refusal naming %q", want)
	}
	if !errors.Is(err, ErrBlocked) {
		t.Fatalf("error %v is not ErrBlocked", err)
	}
	if _, ok := errors.AsType[*BlockedError](err); !ok {
		t.Fatalf("error %T is not a *BlockedError", err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("error %q does not mention %q", err, want)
	}
}

func TestBlockedErrorMessage(t *testing.T) {
	err := Policy{}.CheckAddr(netip.MustParseAddr("10.0.0.1"))
	const want = "blocked by network policy: 10.0.0.1 (private range 10.0.0.0/8)"
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %q", err, want)
	}
}

func TestControl(t *testing.T) {
	tests := []struct {
		name    string
		address string
		allow   bool
		want    string
	}{
		{name: "public", address: "93.184.215.14:443"},
		{name: "private", address: "10.0.0.1:80", want: "10.0.0.1 (private range"},
		{name: "loopback IPv6", address: "[::1]:80", want: "loopback"},
		{name: "allowed loopback", address: "127.0.0.1:8080", allow: true},
		{name: "link-local with zone", address: "[fe80::1%eth0]:80", want: "link-local"},
		{name: "not an IP", address: "example.com:80", want: "not an IP address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Policy{AllowLoopback: tt.allow}.Control("tcp", tt.address, nil)
			checkVerdict(t, err, tt.want)
		})
	}
}
