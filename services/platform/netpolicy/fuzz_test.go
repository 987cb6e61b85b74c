package netpolicy

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// The fuzz targets run on their seeds in every go test; go test -fuzz
// explores from there:
//
//	go test -run '^$' -fuzz FuzzCheckURL ./services/platform/netpolicy

// strict and local are the two policies a request can ask for.
var (
	strict = Policy{}
	local  = Policy{AllowLoopback: true}
)

// FuzzCheckURL checks what holds for any string given as a URL: the
// verdict is typed, allow_local only ever frees loopback, and a URL that
// passes comes back in a form that passes again as itself, whose literal
// host, if it has one, is an address the policy allows.
func FuzzCheckURL(f *testing.F) {
	for _, c := range checkURLCases {
		f.Add(c.raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u0, err0 := strict.CheckURL(raw)
		u1, err1 := local.CheckURL(raw)
		k0, k1 := verdictKind(t, err0), verdictKind(t, err1)
		if (k0 == "invalid") != (k1 == "invalid") {
			t.Fatalf("%q is %s strictly but %s with allow_local", raw, k0, k1)
		}
		if k0 == "allowed" && k1 != "allowed" {
			t.Fatalf("%q is allowed strictly but %s with allow_local: %v", raw, k1, err1)
		}
		if k0 == "allowed" {
			checkAllowedURL(t, strict, raw, u0)
		}
		if k1 == "allowed" {
			checkAllowedURL(t, local, raw, u1)
		}
	})
}

// verdictKind is "allowed", "blocked" or "invalid"; an error of no kind, or
// of both, fails the test.
func verdictKind(t *testing.T, err error) string {
	t.Helper()
	if err == nil {
		return "allowed"
	}
	_, blocked := errors.AsType[*BlockedError](err)
	_, invalid := errors.AsType[*InvalidURLError](err)
	switch {
	case blocked && !invalid && errors.Is(err, ErrBlocked) && !errors.Is(err, ErrInvalidURL):
		return "blocked"
	case invalid && !blocked && errors.Is(err, ErrInvalidURL) && !errors.Is(err, ErrBlocked):
		return "invalid"
	}
	t.Fatalf("error %T %v is neither blocked nor invalid", err, err)
	return ""
}

// checkAllowedURL checks a URL p let through: it is http(s) with a host;
// what it says is what p judges again; and a literal host is an address p
// allows.
func checkAllowedURL(t *testing.T, p Policy, raw string, u *url.URL) {
	t.Helper()
	if u == nil {
		t.Fatalf("%q allowed without a URL", raw)
	}
	host := u.Hostname()
	if host == "" {
		t.Fatalf("%q allowed with no host: %s", raw, u)
	}
	again, err := p.CheckURL(u.String())
	if err != nil {
		t.Fatalf("%q allowed as %s, which is refused: %v", raw, u, err)
	}
	if again.String() != u.String() {
		t.Fatalf("%q allowed as %s, which comes back as %s", raw, u, again)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if err := p.CheckAddr(a); err != nil {
			t.Fatalf("%q allowed, and its host %s is refused: %v", raw, host, err)
		}
	}
}

// FuzzCheckAddr checks what holds of the address verdicts: allow_local
// frees only what is loopback, a zone never changes a verdict, an IPv4
// address and its IPv4-mapped form get the same one, and the tunnelled
// forms of a refused IPv4 address (NAT64, 6to4) are refused however
// loopback is treated.
func FuzzCheckAddr(f *testing.F) {
	for _, c := range checkAddrCases {
		f.Add(c.addr)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return
		}
		for _, p := range []Policy{strict, local} {
			verdict := p.CheckAddr(a)
			if verdict != nil {
				verdictKind(t, verdict)
			}
			if a.Is6() {
				if z := (p.CheckAddr(a.WithZone("eth0")) == nil); z != (verdict == nil) {
					t.Fatalf("%s with a zone is allowed=%v, without allowed=%v", a, z, verdict == nil)
				}
			}
			if !a.Is4() {
				continue
			}
			mapped := netip.AddrFrom16(a.As16())
			if m := p.CheckAddr(mapped); (m == nil) != (verdict == nil) {
				t.Fatalf("%s allowed=%v, but its mapped form %s allowed=%v", a, verdict == nil, mapped, m == nil)
			}
			if verdict == nil {
				continue
			}
			v4 := a.As4()
			for _, tunnel := range []netip.Addr{
				netip.AddrFrom16([16]byte{0, 0x64, 0xff, 0x9b, 12: v4[0], 13: v4[1], 14: v4[2], 15: v4[3]}),
				netip.AddrFrom16([16]byte{0x20, 0x02, v4[0], v4[1], v4[2], v4[3], 15: 1}),
			} {
				if local.CheckAddr(tunnel) == nil {
					t.Fatalf("%s is refused, but %s carrying it is allowed", a, tunnel)
				}
			}
		}
		if strict.CheckAddr(a) == nil && local.CheckAddr(a) != nil {
			t.Fatalf("%s is allowed strictly but refused with allow_local", a)
		}
	})
}

// FuzzIPv4Spelling spells an IPv4 address in the ways a browser reads it
// (one to four parts, each decimal, octal or hex, with leading zeros, a
// trailing dot, full-width digits or ideographic full stops, behind
// userinfo, with a port) and checks that the URL's verdict is the
// address's: a refused address never passes by being respelled, and the
// URL comes back dotted.
func FuzzIPv4Spelling(f *testing.F) {
	for _, s := range []string{"127.0.0.1", "169.254.169.254", "10.0.0.1", "0.0.0.0", "192.168.0.1", "100.64.0.1", "224.0.0.1", "255.255.255.255", "93.184.215.14", "8.8.8.8"} {
		a := netip.MustParseAddr(s).As4()
		for style := range 8 {
			f.Add(uint32(a[0])<<24|uint32(a[1])<<16|uint32(a[2])<<8|uint32(a[3]), uint8(style), uint16(style*0x1357))
		}
	}
	f.Fuzz(func(t *testing.T, v uint32, parts uint8, style uint16) {
		a := netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)})
		host := spellIPv4(v, int(parts%4)+1, style)
		raw := "http://" + host + "/"
		switch style >> 12 & 3 {
		case 1:
			raw = "http://user:pass@" + host + "/"
		case 2:
			raw = "http://example.com@" + host + ":8080/x"
		case 3:
			raw = "https://" + host + ":443/?q"
		}
		for _, p := range []Policy{strict, local} {
			if u := addrVerdict(t, p, raw, a); u.Hostname() != a.String() {
				t.Fatalf("%s (%s) comes back as host %s", raw, a, u.Hostname())
			}
		}
	})
}

// spellIPv4 writes v in n parts, the last filling the bytes left; style
// picks, bit by bit, each part's base, its leading zeros, upper-case hex,
// a trailing dot, full-width digits and ideographic full stops.
func spellIPv4(v uint32, n int, style uint16) string {
	nums := make([]uint64, n)
	for i := range n - 1 {
		nums[i] = uint64(v >> (8 * (3 - i)) & 0xff)
	}
	nums[n-1] = uint64(v) & (1<<(8*(5-n)) - 1)
	out := make([]string, n)
	for i, num := range nums {
		var s string
		switch style >> (2 * i) & 3 {
		case 0:
			s = strconv.FormatUint(num, 10)
		case 1:
			s = "0" + strconv.FormatUint(num, 8)
		case 2:
			s = "0x" + strconv.FormatUint(num, 16)
		case 3:
			s = "0X00" + strings.ToUpper(strconv.FormatUint(num, 16))
		}
		if style&(1<<8) != 0 && s[0] == '0' && len(s) > 1 && s[1] != 'x' && s[1] != 'X' {
			s = "00" + s
		}
		out[i] = s
	}
	dot := "."
	if style&(1<<9) != 0 {
		dot = "。"
	}
	host := strings.Join(out, dot)
	if style&(1<<10) != 0 {
		host += "."
	}
	if style&(1<<11) != 0 {
		host = strings.Map(func(r rune) rune {
			if '0' <= r && r <= '9' {
				return r - '0' + '０'
			}
			return r
		}, host)
	}
	return host
}

// FuzzIPv6Spelling spells an IPv6 address compressed, in full, in upper
// case, with a dotted IPv4 tail, with a zone, and with a port, and checks
// that the URL's verdict is the address's.
func FuzzIPv6Spelling(f *testing.F) {
	for _, c := range checkAddrCases {
		if a, err := netip.ParseAddr(c.addr); err == nil && a.Is6() {
			b := a.As16()
			f.Add(beUint64(b[:8]), beUint64(b[8:]), uint8(len(c.name)))
		}
	}
	f.Fuzz(func(t *testing.T, hi, lo uint64, style uint8) {
		var b [16]byte
		for i := range 8 {
			b[i], b[8+i] = byte(hi>>(56-8*i)), byte(lo>>(56-8*i))
		}
		a := netip.AddrFrom16(b)
		var host string
		switch style & 3 {
		case 0:
			host = a.String()
		case 1:
			host = a.StringExpanded()
		case 2:
			host = strings.ToUpper(a.StringExpanded())
		case 3:
			host = fmt.Sprintf("%x:%x:%x:%x:%x:%x:%d.%d.%d.%d",
				uint16(b[0])<<8|uint16(b[1]), uint16(b[2])<<8|uint16(b[3]), uint16(b[4])<<8|uint16(b[5]),
				uint16(b[6])<<8|uint16(b[7]), uint16(b[8])<<8|uint16(b[9]), uint16(b[10])<<8|uint16(b[11]),
				b[12], b[13], b[14], b[15])
		}
		if style&4 != 0 {
			host += "%25eth0"
		}
		raw := "http://[" + host + "]/"
		if style&8 != 0 {
			raw = "https://u@[" + host + "]:8443/x"
		}
		for _, p := range []Policy{strict, local} {
			addrVerdict(t, p, raw, a)
		}
	})
}

// addrVerdict checks that raw, a URL whose host spells a, gets a's verdict
// from p, and returns the URL p returned.
func addrVerdict(t *testing.T, p Policy, raw string, a netip.Addr) *url.URL {
	t.Helper()
	u, err := p.CheckURL(raw)
	want := p.CheckAddr(a)
	if kind := verdictKind(t, err); kind == "invalid" || (err == nil) != (want == nil) {
		t.Fatalf("%s (%s) is %s (%v); the address is allowed=%v", raw, a, kind, err, want == nil)
	}
	return u
}

func beUint64(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}
