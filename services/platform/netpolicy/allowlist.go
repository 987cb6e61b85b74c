package netpolicy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// Allowlist narrows the destinations a call may reach to the hosts, schemes
// and ports a host platform named for one actor. It never widens the
// Policy: an allowlisted private address is still refused, and an
// allowlisted loopback host needs AllowLoopback like any other.
//
// It rides in the context of a call (WithAllowlist), so that every URL the
// fetcher judges on the call's behalf, the first one and every redirect,
// robots.txt and cached hop, is judged against it, in this process and, via
// gRPC metadata (MetadataKey), in a fetcher process of a cluster.
type Allowlist struct {
	exact    []string // lower-case ASCII hosts, no trailing dot
	suffixes []string // ".example.com" for "*.example.com"
	schemes  []string
	ports    []uint16
	// assets are origins a page may load subresources from (its CDN):
	// never a page, a frame or a first URL (see CheckAsset).
	assets []assetOrigin
}

// assetOrigin is one approved asset origin: scheme, host (exact, or a
// suffix for "*.cdn.example") and port.
type assetOrigin struct {
	scheme string
	host   string
	suffix bool
	port   uint16
}

func (o assetOrigin) String() string {
	h := o.host
	if o.suffix {
		h = "*" + h
	} else if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	return fmt.Sprintf("%s://%s:%d", o.scheme, h, o.port)
}

func (o assetOrigin) matches(scheme, host string, port uint16) bool {
	if (scheme != "" && scheme != o.scheme) || port != o.port {
		return false
	}
	if o.suffix {
		return strings.HasSuffix(host, o.host) && len(host) > len(o.host)
	}
	return host == o.host
}

// WithAssetOrigins returns a copy of a that also lets a page load
// subresources (images, stylesheets, scripts, fonts, media) from origins,
// each "https://cdn.example.net" or "https://*.cdn.example.net", with a
// port when not the scheme's own. An origin is never a place to browse: a
// first URL, a redirect of the page, a frame or a fetch there is judged by
// the list alone.
func (a *Allowlist) WithAssetOrigins(origins []string) (*Allowlist, error) {
	out := *a
	out.assets = slices.Clone(a.assets)
	for _, raw := range origins {
		o, err := parseAssetOrigin(raw)
		if err != nil {
			return nil, fmt.Errorf("asset origin %q: %w", raw, err)
		}
		out.assets = append(out.assets, o)
	}
	return &out, nil
}

func parseAssetOrigin(raw string) (assetOrigin, error) {
	scheme, rest, ok := strings.Cut(raw, "://")
	scheme = strings.ToLower(scheme)
	if !ok || (scheme != "http" && scheme != "https") {
		return assetOrigin{}, errors.New("an origin is http:// or https:// and a host")
	}
	rest = strings.TrimSuffix(rest, "/")
	if rest == "" || strings.ContainsAny(rest, "/?#@ ") {
		return assetOrigin{}, errors.New("an origin has no path, query, fragment or user (write https://cdn.example.net)")
	}
	wild := strings.HasPrefix(rest, "*.")
	u, err := url.Parse(scheme + "://" + strings.TrimPrefix(rest, "*."))
	if err != nil {
		return assetOrigin{}, errors.New("not an origin")
	}
	port, ok := Port(u)
	if !ok {
		return assetOrigin{}, fmt.Errorf("bad port %q", u.Port())
	}
	host, err := normalHost(u.Hostname())
	if err != nil {
		return assetOrigin{}, err
	}
	if strings.Contains(host, "*") {
		return assetOrigin{}, errors.New("a wildcard is only allowed as the whole first label (https://*.cdn.example.net)")
	}
	o := assetOrigin{scheme: scheme, host: host, port: port}
	if wild {
		if _, err := netip.ParseAddr(host); err == nil {
			return assetOrigin{}, errors.New("an address cannot take a wildcard")
		}
		o.host, o.suffix = "."+host, true
	}
	return o, nil
}

// CheckAsset is Check for a subresource of a page: u may also be on one of
// the approved asset origins.
func (a *Allowlist) CheckAsset(u *url.URL) error {
	err := a.Check(u)
	if err == nil || a == nil {
		return err
	}
	port, ok := Port(u)
	host, herr := normalHost(u.Hostname())
	if !ok || herr != nil {
		return err
	}
	for _, o := range a.assets {
		if o.matches(strings.ToLower(u.Scheme), host, port) {
			return nil
		}
	}
	return err
}

// CheckTunnel is CheckHostPort for a proxy's CONNECT, which carries HTTPS
// and every WebSocket alike: an asset origin is tunnelled to only when it
// is an https one, so that a page's WebSocket cannot reach a plain-http
// CDN.
func (a *Allowlist) CheckTunnel(host string, port uint16) error {
	if a == nil {
		return nil
	}
	err := a.checkHostPort(host, port)
	if err == nil {
		return nil
	}
	if h, herr := normalHost(host); herr == nil {
		for _, o := range a.assets {
			if o.scheme == "https" && o.matches("", h, port) {
				return nil
			}
		}
	}
	return err
}

// defaultSchemes and defaultPorts are what an allowlist permits when it
// names none.
var (
	defaultSchemes = []string{"http", "https"}
	defaultPorts   = []uint16{80, 443}
)

// NewAllowlist checks and normalises a host platform's list. A host is an
// exact name or address ("docs.example.com", "127.0.0.1", "[::1]") or a
// wildcard "*.example.com", which allows every subdomain of example.com but
// never example.com itself. Empty schemes or ports take the defaults.
func NewAllowlist(hosts, schemes []string, ports []int) (*Allowlist, error) {
	a := &Allowlist{}
	for _, h := range hosts {
		wild := strings.HasPrefix(h, "*.")
		name, err := normalHost(strings.TrimPrefix(h, "*."))
		if err != nil {
			return nil, fmt.Errorf("allowed host %q: %w", h, err)
		}
		if strings.Contains(name, "*") {
			return nil, fmt.Errorf("allowed host %q: a wildcard is only allowed as the whole first label (*.example.com)", h)
		}
		if wild {
			if _, err := netip.ParseAddr(name); err == nil {
				return nil, fmt.Errorf("allowed host %q: an address cannot take a wildcard", h)
			}
			a.suffixes = append(a.suffixes, "."+name)
			continue
		}
		a.exact = append(a.exact, name)
	}
	for _, s := range schemes {
		s = strings.ToLower(s)
		if s != "http" && s != "https" {
			return nil, fmt.Errorf("allowed scheme %q: distill fetches only http and https", s)
		}
		a.schemes = append(a.schemes, s)
	}
	if len(a.schemes) == 0 {
		a.schemes = slices.Clone(defaultSchemes)
	}
	for _, p := range ports {
		if p < 1 || p > 65535 {
			return nil, fmt.Errorf("allowed port %d: not a TCP port (1-65535)", p)
		}
		a.ports = append(a.ports, uint16(p))
	}
	if len(a.ports) == 0 {
		a.ports = slices.Clone(defaultPorts)
	}
	return a, nil
}

// normalHost returns host as URLs are compared: lower-case ASCII (IDNA),
// no trailing dot, IPv6 without brackets and in canonical form.
func normalHost(host string) (string, error) {
	host = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), ".")
	if host == "" {
		return "", errors.New("empty")
	}
	if strings.ContainsAny(host, "/:@?# ") {
		if a, err := netip.ParseAddr(host); err == nil {
			return a.WithZone("").String(), nil
		}
		return "", errors.New("a host has no scheme, port, path or user (write docs.example.com)")
	}
	host = lookupForm(host)
	if endsInNumber(host) {
		a, err := parseIPv4(host)
		if err != nil {
			return "", fmt.Errorf("bad IPv4 address: %v", err)
		}
		return a.String(), nil
	}
	return host, nil
}

// Check returns a *BlockedError when u's scheme, host or port is not on
// the list. u is a URL CheckURL has accepted.
func (a *Allowlist) Check(u *url.URL) error {
	if a == nil {
		return nil
	}
	written := u.Hostname()
	if !slices.Contains(a.schemes, strings.ToLower(u.Scheme)) {
		return &BlockedError{Host: written, Reason: fmt.Sprintf("scheme %s is not in the host's allowed schemes", u.Scheme)}
	}
	port, ok := Port(u)
	if !ok || !slices.Contains(a.ports, port) {
		return &BlockedError{Host: written, Reason: fmt.Sprintf("port %d is not in the host's allowed ports", port)}
	}
	host, err := normalHost(written)
	if err != nil || !a.allowsHost(host) {
		return &BlockedError{Host: written, Reason: "not in the host's allowed hosts"}
	}
	return nil
}

// CheckHostPort is Check for a connection that names only its host and
// port (a proxy's dial): an asset origin's host and port pass too, whatever
// its scheme, since the request it carries was judged by URL before.
func (a *Allowlist) CheckHostPort(host string, port uint16) error {
	if a == nil {
		return nil
	}
	err := a.checkHostPort(host, port)
	if err == nil {
		return nil
	}
	if h, herr := normalHost(host); herr == nil {
		for _, o := range a.assets {
			if o.matches("", h, port) {
				return nil
			}
		}
	}
	return err
}

func (a *Allowlist) checkHostPort(host string, port uint16) error {
	if !slices.Contains(a.ports, port) {
		return &BlockedError{Host: host, Reason: fmt.Sprintf("port %d is not in the host's allowed ports", port)}
	}
	h, err := normalHost(host)
	if err != nil || !a.allowsHost(h) {
		return &BlockedError{Host: host, Reason: "not in the host's allowed hosts"}
	}
	return nil
}

func (a *Allowlist) allowsHost(host string) bool {
	if slices.Contains(a.exact, host) {
		return true
	}
	for _, s := range a.suffixes {
		// len check: "*.example.com" never allows ".example.com" itself.
		if strings.HasSuffix(host, s) && len(host) > len(s) {
			return true
		}
	}
	return false
}

// wire is the allowlist as it crosses processes.
type wire struct {
	Exact    []string `json:"exact,omitempty"`
	Suffixes []string `json:"suffixes,omitempty"`
	Schemes  []string `json:"schemes"`
	Ports    []uint16 `json:"ports"`
	Assets   []string `json:"assets,omitempty"`
}

// MarshalText encodes the list for gRPC metadata.
func (a *Allowlist) MarshalText() ([]byte, error) {
	w := wire{Exact: a.exact, Suffixes: a.suffixes, Schemes: a.schemes, Ports: a.ports}
	for _, o := range a.assets {
		w.Assets = append(w.Assets, o.String())
	}
	return json.Marshal(w)
}

// UnmarshalText decodes what MarshalText wrote.
func (a *Allowlist) UnmarshalText(b []byte) error {
	var w wire
	if err := json.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("allowlist: %w", err)
	}
	if len(w.Schemes) == 0 || len(w.Ports) == 0 {
		return errors.New("allowlist: no schemes or no ports")
	}
	out := Allowlist{exact: w.Exact, suffixes: w.Suffixes, schemes: w.Schemes, ports: w.Ports}
	for _, raw := range w.Assets {
		o, err := parseAssetOrigin(raw)
		if err != nil {
			return fmt.Errorf("allowlist: %w", err)
		}
		out.assets = append(out.assets, o)
	}
	*a = out
	return nil
}

// MetadataKey carries a call's allowlists in gRPC metadata, one value per
// list. A server that reads them can only refuse more: lists are never
// replaced, only added to.
const MetadataKey = "distill-host-allowlist"

type allowlistsKey struct{}

// WithAllowlist returns ctx with a added to the lists every URL of the call
// must pass. Lists already there stay: each added list can only narrow.
func WithAllowlist(ctx context.Context, a *Allowlist) context.Context {
	if a == nil {
		return ctx
	}
	prev := Allowlists(ctx)
	return context.WithValue(ctx, allowlistsKey{}, append(slices.Clip(prev), a))
}

// Allowlists returns the lists ctx carries.
func Allowlists(ctx context.Context) []*Allowlist {
	l, _ := ctx.Value(allowlistsKey{}).([]*Allowlist)
	return l
}
