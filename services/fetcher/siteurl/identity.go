// Package siteurl says when two URLs name one page of a site, and whether a
// URL is within a crawl's or a map's scope. The rules are the ones a reader
// of the site would apply: the scheme, a trailing slash, a fragment and the
// tracking parameters links pick up do not make another page.
package siteurl

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/net/idna"
)

// MaxLength is the longest URL kept. The sitemaps protocol caps <loc> at
// 2,048 characters, and longer links are almost always generated traps.
const MaxLength = 2048

// tracking names the query parameters that say how a visitor arrived, not
// what they asked for; utm_* is matched by prefix.
var tracking = map[string]bool{
	"fbclid": true, "gclid": true, "dclid": true, "gbraid": true, "wbraid": true,
	"msclkid": true, "yclid": true, "twclid": true, "igshid": true,
	"mc_cid": true, "mc_eid": true, "ref": true,
}

// IsTracking reports whether a query parameter only tracks the visit.
func IsTracking(name string) bool {
	name = strings.ToLower(name)
	return strings.HasPrefix(name, "utm_") || tracking[name]
}

// ErrNotWeb is a URL that is not an absolute http or https URL.
var ErrNotWeb = errors.New("not an absolute http or https URL")

// Canonical returns raw in the one spelling every link to the same resource
// shares: scheme and host in lower case, the host in its ASCII (IDNA) form
// without a trailing dot, the scheme's default port dropped, an empty path
// as "/", dot segments resolved, escapes of unreserved characters decoded
// and other escapes in upper case, the fragment and tracking parameters
// dropped, and the remaining parameters ordered by name. The order of one
// name's repeated values is kept: for them order can be meaning
// (?sort=a&sort=b). Errors do not repeat raw: callers name it.
func Canonical(raw string) (*url.URL, error) {
	if len(raw) > MaxLength {
		return nil, fmt.Errorf("longer than %d characters", MaxLength)
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		if ue, ok := errors.AsType[*url.Error](err); ok {
			return nil, ue.Err
		}
		return nil, err
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" || u.Host == "" || u.Opaque != "" {
		return nil, ErrNotWeb
	}
	host, err := canonicalHost(u.Hostname())
	if err != nil {
		return nil, err
	}
	port := u.Port()
	if port == "80" && scheme == "http" || port == "443" && scheme == "https" {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	path := removeDots(NormaliseEscapes(u.EscapedPath()))
	if path == "" {
		path = "/"
	}
	out := &url.URL{Scheme: scheme, User: u.User, Host: host, RawQuery: canonicalQuery(u.RawQuery)}
	if err := setEscapedPath(out, path); err != nil {
		return nil, err
	}
	return out, nil
}

func setEscapedPath(u *url.URL, escaped string) error {
	p, err := url.PathUnescape(escaped)
	if err != nil {
		return err
	}
	u.Path = p
	u.RawPath = escaped
	// url.URL keeps RawPath only when it is a valid spelling of Path
	// other than the default one; either way EscapedPath gives escaped.
	if u.EscapedPath() != escaped {
		return fmt.Errorf("path %q cannot be kept as written", escaped)
	}
	return nil
}

// canonicalHost lower-cases a host name and turns an internationalised one
// into its ASCII form, which is what DNS and links written either way
// resolve to.
func canonicalHost(h string) (string, error) {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if h == "" {
		return "", errors.New("empty host")
	}
	if ip := net.ParseIP(h); ip != nil {
		return ip.String(), nil
	}
	ascii, err := idna.Lookup.ToASCII(h)
	if err != nil {
		return "", fmt.Errorf("host %q: %v", h, err)
	}
	return ascii, nil
}

// canonicalQuery drops tracking parameters and orders the rest by name,
// stably, each pair's spelling normalised. An empty result drops the "?".
func canonicalQuery(raw string) string {
	if raw == "" {
		return ""
	}
	type pair struct{ name, text string }
	var pairs []pair
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		part = NormaliseEscapes(part)
		name, _, _ := strings.Cut(part, "=")
		decoded, err := url.QueryUnescape(name)
		if err != nil {
			decoded = name
		}
		if IsTracking(decoded) {
			continue
		}
		pairs = append(pairs, pair{decoded, part})
	}
	slices.SortStableFunc(pairs, func(a, b pair) int { return strings.Compare(a.name, b.name) })
	texts := make([]string, len(pairs))
	for i, p := range pairs {
		texts[i] = p.text
	}
	return strings.Join(texts, "&")
}

// NormaliseEscapes brings a path (or a query) to one spelling of its
// octets: escapes of unreserved characters decoded, other escapes in upper
// case, and bytes that may not appear raw in a URL (controls, space,
// non-ASCII, a '%' that starts no escape) escaped. RFC 3986 section 6.2.2
// calls two such spellings equivalent, and robots.txt matching (RFC 9309
// section 2.2.2) compares them so too.
func NormaliseEscapes(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if unreserved(v) {
				b.WriteByte(v)
			} else {
				fmt.Fprintf(&b, "%%%02X", v)
			}
			i += 2
		case c <= ' ' || c >= 0x7f || c == '%':
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// removeDots resolves "." and ".." segments as RFC 3986 section 5.2.4 does.
func removeDots(path string) string {
	if !strings.Contains(path, ".") {
		return path
	}
	var out []string
	segs := strings.Split(path, "/")
	for i, s := range segs {
		last := i == len(segs)-1
		switch s {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	return strings.Join(out, "/")
}

func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// Key is the identity of the page raw names: two URLs with the same key
// are one page. It is the canonical URL without its scheme (http and https
// serve one site) and without a trailing slash on a path other than "/".
func Key(raw string) (string, error) {
	u, err := Canonical(raw)
	if err != nil {
		return "", err
	}
	return KeyOf(u), nil
}

// KeyOf is Key of a URL already canonical.
func KeyOf(u *url.URL) string {
	path := u.EscapedPath()
	if len(path) > 1 {
		path = strings.TrimSuffix(path, "/")
	}
	k := u.Host + path
	if u.User != nil {
		k = u.User.String() + "@" + k
	}
	if u.RawQuery != "" {
		k += "?" + u.RawQuery
	}
	return k
}
