package crawl

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"distill.dev/services/fetcher/siteurl"
)

// TestMayFollow is the crawl's judge of a redirect: the crawl's scope,
// and for the start page also the rest of its host and its www. twin.
func TestMayFollow(t *testing.T) {
	tests := []struct {
		name      string
		scope     siteurl.ScopeOptions
		to        string
		fromStart bool
		want      bool
	}{
		{"same host", siteurl.ScopeOptions{}, "https://example.com/b", false, true},
		{"http and https are one site", siteurl.ScopeOptions{}, "http://example.com/b", false, true},
		{"another host", siteurl.ScopeOptions{}, "https://other.example/", false, false},
		{"a subdomain", siteurl.ScopeOptions{}, "https://docs.example.com/", false, false},
		{"a subdomain, included", siteurl.ScopeOptions{IncludeSubdomains: true}, "https://docs.example.com/", false, true},
		{"another port", siteurl.ScopeOptions{}, "https://example.com:8443/", false, false},
		{"outside the prefix", siteurl.ScopeOptions{PathPrefix: "/docs"}, "https://example.com/blog", false, false},
		{"outside the prefix, from the start page", siteurl.ScopeOptions{PathPrefix: "/docs"}, "https://example.com/", true, true},
		{"excluded", siteurl.ScopeOptions{Exclude: []string{"^/private"}}, "https://example.com/private/x", false, false},
		{"not included is still followed", siteurl.ScopeOptions{Include: []string{"^/docs"}}, "https://example.com/blog", false, true},
		{"the www twin, from the start page", siteurl.ScopeOptions{}, "https://www.example.com/", true, true},
		{"the www twin, from another page", siteurl.ScopeOptions{}, "https://www.example.com/", false, false},
		{"another site, from the start page", siteurl.ScopeOptions{}, "https://login.example.net/", true, false},
	}
	c := New(nil, nil, nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, err := c.Begin(t.Context(), Request{URL: "https://example.com/docs/start", Scope: tt.scope, Concurrency: 1}, nil)
			if err != nil {
				t.Fatal(err)
			}
			to, _ := url.Parse(tt.to)
			err = j.mayFollow(to, tt.fromStart)
			if got := err == nil; got != tt.want {
				t.Errorf("mayFollow(%s) = %v, want allowed %v", tt.to, err, tt.want)
			}
			if err != nil && !errors.Is(err, errOutOfScope) {
				t.Errorf("refusal %v is not errOutOfScope", err)
			}
		})
	}
}

func TestBeginRefuses(t *testing.T) {
	c := New(nil, nil, nil)
	for _, tt := range []struct {
		req  Request
		want string
	}{
		{Request{URL: "ftp://example.com/"}, "not an absolute http or https URL"},
		{Request{URL: "https://example.com/", Depth: -1}, "cannot be negative"},
		{Request{URL: "https://example.com/", StopWhenAnswered: true}, "needs --query"},
		{Request{URL: "https://example.com/", Scope: siteurl.ScopeOptions{Exclude: []string{"("}}}, "--exclude-paths"},
		{Request{URL: "https://example.com/", JobID: "0123456789abcdef"}, "no crawl with job id"},
	} {
		if _, err := c.Begin(t.Context(), tt.req, nil); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Begin(%+v) = %v, want %q", tt.req, err, tt.want)
		}
	}
}
