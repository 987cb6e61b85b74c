package netpolicy

import (
	"context"
	"errors"
	"net/url"
	"testing"
)

func TestAllowlistMatching(t *testing.T) {
	a, err := NewAllowlist([]string{"docs.example.com", "*.example.org", "Bücher.example", "127.0.0.1", "[::1]", "TRAILING.example.net."}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		url  string
		want bool
	}{
		{"https://docs.example.com/a", true},
		{"http://DOCS.example.com./a", true},
		{"https://docs.example.com:443/a", true},
		{"https://docs.example.com:8443/a", false},
		{"https://other.example.com/", false},
		{"https://example.com/", false},
		{"https://a.example.org/", true},
		{"https://a.b.example.org/", true},
		{"https://example.org/", false}, // a wildcard never allows the bare domain
		{"https://badexample.org/", false},
		{"https://xn--bcher-kva.example/", true}, // IDNA: the list's Unicode name matches its ASCII form
		{"http://127.0.0.1/", true},
		{"http://2130706433/", true}, // another spelling of 127.0.0.1
		{"http://127.0.0.2/", false},
		{"http://[::1]/", true},
		{"https://trailing.example.net/", true},
		{"https://docs.example.com.evil.test/", false},
	}
	p := Policy{AllowLoopback: true, Allowlists: []*Allowlist{a}}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			_, err := p.CheckURL(tt.url)
			if got := err == nil; got != tt.want {
				t.Fatalf("CheckURL(%s) = %v, want allowed=%v", tt.url, err, tt.want)
			}
			if err != nil && !errors.Is(err, ErrBlocked) {
				t.Fatalf("refusal %v is not ErrBlocked", err)
			}
		})
	}
}

func TestAllowlistSchemesAndPorts(t *testing.T) {
	a, err := NewAllowlist([]string{"docs.example.com"}, []string{"https"}, []int{443, 8443})
	if err != nil {
		t.Fatal(err)
	}
	p := Policy{Allowlists: []*Allowlist{a}}
	for raw, want := range map[string]bool{
		"https://docs.example.com/":      true,
		"https://docs.example.com:8443/": true,
		"http://docs.example.com/":       false,
		"http://docs.example.com:443/":   false,
		"https://docs.example.com:80/":   false,
	} {
		if _, err := p.CheckURL(raw); (err == nil) != want {
			t.Errorf("CheckURL(%s) = %v, want allowed=%v", raw, err, want)
		}
	}
	if err := a.CheckHostPort("docs.example.com", 8443); err != nil {
		t.Errorf("CheckHostPort 8443: %v", err)
	}
	if err := a.CheckHostPort("docs.example.com", 80); err == nil {
		t.Error("CheckHostPort 80 allowed")
	}
}

// The allowlist narrows the ranges, never widens them: a listed private
// or loopback address stays refused.
func TestAllowlistNeverWidens(t *testing.T) {
	a, err := NewAllowlist([]string{"10.0.0.1", "127.0.0.1", "localhost"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := Policy{Allowlists: []*Allowlist{a}}
	for _, raw := range []string{"http://10.0.0.1/", "http://127.0.0.1/", "http://localhost/"} {
		if _, err := p.CheckURL(raw); !errors.Is(err, ErrBlocked) {
			t.Errorf("CheckURL(%s) = %v, want blocked", raw, err)
		}
	}
}

func TestNewAllowlistRefuses(t *testing.T) {
	tests := []struct {
		name    string
		hosts   []string
		schemes []string
		ports   []int
	}{
		{"empty host", []string{""}, nil, nil},
		{"url not host", []string{"https://docs.example.com/"}, nil, nil},
		{"host with port", []string{"docs.example.com:443"}, nil, nil},
		{"inner wildcard", []string{"docs.*.example.com"}, nil, nil},
		{"bare wildcard", []string{"*"}, nil, nil},
		{"wildcard address", []string{"*.127.0.0.1"}, nil, nil},
		{"ftp", []string{"a.example"}, []string{"ftp"}, nil},
		{"port zero", []string{"a.example"}, nil, []int{0}},
		{"port too big", []string{"a.example"}, nil, []int{70000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := NewAllowlist(tt.hosts, tt.schemes, tt.ports); err == nil {
				t.Fatal("accepted")
			}
		})
	}
}

func TestAllowlistsInContextOnlyNarrow(t *testing.T) {
	wide, _ := NewAllowlist([]string{"*.example.com"}, nil, nil)
	narrow, _ := NewAllowlist([]string{"docs.example.com"}, nil, nil)
	ctx := WithAllowlist(WithAllowlist(context.Background(), wide), narrow)
	p := Policy{Allowlists: Allowlists(ctx)}
	if _, err := p.CheckURL("https://docs.example.com/"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.CheckURL("https://www.example.com/"); err == nil {
		t.Fatal("a later, narrower list did not narrow")
	}
}

func TestAllowlistText(t *testing.T) {
	a, _ := NewAllowlist([]string{"docs.example.com", "*.example.org"}, []string{"https"}, []int{8443})
	b, err := a.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	var back Allowlist
	if err := back.UnmarshalText(b); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("https://x.example.org:8443/")
	if err := back.Check(u); err != nil {
		t.Fatalf("decoded list refuses %s: %v", u, err)
	}
	u, _ = url.Parse("https://example.org:8443/")
	if err := back.Check(u); err == nil {
		t.Fatal("decoded list allows the bare domain")
	}
	if err := back.UnmarshalText([]byte(`{"exact":["a"]}`)); err == nil {
		t.Fatal("a list without schemes or ports decoded")
	}
}

// Approved asset origins admit a page's subresources, never a page: the
// URL checks of a navigation ignore them, the subresource check takes them
// by scheme, host and port, and a tunnel reaches only the https ones.
func TestAllowlistAssetOrigins(t *testing.T) {
	base, err := NewAllowlist([]string{"docs.example.com"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := base.WithAssetOrigins([]string{"https://cdn.example.net", "http://*.static.example:8080", "https://[2606:4700::1111]:8443"})
	if err != nil {
		t.Fatal(err)
	}
	p := Policy{Allowlists: []*Allowlist{a}}
	for raw, want := range map[string][2]bool{ // {as a page, as an asset}
		"https://docs.example.com/":             {true, true},
		"https://cdn.example.net/app.js":        {false, true},
		"http://cdn.example.net/app.js":         {false, false}, // another scheme
		"https://cdn.example.net:8443/app.js":   {false, false}, // another port
		"https://evil.cdn.example.net/a.js":     {false, false},
		"http://img.static.example:8080/a.png":  {false, true},
		"http://static.example:8080/a.png":      {false, false}, // a wildcard never allows the bare domain
		"http://img.static.example/a.png":       {false, false},
		"https://[2606:4700::1111]:8443/f.woff": {false, true},
	} {
		_, pageErr := p.CheckURL(raw)
		_, assetErr := p.CheckAssetURL(raw)
		if (pageErr == nil) != want[0] || (assetErr == nil) != want[1] {
			t.Errorf("%s: page %v, asset %v; want allowed %v", raw, pageErr, assetErr, want)
		}
	}
	for _, tt := range []struct {
		host         string
		port         uint16
		dial, tunnel bool
	}{
		{"docs.example.com", 443, true, true},
		{"cdn.example.net", 443, true, true},
		{"img.static.example", 8080, true, false}, // an http origin: no WebSocket tunnel to it
		{"cdn.example.net", 80, false, false},
	} {
		if got := a.CheckHostPort(tt.host, tt.port) == nil; got != tt.dial {
			t.Errorf("CheckHostPort(%s, %d) = %v", tt.host, tt.port, got)
		}
		if got := a.CheckTunnel(tt.host, tt.port) == nil; got != tt.tunnel {
			t.Errorf("CheckTunnel(%s, %d) = %v", tt.host, tt.port, got)
		}
	}
	// The origins cross processes with the list.
	b, err := a.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	var back Allowlist
	if err := back.UnmarshalText(b); err != nil {
		t.Fatal(err)
	}
	if u, _ := url.Parse("http://img.static.example:8080/a.png"); back.CheckAsset(u) != nil {
		t.Fatalf("the origins were lost on the wire: %s", b)
	}
	for _, bad := range []string{"cdn.example.net", "ftp://cdn.example.net", "https://cdn.example.net/path", "https://user@cdn.example.net",
		"https://*.127.0.0.1", "https://cdn.*.example", "https://cdn.example.net:99999"} {
		if _, err := base.WithAssetOrigins([]string{bad}); err == nil {
			t.Errorf("%s was taken as an origin", bad)
		}
	}
}
