package siteurl

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
)

// ScopeOptions narrow a site to the part a crawl or map covers.
type ScopeOptions struct {
	// IncludeSubdomains also takes in the start host's subdomains, and the
	// bare domain when the start host is its www. name.
	IncludeSubdomains bool
	// PathPrefix keeps paths at or under it, segment by segment: "/docs"
	// takes in /docs and /docs/intro, not /docs-old.
	PathPrefix string
	// Include and Exclude are regular expressions matched against a URL's
	// path and query ("/docs/a?x=1"). With Include, a URL must match one;
	// a URL matching an Exclude is out whatever else matches.
	Include, Exclude []string
}

// Scope is the part of a site a crawl or map covers: the start URL's host
// (on any scheme, as identity has it) and what the options narrow it to.
type Scope struct {
	root    string // the URL it was made from
	host    string // canonical host[:port] of the start URL
	name    string // its name without the port
	port    string
	domain  string // with IncludeSubdomains: the name subdomains end in
	prefix  string
	include []*regexp.Regexp
	exclude []*regexp.Regexp
}

// NewScope returns the scope of a walk from start. A bad regular expression
// is an error that names it.
func NewScope(start string, o ScopeOptions) (*Scope, error) {
	u, err := Canonical(start)
	if err != nil {
		return nil, err
	}
	s := &Scope{root: u.String(), host: u.Host, name: u.Hostname(), port: u.Port()}
	if o.IncludeSubdomains && net.ParseIP(s.name) == nil {
		s.domain = strings.TrimPrefix(s.name, "www.")
	}
	if o.PathPrefix != "" {
		p := o.PathPrefix
		if !strings.HasPrefix(p, "/") {
			p = "/" + p
		}
		s.prefix = removeDots(NormaliseEscapes(p))
	}
	for _, expr := range o.Include {
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("--include-paths %q: %v", expr, err)
		}
		s.include = append(s.include, re)
	}
	for _, expr := range o.Exclude {
		re, err := regexp.Compile(expr)
		if err != nil {
			return nil, fmt.Errorf("--exclude-paths %q: %v", expr, err)
		}
		s.exclude = append(s.exclude, re)
	}
	return s, nil
}

// Root is the URL the scope was made from, in siteurl's one spelling.
func (s *Scope) Root() string { return s.root }

// Host is the canonical host[:port] the scope starts from.
func (s *Scope) Host() string { return s.host }

// OnSite reports whether u, canonical, is on the scope's host or, with
// IncludeSubdomains, one of its subdomains on the same port.
func (s *Scope) OnSite(u *url.URL) bool {
	if u.Host == s.host {
		return true
	}
	if s.domain == "" || u.Port() != s.port {
		return false
	}
	name := u.Hostname()
	return name == s.domain || strings.HasSuffix(name, "."+s.domain)
}

// MayVisit reports whether a walk may fetch u, canonical: on the site,
// under the path prefix, and not excluded. Include patterns do not stop a
// walk: the pages they match are often reached through pages they do not.
func (s *Scope) MayVisit(u *url.URL) bool {
	return s.OnSite(u) && s.underPrefix(u) && !matchAny(s.exclude, target(u))
}

// Contains reports whether u, canonical, belongs in the walk's results:
// it may be visited and, when there are include patterns, matches one.
func (s *Scope) Contains(u *url.URL) bool {
	if !s.MayVisit(u) {
		return false
	}
	return len(s.include) == 0 || matchAny(s.include, target(u))
}

func (s *Scope) underPrefix(u *url.URL) bool {
	if s.prefix == "" || s.prefix == "/" {
		return true
	}
	path := u.EscapedPath()
	p := strings.TrimSuffix(s.prefix, "/")
	return path == p || strings.HasPrefix(path, p+"/")
}

// target is what path patterns are matched against: the path and query.
func target(u *url.URL) string {
	if u.RawQuery == "" {
		return u.EscapedPath()
	}
	return u.EscapedPath() + "?" + u.RawQuery
}

func matchAny(res []*regexp.Regexp, s string) bool {
	for _, re := range res {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// WWWTwins reports whether two canonical URLs are on one host under its
// www. name and without it (example.com and www.example.com, same port),
// the redirect a site's home page most often makes. Crawls and maps follow
// it from their start page.
func WWWTwins(a, b *url.URL) bool {
	return a.Host != b.Host && strings.TrimPrefix(a.Host, "www.") == strings.TrimPrefix(b.Host, "www.")
}
