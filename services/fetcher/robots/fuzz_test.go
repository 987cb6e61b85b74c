package robots

import (
	"bytes"
	"net/url"
	"slices"
	"strings"
	"testing"

	"distill.dev/services/fetcher/siteurl"
)

// disallowAllSpellings are ways of writing "nothing here may be crawled"
// that Parse must read as such.
var disallowAllSpellings = []string{
	"User-agent: *\nDisallow: /",
	"user-agent:*\r\ndisallow:/",
	"USER-AGENT: *\rDISALLOW: /",
	"\ufeffUser-agent: *\nDisallow: /*",
	"User-agent: *\nDissallow: /",
	"User agent: *\nDisalow: /\n",
	"User-agent: * # everyone\nDisallow: / # everything",
	"User-agent: Distill/1.0\nUser-agent: *\nDisallow: /\nAllow:\n",
	"Useragent: *\nDisallow: *",
	"User-agent: a\nUser-agent: *\nCrawl-delay: 5\nDisallow: /\nSitemap: https://example.com/s.xml",
}

// FuzzParse checks what holds for any robots.txt, agent and path: nothing
// panics; the Crawl-delay is within its bounds; the verdict is the longest
// matching rule's, by a matcher written independently of match; a group
// whose rules disallow everything and allow nothing allows nothing but
// robots.txt; the file survives its trip through the wire unchanged; and
// CRLF line ends read as LF ones do.
//
//	go test -run '^$' -fuzz FuzzParse ./services/fetcher/robots
func FuzzParse(f *testing.F) {
	for _, c := range checkCases {
		f.Add([]byte(c.txt), c.agent, c.url)
	}
	for _, txt := range disallowAllSpellings {
		f.Add([]byte(txt), "distill", "/page?q=1")
	}
	f.Fuzz(func(t *testing.T, body []byte, agent, path string) {
		u, err := url.Parse("https://example.com/" + strings.TrimPrefix(path, "/"))
		if err != nil || u.Host != "example.com" {
			return
		}
		r := Parse(body)
		a := r.For(agent)
		if d := a.CrawlDelay(); d < 0 || d > maxCrawlDelay {
			t.Fatalf("Crawl-delay %s is out of bounds", d)
		}
		v := a.Check(u)
		target := checkTarget(u)
		if target == "/robots.txt" {
			if !v.Allowed {
				t.Fatalf("robots.txt itself is disallowed: %v", v)
			}
		} else {
			checkLongestRule(t, a.rules, target, v)
		}
		if target != "/robots.txt" && disallowsAll(a.rules) && v.Allowed {
			t.Fatalf("%s is allowed by rules that disallow everything: %v", target, a.rules)
		}

		back := FromProto(r.Proto())
		sameAnswers(t, "after the wire", back, r, agent, u)
		if len(body) <= MaxSize/2 {
			crlf := Parse(bytes.ReplaceAll(body, []byte("\n"), []byte("\r\n")))
			sameAnswers(t, "with CRLF line ends", crlf, r, agent, u)
		}
	})
}

// TestDisallowAllSpellings checks each spelling denies every page to every
// agent, and lets robots.txt through.
func TestDisallowAllSpellings(t *testing.T) {
	t.Parallel()
	for _, txt := range disallowAllSpellings {
		r := Parse([]byte(txt))
		for _, agent := range []string{"distill", "Distill/1.0", "other"} {
			for _, p := range []string{"/", "/a", "/a/b?c=d", "/%2F", "/robots.txt/x"} {
				if v := r.For(agent).Check(mustURL(t, "https://example.com"+p)); v.Allowed {
					t.Errorf("%q allows %s to %s: %v", txt, p, agent, v)
				}
			}
			if !r.For(agent).Check(mustURL(t, "https://example.com/robots.txt")).Allowed {
				t.Errorf("%q disallows robots.txt to %s", txt, agent)
			}
		}
	}
}

// checkTarget is what Check matches rules against: the path and query, in
// the one spelling rules have.
func checkTarget(u *url.URL) string {
	target := u.EscapedPath()
	if target == "" {
		target = "/"
	}
	if target == "/robots.txt" {
		return target
	}
	if u.RawQuery != "" || u.ForceQuery {
		target += "?" + u.RawQuery
	}
	return siteurl.NormaliseEscapes(target)
}

// checkLongestRule checks v is the verdict of the longest rule that
// matches target, Allow on a tie, or allowed when none does.
func checkLongestRule(t *testing.T, rules []Rule, target string, v Verdict) {
	t.Helper()
	var best *Rule
	for _, rule := range rules {
		if (len(rule.Pattern)+1)*(len(target)+1) > 1<<16 {
			return // too big for the reference matcher
		}
		if !refMatch(rule.Pattern, target) {
			continue
		}
		if best == nil || len(rule.Pattern) > len(best.Pattern) ||
			len(rule.Pattern) == len(best.Pattern) && rule.Allow && !best.Allow {
			best = &rule
		}
	}
	switch {
	case best == nil && (!v.Allowed || v.Rule != nil):
		t.Fatalf("%s matches no rule of %v, yet the verdict is %+v", target, rules, v)
	case best != nil && (v.Rule == nil || v.Allowed != best.Allow || *v.Rule != *best):
		t.Fatalf("%s: the verdict is %+v, want %s", target, v, best)
	}
}

// refMatch reports whether pattern matches the start of path, "*" for any
// run and a final "$" for the end: the definition, tried position by
// position with what was already tried remembered.
func refMatch(pattern, path string) bool {
	memo := map[[2]int]bool{}
	var from func(i, j int) bool
	from = func(i, j int) bool {
		key := [2]int{i, j}
		if v, ok := memo[key]; ok {
			return v
		}
		var ok bool
		switch {
		case i == len(pattern):
			ok = true
		case pattern[i] == '$' && i == len(pattern)-1:
			ok = j == len(path)
		case pattern[i] == '*':
			ok = from(i+1, j) || j < len(path) && from(i, j+1)
		default:
			ok = j < len(path) && path[j] == pattern[i] && from(i+1, j+1)
		}
		memo[key] = ok
		return ok
	}
	return from(0, 0)
}

// disallowsAll reports whether rules allow nothing and disallow every
// path.
func disallowsAll(rules []Rule) bool {
	all := false
	for _, r := range rules {
		if r.Allow {
			return false
		}
		all = all || r.Pattern == "/" || r.Pattern == "*" || r.Pattern == "/*"
	}
	return all
}

// sameAnswers checks got answers agent about u as want does.
func sameAnswers(t *testing.T, how string, got, want *Robots, agent string, u *url.URL) {
	t.Helper()
	g, w := got.For(agent), want.For(agent)
	if gv, wv := g.Check(u), w.Check(u); gv.Allowed != wv.Allowed || gv.String() != wv.String() {
		t.Fatalf("%s, %s is %+v, was %+v", how, u, gv, wv)
	}
	if g.CrawlDelay() != w.CrawlDelay() {
		t.Fatalf("%s, the Crawl-delay is %s, was %s", how, g.CrawlDelay(), w.CrawlDelay())
	}
	if !slices.Equal(got.Sitemaps(), want.Sitemaps()) {
		t.Fatalf("%s, the sitemaps are %q, were %q", how, got.Sitemaps(), want.Sitemaps())
	}
}
