package netpolicy

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// CheckURL parses raw and judges its host before any connection is made.
// It returns an *InvalidURLError for anything but a well-formed http(s) URL
// with a host, and a *BlockedError when the host is an address literal, in
// any spelling, or a localhost name the policy refuses. Other names pass:
// what they resolve to is judged by Control at connect time.
//
// IPv4 literals are read as browsers read them (the WHATWG URL standard,
// which follows inet_aton: 2130706433, 0177.0.0.1, 0x7f.1 and 127.1 are all
// 127.0.0.1), and the returned URL carries the canonical dotted form, so
// what was judged is what gets dialled. Then u must pass every one of
// p.Allowlists.
func (p Policy) CheckURL(raw string) (*url.URL, error) {
	u, err := p.checkURL(raw)
	if err != nil {
		return u, err
	}
	for _, a := range p.Allowlists {
		if err := a.Check(u); err != nil {
			return u, err
		}
	}
	return u, nil
}

// CheckAssetURL is CheckURL for a page's subresource (an image, a
// stylesheet, a script, a font): it may also be on an allowlist's approved
// asset origins.
func (p Policy) CheckAssetURL(raw string) (*url.URL, error) {
	u, err := p.checkURL(raw)
	if err != nil {
		return u, err
	}
	for _, a := range p.Allowlists {
		if err := a.CheckAsset(u); err != nil {
			return u, err
		}
	}
	return u, nil
}

func (p Policy) checkURL(raw string) (*url.URL, error) {
	invalid := func(format string, args ...any) error {
		return &InvalidURLError{URL: raw, Reason: fmt.Sprintf(format, args...)}
	}
	if strings.TrimSpace(raw) == "" {
		return nil, invalid("empty")
	}
	u, err := url.Parse(raw)
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			err = ue.Err
		}
		return nil, invalid("%v", err)
	}
	switch u.Scheme {
	case "http", "https":
	case "":
		return nil, invalid("no scheme, want http or https")
	default:
		return nil, invalid("scheme %q is not http or https", u.Scheme)
	}
	written := u.Hostname()
	host := lookupForm(written)
	if host == "" {
		return nil, invalid("no host")
	}

	if strings.Contains(host, ":") {
		a, err := netip.ParseAddr(host)
		if err != nil {
			return nil, invalid("bad IPv6 host %q", written)
		}
		return u, withHost(p.checkLiteral(a, u), written)
	}
	if endsInNumber(host) {
		a, err := parseIPv4(host)
		if err != nil {
			return nil, invalid("bad IPv4 host %q: %v", written, err)
		}
		if port := u.Port(); port != "" {
			u.Host = net.JoinHostPort(a.String(), port)
		} else {
			u.Host = a.String()
		}
		return u, withHost(p.checkLiteral(a, u), written)
	}
	name := strings.TrimRight(host, ".")
	if name == "" {
		return nil, invalid("no host")
	}
	if (name == "localhost" || strings.HasSuffix(name, ".localhost")) && !p.AllowLoopback {
		// RFC 6761 reserves these names for loopback whatever DNS says.
		return nil, &BlockedError{Host: written, Reason: "loopback name"}
	}
	return u, nil
}

// checkLiteral judges an address literal and the port u reaches it on.
func (p Policy) checkLiteral(a netip.Addr, u *url.URL) error {
	if err := p.CheckAddr(a); err != nil {
		return err
	}
	port, ok := Port(u)
	if !ok {
		// A port url.Parse let through but no dialer takes: nothing of
		// ours is reached by it.
		return nil
	}
	return p.Own.check(netip.AddrPortFrom(a, port))
}

// Port is the port an http(s) URL reaches: its own, or the scheme's.
func Port(u *url.URL) (uint16, bool) {
	if s := u.Port(); s != "" {
		n, err := strconv.ParseUint(s, 10, 16)
		return uint16(n), err == nil
	}
	if u.Scheme == "https" {
		return 443, true
	}
	return 80, true
}

func withHost(err error, host string) error {
	if be, ok := errors.AsType[*BlockedError](err); ok {
		be.Host = host
	}
	return err
}

// lookupForm returns the host as net/http will hand it to the resolver:
// non-ASCII names go through IDNA mapping, which turns full-width digits and
// ideographic full stops into ASCII ones, so they are judged as literals too.
func lookupForm(host string) string {
	if !isASCII(host) {
		if a, err := idna.Lookup.ToASCII(host); err == nil {
			host = a
		}
	}
	return strings.ToLower(host)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// endsInNumber reports whether the WHATWG URL parser reads host as an IPv4
// address: its last label (after dropping one trailing dot) is a number.
// Such a host must then parse as IPv4 or the URL is invalid; it is never
// looked up as a name.
func endsInNumber(host string) bool {
	labels := strings.Split(host, ".")
	if labels[len(labels)-1] == "" {
		if len(labels) == 1 {
			return false
		}
		labels = labels[:len(labels)-1]
	}
	last := labels[len(labels)-1]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, err := parseIPv4Number(last)
	return err == nil
}

// parseIPv4 implements the WHATWG IPv4 parser: one to four parts, each
// decimal, octal (leading 0) or hex (0x); the last part fills the
// remaining bytes.
func parseIPv4(host string) (netip.Addr, error) {
	parts := strings.Split(host, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return netip.Addr{}, errors.New("more than four parts")
	}
	nums := make([]uint64, len(parts))
	for i, part := range parts {
		n, err := parseIPv4Number(part)
		if err != nil {
			return netip.Addr{}, err
		}
		if i < len(parts)-1 && n > 255 {
			return netip.Addr{}, fmt.Errorf("part %q is over 255", part)
		}
		nums[i] = n
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return netip.Addr{}, fmt.Errorf("part %q is out of range", parts[len(parts)-1])
	}
	v := last
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), nil
}

func parseIPv4Number(s string) (uint64, error) {
	if s == "" {
		return 0, errors.New("empty part")
	}
	base := 10
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		base, s = 16, s[2:]
	case len(s) >= 2 && s[0] == '0':
		base, s = 8, s[1:]
	}
	if s == "" {
		return 0, nil
	}
	// ParseUint would accept a sign or underscores; a host part may not.
	for i := 0; i < len(s); i++ {
		if digitValue(s[i]) >= base {
			return 0, fmt.Errorf("%q is not a base-%d number", s, base)
		}
	}
	n, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is out of range", s)
	}
	return n, nil
}

func digitValue(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return 99
}
