package robots

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// checkCases are files and the verdicts they give; FuzzParse starts from
// them too.
var checkCases = []struct {
	name    string
	txt     string
	agent   string
	url     string
	allowed bool
	reason  string
}{
	{name: "empty file allows", txt: "", url: "/a", allowed: true},
	{name: "disallow prefix", txt: "User-agent: *\nDisallow: /private", url: "/private/x", reason: "Disallow: /private"},
	{name: "prefix is not a segment", txt: "User-agent: *\nDisallow: /private", url: "/privateer", reason: "Disallow: /private"},
	{name: "unmatched path allowed", txt: "User-agent: *\nDisallow: /private", url: "/public", allowed: true},
	{name: "disallow all", txt: "User-agent: *\nDisallow: /", url: "/", reason: "Disallow: /"},
	{name: "empty disallow allows", txt: "User-agent: *\nDisallow:", url: "/a", allowed: true},
	{name: "longer allow wins", txt: "User-agent: *\nDisallow: /a\nAllow: /a/b", url: "/a/b/c", allowed: true, reason: "Allow: /a/b"},
	{name: "longer disallow wins", txt: "User-agent: *\nAllow: /a\nDisallow: /a/b", url: "/a/b/c", reason: "Disallow: /a/b"},
	{name: "order does not matter", txt: "User-agent: *\nDisallow: /a/b\nAllow: /a", url: "/a/b", reason: "Disallow: /a/b"},
	{name: "tie goes to allow", txt: "User-agent: *\nDisallow: /page\nAllow: /page", url: "/page", allowed: true, reason: "Allow: /page"},
	{name: "wildcard", txt: "User-agent: *\nDisallow: /*.php", url: "/dir/index.php?x=1", reason: "Disallow: /*.php"},
	{name: "wildcard misses", txt: "User-agent: *\nDisallow: /*.php", url: "/dir/index.html", allowed: true},
	{name: "dollar anchors", txt: "User-agent: *\nDisallow: /*.pdf$", url: "/a/b.pdf", reason: "Disallow: /*.pdf$"},
	{name: "dollar rejects longer", txt: "User-agent: *\nDisallow: /*.pdf$", url: "/a/b.pdf?x", allowed: true},
	{name: "exact root only", txt: "User-agent: *\nDisallow: /$", url: "/index.html", allowed: true},
	{name: "exact root", txt: "User-agent: *\nDisallow: /$", url: "/", reason: "Disallow: /$"},
	{name: "wildcard longer than plain", txt: "User-agent: *\nAllow: /fish\nDisallow: /*fish*", url: "/fish.html", reason: "Disallow: /*fish*"},
	{name: "query matched", txt: "User-agent: *\nDisallow: /search?q=", url: "/search?q=go", reason: "Disallow: /search?q="},
	{name: "query not in pattern", txt: "User-agent: *\nDisallow: /search?q=", url: "/search", allowed: true},
	{name: "robots.txt always allowed", txt: "User-agent: *\nDisallow: /", url: "/robots.txt", allowed: true},
	{name: "encoded unreserved in URL", txt: "User-agent: *\nDisallow: /foo", url: "/%66oo", reason: "Disallow: /foo"},
	{name: "encoded unreserved in rule", txt: "User-agent: *\nDisallow: /%66oo", url: "/foo", reason: "Disallow: /foo"},
	{name: "escape case ignored", txt: "User-agent: *\nDisallow: /a%2fb", url: "/a%2Fb", reason: "Disallow: /a%2Fb"},
	{name: "reserved escape kept apart", txt: "User-agent: *\nDisallow: /a/b", url: "/a%2Fb", allowed: true},
	{name: "non-ASCII rule", txt: "User-agent: *\nDisallow: /ä", url: "/%C3%A4/x", reason: "Disallow: /%C3%A4"},
	{name: "comments and CRLF", txt: "# hi\r\nUser-agent: * # all\r\nDisallow: /x # no\r\n", url: "/x", reason: "Disallow: /x"},
	{name: "BOM", txt: "\ufeffUser-agent: *\nDisallow: /x", url: "/x", reason: "Disallow: /x"},
	{name: "rule before any group ignored", txt: "Disallow: /x\nUser-agent: *\nDisallow: /y", url: "/x", allowed: true},
	{name: "garbage lines skipped", txt: "User-agent: *\n<html>\nnonsense\nDisallow: /x", url: "/x", reason: "Disallow: /x"},

	{name: "own group over star", agent: "distill", txt: "User-agent: *\nDisallow: /\n\nUser-agent: distill\nDisallow: /private", url: "/page", allowed: true},
	{name: "own group rules", agent: "distill", txt: "User-agent: *\nDisallow: /\n\nUser-agent: distill\nDisallow: /private", url: "/private", reason: "Disallow: /private"},
	{name: "agent case-insensitive", agent: "distill", txt: "User-agent: DiStIlL/2.0\nDisallow: /x\nUser-agent: *\nDisallow: /", url: "/y", allowed: true},
	{name: "other agent ignored", agent: "distill", txt: "User-agent: googlebot\nDisallow: /\n", url: "/y", allowed: true},
	{name: "prefix of agent is not a match", agent: "distill", txt: "User-agent: dist\nDisallow: /\nUser-agent: *\nAllow: /", url: "/y", allowed: true, reason: "Allow: /"},
	{name: "grouped agents", agent: "distill", txt: "User-agent: a\nUser-agent: distill\nDisallow: /x", url: "/x", reason: "Disallow: /x"},
	{name: "groups merged", agent: "distill", txt: "User-agent: distill\nDisallow: /x\nUser-agent: other\nDisallow: /\nUser-agent: distill\nDisallow: /y", url: "/y", reason: "Disallow: /y"},
	{name: "sitemap does not end a group", agent: "distill", txt: "User-agent: distill\nSitemap: /s.xml\nDisallow: /x", url: "/x", reason: "Disallow: /x"},
}

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, tt := range checkCases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			agent := tt.agent
			if agent == "" {
				agent = "distill"
			}
			v := Parse([]byte(tt.txt)).For(agent).Check(mustURL(t, "https://example.com"+tt.url))
			if v.Allowed != tt.allowed || v.String() != tt.reason {
				t.Fatalf("Check(%s) = %+v, want allowed=%v reason %q", tt.url, v, tt.allowed, tt.reason)
			}
		})
	}
}

func TestCrawlDelay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		txt  string
		want time.Duration
	}{
		{name: "none", txt: "User-agent: *\nDisallow: /x", want: 0},
		{name: "seconds", txt: "User-agent: *\nCrawl-delay: 2", want: 2 * time.Second},
		{name: "fraction", txt: "User-agent: *\nCrawl-delay: 0.5", want: 500 * time.Millisecond},
		{name: "own group", txt: "User-agent: *\nCrawl-delay: 9\nUser-agent: distill\nCrawl-delay: 3", want: 3 * time.Second},
		{name: "bad value skipped", txt: "User-agent: *\nCrawl-delay: soon", want: 0},
		{name: "negative skipped", txt: "User-agent: *\nCrawl-delay: -4", want: 0},
		{name: "huge capped", txt: "User-agent: *\nCrawl-delay: 1e300", want: maxCrawlDelay},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Parse([]byte(tt.txt)).For("distill").CrawlDelay(); got != tt.want {
				t.Fatalf("CrawlDelay = %s, want %s", got, tt.want)
			}
		})
	}
}

// For resolves an agent's groups once, for a parsed file and for a blanket
// verdict alike.
func TestFor(t *testing.T) {
	t.Parallel()
	txt := "User-agent: *\nDisallow: /\nCrawl-delay: 9\n\n" +
		"User-agent: distill\nDisallow: /x\nCrawl-delay: 1\n\n" +
		"User-agent: other\nAllow: /\n\n" +
		"User-agent: distill\nAllow: /x/open\nCrawl-delay: 2\n"
	tests := []struct {
		name     string
		robots   *Robots
		agent    string
		delay    time.Duration
		verdicts map[string]string // path: "allow", or the reason it is disallowed
	}{
		{name: "own groups merged", robots: Parse([]byte(txt)), agent: "Distill", delay: 2 * time.Second,
			verdicts: map[string]string{"/": "allow", "/x": "Disallow: /x", "/x/open/1": "allow", "/robots.txt": "allow"}},
		{name: "star groups for a stranger", robots: Parse([]byte(txt)), agent: "nobody", delay: 9 * time.Second,
			verdicts: map[string]string{"/": "Disallow: /", "/robots.txt": "allow"}},
		{name: "unreachable file", robots: DisallowAll("robots.txt unreachable (503)"), agent: "distill",
			verdicts: map[string]string{"/": "robots.txt unreachable (503)", "/robots.txt": "robots.txt unreachable (503)"}},
		{name: "missing file", robots: AllowAll("robots.txt unavailable (404)"), agent: "distill",
			verdicts: map[string]string{"/x": "allow"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := tt.robots.For(tt.agent)
			if got := a.CrawlDelay(); got != tt.delay {
				t.Errorf("For(%s).CrawlDelay() = %s, want %s", tt.agent, got, tt.delay)
			}
			for path, want := range tt.verdicts {
				u := mustURL(t, "https://example.com"+path)
				v := a.Check(u)
				got := "allow"
				if !v.Allowed {
					got = v.String()
				}
				if got != want {
					t.Errorf("For(%s).Check(%s) = %+v, want %s", tt.agent, path, v, want)
				}
			}
		})
	}
}

// Rules past MaxSize are not read, and the line the limit cuts is dropped
// rather than read as a shorter, broader rule.
func TestParseLimit(t *testing.T) {
	t.Parallel()
	head := "User-agent: *\nDisallow: /early\n"
	// The limit falls right after "Disallow: /", which read alone would
	// disallow the whole site.
	n := MaxSize - len("Disallow: /") - len(head)
	pad := "#" + strings.Repeat("x", n-2) + "\n"
	body := head + pad + "Disallow: /cut-line\nDisallow: /late\n"
	r := Parse([]byte(body))
	for _, tc := range []struct {
		path    string
		allowed bool
	}{{"/early", false}, {"/late", true}, {"/", true}, {"/cut-line", true}} {
		if got := r.For("distill").Check(mustURL(t, "https://example.com"+tc.path)).Allowed; got != tc.allowed {
			t.Errorf("%s allowed = %v, want %v", tc.path, got, tc.allowed)
		}
	}
}

// Patterns full of wildcards cost time linear in their length per path
// offset, never exponential backtracking.
func TestMatchHostilePattern(t *testing.T) {
	t.Parallel()
	pattern := "/" + strings.Repeat("*a", 2000) + "b"
	path := "/" + strings.Repeat("a", 4000)
	if match(pattern, path) {
		t.Fatal("matched a path without b")
	}
}

func TestSitemaps(t *testing.T) {
	t.Parallel()
	txt := "Sitemap: https://example.com/sitemap_index.xml\n" +
		"User-agent: *\nDisallow: /private\n" +
		"sitemap:https://example.com/news.xml.gz # the news\r\n" +
		"Allow: /private/ok\n" +
		"Site-map: https://cdn.example.net/other.txt\n" +
		"Sitemap: /relative.xml\n" +
		"Sitemap: https://example.com/sitemap_index.xml\n" +
		"Sitemap:\n"
	r := Parse([]byte(txt))
	want := []string{"https://example.com/sitemap_index.xml", "https://example.com/news.xml.gz", "https://cdn.example.net/other.txt"}
	if got := r.Sitemaps(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Sitemaps() = %q, want %q", got, want)
	}
	// A Sitemap line inside a group neither ends it nor starts another.
	if v := r.For("distill").Check(mustURL(t, "https://example.com/private/ok")); !v.Allowed {
		t.Errorf("the Allow after a Sitemap line was lost: %v", v)
	}
	if v := r.For("distill").Check(mustURL(t, "https://example.com/private/x")); v.Allowed {
		t.Errorf("the group's Disallow was lost: %v", v)
	}
	if got := AllowAll("404").Sitemaps(); len(got) != 0 {
		t.Errorf("an unavailable file declares %q", got)
	}
}
