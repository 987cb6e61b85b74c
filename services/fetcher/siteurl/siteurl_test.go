package siteurl

import (
	"errors"
	"strings"
	"testing"
)

func TestCanonical(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"host and scheme case", "HTTPS://Example.COM/Docs", "https://example.com/Docs"},
		{"empty path is root", "https://example.com", "https://example.com/"},
		{"default http port", "http://example.com:80/a", "http://example.com/a"},
		{"default https port", "https://example.com:443/a", "https://example.com/a"},
		{"other port kept", "https://example.com:8443/a", "https://example.com:8443/a"},
		{"http port on https kept", "https://example.com:80/a", "https://example.com:80/a"},
		{"fragment dropped", "https://example.com/a#top", "https://example.com/a"},
		{"trailing dot of host", "https://example.com./a", "https://example.com/a"},
		{"unreserved escapes decoded", "https://example.com/%7Euser/%61b%2D", "https://example.com/~user/ab-"},
		{"reserved escapes upper-cased", "https://example.com/a%2fb?q=%3d", "https://example.com/a%2Fb?q=%3D"},
		{"raw space escaped", "https://example.com/a b", "https://example.com/a%20b"},
		{"non-ASCII path escaped", "https://example.com/café", "https://example.com/caf%C3%A9"},
		{"dot segments", "https://example.com/a/./b/../c", "https://example.com/a/c"},
		{"dot segments past root", "https://example.com/../a", "https://example.com/a"},
		{"utm parameters dropped", "https://example.com/a?utm_source=x&id=3&UTM_Medium=y", "https://example.com/a?id=3"},
		{"click ids dropped", "https://example.com/a?fbclid=1&gclid=2&ref=home&msclkid=3", "https://example.com/a"},
		{"parameters ordered by name", "https://example.com/s?q=go&page=2", "https://example.com/s?page=2&q=go"},
		{"repeated values keep their order", "https://example.com/s?tag=b&a=1&tag=a", "https://example.com/s?a=1&tag=b&tag=a"},
		{"empty query dropped", "https://example.com/a?", "https://example.com/a"},
		{"IDNA host", "https://Bücher.example/", "https://xn--bcher-kva.example/"},
		{"punycode host kept", "https://xn--bcher-kva.example/", "https://xn--bcher-kva.example/"},
		{"IPv6 host", "http://[2001:DB8::1]:8080/", "http://[2001:db8::1]:8080/"},
		{"surrounding space", "  https://example.com/a \n", "https://example.com/a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u, err := Canonical(tt.in)
			if err != nil {
				t.Fatalf("Canonical(%q): %v", tt.in, err)
			}
			if got := u.String(); got != tt.want {
				t.Errorf("Canonical(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCanonicalRefuses(t *testing.T) {
	for _, in := range []string{"mailto:a@example.com", "/relative", "ftp://example.com/", "javascript:alert(1)", "https:///nohost", "https://example.com/" + strings.Repeat("a", MaxLength)} {
		if u, err := Canonical(in); err == nil {
			t.Errorf("Canonical(%q) = %v, want an error", in, u)
		}
	}
	if _, err := Canonical("mailto:a@example.com"); !errors.Is(err, ErrNotWeb) {
		t.Errorf("mailto error %v is not ErrNotWeb", err)
	}
}

func TestKeySamePage(t *testing.T) {
	same := [][]string{
		{"http://example.com/docs", "https://example.com/docs/", "https://EXAMPLE.com:443/docs#intro", "https://example.com/docs?utm_campaign=z"},
		{"https://example.com", "https://example.com/", "http://example.com:80/"},
		{"https://example.com/s?a=1&b=2", "https://example.com/s?b=2&a=1&gclid=9"},
		{"https://example.com/%7Ea", "https://example.com/~a/"},
	}
	for _, group := range same {
		want, err := Key(group[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, raw := range group[1:] {
			if got, err := Key(raw); err != nil || got != want {
				t.Errorf("Key(%q) = %q, %v; want %q as for %q", raw, got, err, want, group[0])
			}
		}
	}
	different := [][2]string{
		{"https://example.com/", "https://www.example.com/"},
		{"https://example.com/a", "https://example.com/A"},
		{"https://example.com/a?x=1", "https://example.com/a?x=2"},
		{"https://example.com/a", "https://example.com:8080/a"},
		{"https://example.com/s?tag=a&tag=b", "https://example.com/s?tag=b&tag=a"},
		{"https://example.com/a%2Fb", "https://example.com/a/b"},
	}
	for _, pair := range different {
		a, _ := Key(pair[0])
		b, _ := Key(pair[1])
		if a == b {
			t.Errorf("%q and %q share the key %q", pair[0], pair[1], a)
		}
	}
}

func TestScope(t *testing.T) {
	tests := []struct {
		name    string
		start   string
		opts    ScopeOptions
		url     string
		visit   bool
		contain bool
	}{
		{"same host", "https://example.com/", ScopeOptions{}, "https://example.com/a", true, true},
		{"other scheme same site", "https://example.com/", ScopeOptions{}, "http://example.com/a", true, true},
		{"host case", "https://Example.com/", ScopeOptions{}, "https://EXAMPLE.COM/a", true, true},
		{"www is another host", "https://example.com/", ScopeOptions{}, "https://www.example.com/a", false, false},
		{"bare domain is another host", "https://www.example.com/", ScopeOptions{}, "https://example.com/a", false, false},
		{"subdomain out by default", "https://example.com/", ScopeOptions{}, "https://docs.example.com/a", false, false},
		{"subdomain in", "https://example.com/", ScopeOptions{IncludeSubdomains: true}, "https://docs.example.com/a", true, true},
		{"www start takes in the bare domain", "https://www.example.com/", ScopeOptions{IncludeSubdomains: true}, "https://example.com/a", true, true},
		{"lookalike domain stays out", "https://example.com/", ScopeOptions{IncludeSubdomains: true}, "https://badexample.com/a", false, false},
		{"other port is another site", "http://127.0.0.1:8080/", ScopeOptions{}, "http://127.0.0.1:9090/a", false, false},
		{"IP has no subdomains", "http://127.0.0.1:8080/", ScopeOptions{IncludeSubdomains: true}, "http://1.127.0.0.1:8080/a", false, false},
		{"path prefix", "https://example.com/docs/", ScopeOptions{PathPrefix: "/docs"}, "https://example.com/docs/intro", true, true},
		{"path prefix itself", "https://example.com/", ScopeOptions{PathPrefix: "/docs/"}, "https://example.com/docs", true, true},
		{"path prefix is by segment", "https://example.com/", ScopeOptions{PathPrefix: "/docs"}, "https://example.com/docs-old/a", false, false},
		{"outside path prefix", "https://example.com/", ScopeOptions{PathPrefix: "docs"}, "https://example.com/blog/a", false, false},
		{"include matches", "https://example.com/", ScopeOptions{Include: []string{`^/blog/\d+$`}}, "https://example.com/blog/12", true, true},
		{"include misses: visited, not kept", "https://example.com/", ScopeOptions{Include: []string{`^/blog/\d+$`}}, "https://example.com/blog/", true, false},
		{"exclude wins", "https://example.com/", ScopeOptions{Include: []string{`^/blog/`}, Exclude: []string{`/tag/`}}, "https://example.com/blog/tag/go", false, false},
		{"exclude sees the query", "https://example.com/", ScopeOptions{Exclude: []string{`[?&]page=`}}, "https://example.com/list?page=3", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewScope(tt.start, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			u, err := Canonical(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.MayVisit(u); got != tt.visit {
				t.Errorf("MayVisit(%s) = %v, want %v", u, got, tt.visit)
			}
			if got := s.Contains(u); got != tt.contain {
				t.Errorf("Contains(%s) = %v, want %v", u, got, tt.contain)
			}
		})
	}
}

func TestScopeBadPattern(t *testing.T) {
	_, err := NewScope("https://example.com/", ScopeOptions{Exclude: []string{"("}})
	if err == nil || !strings.Contains(err.Error(), "--exclude-paths") {
		t.Errorf("err = %v, want one naming --exclude-paths", err)
	}
}

func TestWWWTwins(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"https://example.com/", "https://www.example.com/", true},
		{"http://www.example.com/a", "https://example.com/b", true},
		{"https://example.com/", "https://example.com/x", false}, // one host, not two
		{"https://example.com/", "https://shop.example.com/", false},
		{"https://example.com:8080/", "https://www.example.com/", false},
		{"https://www.example.com/", "https://www.example.net/", false},
	}
	for _, tt := range tests {
		a, err := Canonical(tt.a)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Canonical(tt.b)
		if err != nil {
			t.Fatal(err)
		}
		if got := WWWTwins(a, b); got != tt.want {
			t.Errorf("WWWTwins(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}
