// Package robots reads robots.txt files as RFC 9309 defines them and
// answers whether a crawler may request a URL. Parsing is lenient, as the
// RFC asks: a line that cannot be understood is skipped, never fatal.
package robots

import (
	"bytes"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"distill.dev/services/fetcher/siteurl"
)

// MaxSize is how much of a robots.txt is parsed. RFC 9309 section 2.5 asks
// for at least 500 KiB; whatever follows is ignored.
const MaxSize = 500 << 10

// maxCrawlDelay bounds a Crawl-delay so that a typo of many zeros does not
// overflow the duration; a day is already more than any fetch waits.
const maxCrawlDelay = 24 * time.Hour

// Rule is one Allow or Disallow line of the group that applied.
type Rule struct {
	Allow bool
	// Pattern is the path pattern as normalised for matching.
	Pattern string
}

func (r Rule) String() string {
	if r.Allow {
		return "Allow: " + r.Pattern
	}
	return "Disallow: " + r.Pattern
}

// Verdict is the answer for one URL.
type Verdict struct {
	Allowed bool
	// Rule is the rule that decided; nil when none matched or when the
	// answer covers the whole site.
	Rule *Rule
	// Reason says why the whole site is allowed or disallowed when the
	// file could not be read; "" otherwise.
	Reason string
}

// String is the rule or reason behind the verdict, "" for none.
func (v Verdict) String() string {
	if v.Rule != nil {
		return v.Rule.String()
	}
	return v.Reason
}

// Robots is a parsed robots.txt, or the blanket answer that stands in for
// one that could not be read.
type Robots struct {
	groups []group
	// blanket, when set, decides every URL: the file was unavailable (allow)
	// or unreachable (disallow).
	blanket *Verdict
	// sitemaps are the Sitemap: lines, in file order, without repeats.
	sitemaps []string
}

// maxSitemaps bounds the Sitemap: lines kept from one file; a site that
// declares more is listing pages, not sitemaps.
const maxSitemaps = 1000

// Sitemaps returns the sitemap URLs the file declares, as written (RFC
// 9309 section 2.2.4 leaves them to the sitemaps protocol); none when the
// file could not be read.
func (r *Robots) Sitemaps() []string {
	return r.sitemaps
}

type group struct {
	agents     []string // lower-case product tokens, or "*"
	rules      []Rule
	crawlDelay time.Duration
	hasDelay   bool
}

// AllowAll is the answer for a site without a usable robots.txt (4xx).
func AllowAll(reason string) *Robots {
	return &Robots{blanket: &Verdict{Allowed: true, Reason: reason}}
}

// DisallowAll is the answer for a site whose robots.txt could not be
// reached (5xx, network failure): RFC 9309 section 2.3.1.4 says to assume
// complete disallow.
func DisallowAll(reason string) *Robots {
	return &Robots{blanket: &Verdict{Allowed: false, Reason: reason}}
}

// Parse reads a robots.txt body. Only the first MaxSize bytes count; a line
// cut by that limit is dropped rather than read as a shorter rule.
func Parse(body []byte) *Robots {
	if len(body) > MaxSize {
		body = body[:MaxSize]
		if i := bytes.LastIndexAny(body, "\r\n"); i >= 0 {
			body = body[:i]
		}
	}
	body = bytes.TrimPrefix(body, []byte("\ufeff"))

	r := &Robots{}
	var cur *group
	// inRules is true once the current group has a rule: the next
	// user-agent line then starts a new group instead of joining this one.
	inRules := false
	for len(body) > 0 {
		var line []byte
		if i := bytes.IndexAny(body, "\r\n"); i >= 0 {
			line, body = body[:i], body[i+1:]
		} else {
			line, body = body, nil
		}
		if i := bytes.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		key, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		k := strings.ToLower(strings.TrimSpace(string(key)))
		v := strings.TrimSpace(string(value))
		switch k {
		case "user-agent", "useragent", "user agent":
			if cur == nil || inRules {
				r.groups = append(r.groups, group{})
				cur = &r.groups[len(r.groups)-1]
				inRules = false
			}
			cur.agents = append(cur.agents, productToken(v))
		case "allow", "disallow", "dissallow", "disalow":
			if cur == nil {
				continue // a rule outside any group applies to no one
			}
			inRules = true
			// An empty pattern matches nothing (RFC 9309 section 2.2.2).
			if v == "" {
				continue
			}
			cur.rules = append(cur.rules, Rule{Allow: k == "allow", Pattern: siteurl.NormaliseEscapes(v)})
		case "crawl-delay":
			if cur == nil {
				continue
			}
			inRules = true
			secs, err := strconv.ParseFloat(v, 64)
			if err != nil || secs < 0 || secs != secs {
				continue
			}
			d := maxCrawlDelay
			if secs < maxCrawlDelay.Seconds() {
				d = time.Duration(secs * float64(time.Second))
			}
			cur.crawlDelay, cur.hasDelay = d, true
		case "sitemap", "site-map":
			// Belongs to no group and does not end one. Relative values
			// are not URLs the protocol allows.
			if (strings.HasPrefix(strings.ToLower(v), "http://") || strings.HasPrefix(strings.ToLower(v), "https://")) &&
				len(r.sitemaps) < maxSitemaps && !slices.Contains(r.sitemaps, v) {
				r.sitemaps = append(r.sitemaps, v)
			}
		}
		// Unknown records belong to no group and do not end one.
	}
	return r
}

// productToken reduces a user-agent line to the token it names: RFC 9309
// product tokens are letters, "_" and "-", so "Distill/1.0" names distill.
func productToken(v string) string {
	if strings.HasPrefix(v, "*") {
		return "*"
	}
	end := 0
	for end < len(v) {
		c := v[end]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '-') {
			break
		}
		end++
	}
	return strings.ToLower(v[:end])
}

// Agent is what a robots.txt says to one agent: every group naming it,
// merged, or else every "*" group (RFC 9309 section 2.2.1). Resolving it
// once answers any number of URLs and the Crawl-delay without merging the
// groups again.
type Agent struct {
	rules      []Rule
	crawlDelay time.Duration
	// blanket, when set, decides every URL, as in Robots.
	blanket *Verdict
}

// For resolves the groups that apply to agent.
func (r *Robots) For(agent string) Agent {
	if r.blanket != nil {
		return Agent{blanket: r.blanket}
	}
	agent = strings.ToLower(agent)
	pick := func(name string) (a Agent, found bool) {
		for _, g := range r.groups {
			for _, token := range g.agents {
				if token == name {
					found = true
					a.rules = append(a.rules, g.rules...)
					if g.hasDelay && g.crawlDelay > a.crawlDelay {
						a.crawlDelay = g.crawlDelay
					}
					break
				}
			}
		}
		return a, found
	}
	if a, ok := pick(agent); ok {
		return a
	}
	a, _ := pick("*")
	return a
}

// CrawlDelay is the agent's Crawl-delay, 0 when it has none or the file
// could not be read.
func (a Agent) CrawlDelay() time.Duration {
	return a.crawlDelay
}

// Check decides whether the agent may request u.
func (a Agent) Check(u *url.URL) Verdict {
	if a.blanket != nil {
		return *a.blanket
	}
	target := u.EscapedPath()
	if target == "" {
		target = "/"
	}
	// The file that states the rules is always allowed (section 2.2.2).
	if target == "/robots.txt" {
		return Verdict{Allowed: true}
	}
	if u.RawQuery != "" || u.ForceQuery {
		target += "?" + u.RawQuery
	}
	// Section 2.2.2 compares paths and patterns in one spelling.
	target = siteurl.NormaliseEscapes(target)

	best, found := Rule{}, false
	for _, rule := range a.rules {
		if !match(rule.Pattern, target) {
			continue
		}
		// The longest pattern wins; on a tie Allow wins, the least
		// restrictive reading section 2.2.2 asks for.
		if !found || len(rule.Pattern) > len(best.Pattern) ||
			len(rule.Pattern) == len(best.Pattern) && rule.Allow && !best.Allow {
			best, found = rule, true
		}
	}
	if !found {
		return Verdict{Allowed: true}
	}
	return Verdict{Allowed: best.Allow, Rule: &best}
}

// match reports whether pattern matches the start of path: "*" stands for
// any run of characters and a final "$" for the end of the path. It keeps
// the set of path offsets reachable so far, so no input backtracks.
func match(pattern, path string) bool {
	pos := []int{0}
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		if c == '$' && i == len(pattern)-1 {
			return pos[len(pos)-1] == len(path)
		}
		if c == '*' {
			first := pos[0]
			pos = pos[:0]
			for p := first; p <= len(path); p++ {
				pos = append(pos, p)
			}
			continue
		}
		next := pos[:0]
		for _, p := range pos {
			if p < len(path) && path[p] == c {
				next = append(next, p+1)
			}
		}
		if len(next) == 0 {
			return false
		}
		pos = next
	}
	return true
}
