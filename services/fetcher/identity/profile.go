// Package identity is the fetcher's network identity: the browser
// profiles its HTTP client can present, each a TLS ClientHello (a utls
// ClientHelloSpec), an HTTP/2 connection preface and the request headers
// of one real browser, and the transport that speaks them.
//
// It is a package of its own, below fetch, because it is the one place
// that knows how a browser looks on the wire, and it brings the libraries
// for that (bogdanfinn's utls and fhttp forks) which nothing else in the
// fetcher should see. It never dials: the transport is handed the
// fetcher's guarded dialer, so the network policy (DNS pinning,
// rebinding, the process's own ports) judges every connection at connect
// time whatever profile speaks over it.
package identity

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	http2 "github.com/bogdanfinn/fhttp/http2"
	utls "github.com/bogdanfinn/utls"
)

// Names of the profiles.
const (
	// DistillName is distill's own identity: Go's TLS and HTTP/2, and a
	// User-Agent that says distill. The default.
	DistillName = "distill"
	// ChromeName is the Chromium of Debian 12 on Linux.
	ChromeName = "chrome"
)

// Profile is one identity on the network.
type Profile struct {
	name string
	// hello builds a fresh ClientHelloSpec for each connection (GREASE
	// and extension order vary per connection, as the browser's do); nil
	// for Go's own TLS.
	hello func() *utls.ClientHelloSpec
	h2    h2Preface
	h1    h1Form
	// headers are the request headers of a page GET, in the order sent.
	headers [][2]string
	// order and hopOrder are the order of the header names (the profile's
	// and cookie) on a page's first request and on a redirect hop.
	order, hopOrder []string
}

// h1Form is how the browser writes the headers over HTTP/1.1, where the
// case of a name shows.
type h1Form struct {
	// first are the fields before the profile's headers (host,
	// connection), in lower case.
	first []string
	// lower are the names sent in lower case; the rest are canonical.
	lower []string
	// omit are the fields sent over HTTP/2 only.
	omit []string
}

// h2Preface is what an HTTP/2 client sends before and with its first
// request.
type h2Preface struct {
	settings       []http2.Setting // in order
	windowUpdate   uint32          // the connection's WINDOW_UPDATE increment
	headerPriority http2.PriorityParam
	pseudoOrder    []string
}

// Name is the profile's name.
func (p *Profile) Name() string { return p.name }

// Browser reports whether the profile speaks as a browser (its own TLS,
// HTTP/2 and headers) rather than as Go's client.
func (p *Profile) Browser() bool { return p != nil && p.hello != nil }

// Headers are the request headers of a page GET, in the order the
// browser sends them (names in lower case); nil for distill's profile,
// whose headers the fetcher sets itself.
func (p *Profile) Headers() [][2]string {
	if p == nil {
		return nil
	}
	return append([][2]string(nil), p.headers...)
}

// UserAgent is the profile's User-Agent, "" for distill's profile.
func (p *Profile) UserAgent() string {
	for _, h := range p.Headers() {
		if h[0] == "user-agent" {
			return h[1]
		}
	}
	return ""
}

// SetHeaders sets the profile's headers on h, replacing what h has under
// those names. Other fields of h are kept: they are sent after the
// profile's.
func (p *Profile) SetHeaders(h http.Header) {
	for _, kv := range p.Headers() {
		h.Set(kv[0], kv[1])
	}
}

// headerOrder is the order of the header names on a first request, or on
// a redirect hop; fields it does not name go after, by name.
func (p *Profile) headerOrder(hop bool) []string {
	if hop {
		return slices.Clone(p.hopOrder)
	}
	return slices.Clone(p.order)
}

type hopKey struct{}

// RedirectHop marks a request's context as a redirect hop's, which a
// browser writes in an order of its own.
func RedirectHop(ctx context.Context) context.Context {
	return context.WithValue(ctx, hopKey{}, true)
}

func isHop(ctx context.Context) bool {
	hop, _ := ctx.Value(hopKey{}).(bool)
	return hop
}

// Distill is distill's own identity: Go's TLS and HTTP/2, the fetcher's
// headers. A fetcher with it behaves as one with no profile.
func Distill() *Profile { return &Profile{name: DistillName} }

// Names are the names of the profiles, the default first.
func Names() []string { return []string{DistillName, ChromeName} }

// Named is the profile of that name: "distill" (or "") or "chrome". Any
// other name is an error whose one line names the known ones.
func Named(name string) (*Profile, error) {
	switch strings.ToLower(name) {
	case "", DistillName:
		return Distill(), nil
	case ChromeName:
		return Chrome(), nil
	}
	return nil, fmt.Errorf("no browser profile %q: one of %s", name, strings.Join(Names(), ", "))
}
