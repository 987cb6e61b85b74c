// Package cookies is a session's cookie jar that can travel. The standard
// library's jar decides which cookie goes where (domains, paths, public
// suffixes, expiry, secure); this package also keeps a journal of every
// cookie set, so the jar can be written into a request to a fetcher in
// another process and rebuilt there, and the cookies that fetcher was sent
// applied back.
package cookies

import (
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/publicsuffix"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
)

// MaxEntries bounds the journal: past it the oldest entries are dropped,
// as browsers drop cookies past their per-profile limit.
const MaxEntries = 3000

// Jar is an http.CookieJar with a journal. It is safe for concurrent use.
type Jar struct {
	mu      sync.Mutex
	jar     *cookiejar.Jar
	entries []*internalv1.JarEntry
	// index finds an entry by what identifies a cookie, so setting a cookie
	// again replaces its entry instead of growing the journal.
	index map[key]int
	now   func() time.Time
}

type key struct {
	host, name, domain, path string
}

// New returns an empty jar.
func New() *Jar {
	return newJar(time.Now)
}

func newJar(now func() time.Time) *Jar {
	// cookiejar.New fails only on a bad option, and these are fixed.
	jar, _ := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
	return &Jar{jar: jar, index: map[key]int{}, now: now}
}

// FromEntries rebuilds a jar from a journal.
func FromEntries(entries []*internalv1.JarEntry) *Jar {
	j := New()
	j.Apply(entries)
	return j
}

// Cookies returns the cookies to send to u.
func (j *Jar) Cookies(u *url.URL) []*http.Cookie {
	return j.jar.Cookies(u)
}

// SetCookies stores the cookies a response from u set.
func (j *Jar) SetCookies(u *url.URL, cs []*http.Cookie) {
	j.Record(u, cs)
}

// Record stores the cookies a response from u set, like SetCookies, and
// returns their journal entries.
func (j *Jar) Record(u *url.URL, cs []*http.Cookie) []*internalv1.JarEntry {
	entries := make([]*internalv1.JarEntry, 0, len(cs))
	for _, c := range cs {
		entries = append(entries, j.entry(u, c))
	}
	j.Apply(entries)
	return entries
}

// Apply sets journal entries, in order, as if their responses had just
// arrived. Entries whose URL does not parse are skipped.
func (j *Jar) Apply(entries []*internalv1.JarEntry) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, e := range entries {
		u, err := url.Parse(e.GetUrl())
		if err != nil || u.Host == "" {
			continue
		}
		c := e.GetCookie()
		hc := &http.Cookie{
			Name: c.GetName(), Value: c.GetValue(), Domain: c.GetDomain(), Path: c.GetPath(),
			Secure: c.GetSecure(), HttpOnly: c.GetHttpOnly(),
		}
		if c.GetExpires() != 0 {
			hc.Expires = time.Unix(c.GetExpires(), 0)
		}
		j.jar.SetCookies(u, []*http.Cookie{hc})
		k := keyOf(u, c)
		if i, ok := j.index[k]; ok {
			j.entries[i] = e
			continue
		}
		j.index[k] = len(j.entries)
		j.entries = append(j.entries, e)
	}
	if len(j.entries) > MaxEntries {
		j.compact(len(j.entries) - MaxEntries)
	}
}

// compact drops the oldest n entries and every expired one.
func (j *Jar) compact(drop int) {
	now := j.now().Unix()
	kept := j.entries[:0]
	for i, e := range j.entries {
		exp := e.GetCookie().GetExpires()
		if i < drop || (exp != 0 && exp <= now) {
			continue
		}
		kept = append(kept, e)
	}
	clear(j.entries[len(kept):])
	j.entries = kept
	j.index = make(map[key]int, len(kept))
	for i, e := range kept {
		u, _ := url.Parse(e.GetUrl())
		j.index[keyOf(u, e.GetCookie())] = i
	}
}

// keyOf identifies the cookie c set by a response from u: its name, the
// domain it was set for and its path, the path defaulting as RFC 6265
// section 5.1.4 says.
func keyOf(u *url.URL, c *internalv1.Cookie) key {
	k := key{host: strings.ToLower(u.Hostname()), name: c.GetName(), domain: strings.TrimPrefix(strings.ToLower(c.GetDomain()), "."), path: c.GetPath()}
	if !strings.HasPrefix(k.path, "/") {
		k.path = "/"
		if i := strings.LastIndex(u.Path, "/"); i > 0 {
			k.path = u.Path[:i]
		}
	}
	if k.domain != "" {
		// A domain cookie is the same cookie whichever host set it.
		k.host = ""
	}
	return k
}

// Entries returns the journal, oldest first, without expired cookies.
func (j *Jar) Entries() []*internalv1.JarEntry {
	j.mu.Lock()
	defer j.mu.Unlock()
	now := j.now().Unix()
	out := make([]*internalv1.JarEntry, 0, len(j.entries))
	for _, e := range j.entries {
		if exp := e.GetCookie().GetExpires(); exp != 0 && exp <= now {
			continue
		}
		out = append(out, e)
	}
	return out
}

// Clone returns an independent jar with the same cookies.
func (j *Jar) Clone() *Jar {
	c := newJar(j.now)
	c.Apply(j.Entries())
	return c
}

// entry turns a cookie a response from u set into a journal entry, with
// Max-Age made absolute now.
func (j *Jar) entry(u *url.URL, c *http.Cookie) *internalv1.JarEntry {
	pc := &internalv1.Cookie{
		Name: c.Name, Value: c.Value, Domain: c.Domain, Path: c.Path,
		Secure: c.Secure, HttpOnly: c.HttpOnly,
	}
	switch {
	case c.MaxAge < 0:
		pc.Expires = 1 // long past: deletes the cookie
	case c.MaxAge > 0:
		pc.Expires = j.now().Add(time.Duration(c.MaxAge) * time.Second).Unix()
	case !c.Expires.IsZero():
		pc.Expires = max(c.Expires.Unix(), 1)
	}
	return &internalv1.JarEntry{Url: (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String(), Cookie: pc}
}
