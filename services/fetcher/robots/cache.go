package robots

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// MaxRedirects is how many redirects a robots.txt fetch follows; RFC 9309
// section 2.3.1.2 asks for at least five.
const MaxRedirects = 5

const (
	defaultTTL      = time.Hour
	defaultErrorTTL = time.Minute
	defaultMaxHosts = 1024
)

// Getter sends one GET for a robots.txt and does not follow redirects. The
// caller supplies it so that the file is fetched under the same network
// policy, client, identity and per-host limits as the pages it governs;
// it must refuse a URL the policy refuses. The body it returns must be
// decoded (no Content-Encoding left to undo).
type Getter func(ctx context.Context, rawURL string) (*http.Response, error)

// Cache keeps the robots.txt of recently seen origins in memory, so that a
// site's file is fetched once per TTL however many of its pages are.
type Cache struct {
	ttl, errTTL time.Duration
	maxHosts    int
	now         func() time.Time

	mu      sync.Mutex
	entries map[string]*entry
}

type entry struct {
	ready   chan struct{} // closed once robots and expires are set
	robots  *Robots
	expires time.Time
}

// Option configures a Cache.
type Option func(*Cache)

// WithTTL sets how long a fetched file is trusted, and how long the
// disallow-all answer for an unreachable one is kept before trying again.
func WithTTL(ok, unreachable time.Duration) Option {
	return func(c *Cache) { c.ttl, c.errTTL = ok, unreachable }
}

// WithMaxHosts bounds how many origins are remembered.
func WithMaxHosts(n int) Option {
	return func(c *Cache) {
		if n > 0 {
			c.maxHosts = n
		}
	}
}

// WithClock sets the time source for expiry; tests pass a fake one.
func WithClock(now func() time.Time) Option {
	return func(c *Cache) { c.now = now }
}

// NewCache returns an empty Cache.
func NewCache(opts ...Option) *Cache {
	c := &Cache{
		ttl:      defaultTTL,
		errTTL:   defaultErrorTTL,
		maxHosts: defaultMaxHosts,
		now:      time.Now,
		entries:  make(map[string]*entry),
	}
	for _, o := range opts {
		o(c)
	}
	return c
}

// URL is the robots.txt that governs u: the file at the root of u's
// scheme, host and port (RFC 9309 section 2.3).
func URL(u *url.URL) string {
	return (&url.URL{Scheme: strings.ToLower(u.Scheme), Host: strings.ToLower(u.Host), Path: "/robots.txt"}).String()
}

// Get returns the rules of u's origin, fetching them through get unless a
// fresh copy is cached. Concurrent calls for one origin share one fetch.
// The only error is the context's: every other failure is an answer.
func (c *Cache) Get(ctx context.Context, u *url.URL, get Getter) (*Robots, error) {
	key := URL(u)
	for {
		c.mu.Lock()
		e := c.entries[key]
		if e != nil {
			select {
			case <-e.ready:
				if c.now().Before(e.expires) {
					c.mu.Unlock()
					return e.robots, nil
				}
				delete(c.entries, key)
				e = nil
			default:
			}
		}
		if e != nil {
			c.mu.Unlock()
			select {
			case <-e.ready:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		e = &entry{ready: make(chan struct{})}
		c.makeRoom()
		c.entries[key] = e
		c.mu.Unlock()

		r, ttl, err := fetch(ctx, key, get)
		c.mu.Lock()
		if err != nil {
			// The caller ran out of time, which says nothing about the
			// site: forget the attempt and let waiters try their own.
			delete(c.entries, key)
		} else {
			e.robots, e.expires = r, c.now().Add(c.ttlOf(ttl))
		}
		close(e.ready)
		c.mu.Unlock()
		return r, err
	}
}

type outcome int

const (
	fetched outcome = iota
	unreachable
)

func (c *Cache) ttlOf(o outcome) time.Duration {
	if o == unreachable {
		return c.errTTL
	}
	return c.ttl
}

// makeRoom drops expired entries, and then the ones closest to expiry,
// until one more fits. Called with c.mu held.
func (c *Cache) makeRoom() {
	if len(c.entries) < c.maxHosts {
		return
	}
	now := c.now()
	for k, e := range c.entries {
		if isReady(e) && !now.Before(e.expires) {
			delete(c.entries, k)
		}
	}
	for len(c.entries) >= c.maxHosts {
		var oldest string
		var at time.Time
		for k, e := range c.entries {
			// A fetch in flight has waiters; it is never the one dropped.
			if isReady(e) && (oldest == "" || e.expires.Before(at)) {
				oldest, at = k, e.expires
			}
		}
		if oldest == "" {
			return
		}
		delete(c.entries, oldest)
	}
}

func isReady(e *entry) bool {
	select {
	case <-e.ready:
		return true
	default:
		return false
	}
}

// fetch reads one origin's robots.txt and maps the outcome as RFC 9309
// section 2.3.1 does: 2xx is parsed, 4xx allows all, 5xx and failure to
// connect disallow all, and redirects are followed.
func fetch(ctx context.Context, raw string, get Getter) (*Robots, outcome, error) {
	// Reasons name the file asked for, and the hop when a redirect led on.
	file := raw
	name := func() string {
		if raw == file {
			return file
		}
		return file + " (redirected to " + raw + ")"
	}
	for hop := 0; ; hop++ {
		resp, err := get(ctx, raw)
		if err != nil {
			if ctx.Err() != nil {
				return nil, unreachable, ctx.Err()
			}
			return DisallowAll(fmt.Sprintf("%s unreachable: %v", name(), err)), unreachable, nil
		}
		switch code := resp.StatusCode; {
		case code >= 200 && code < 300:
			body, err := io.ReadAll(io.LimitReader(resp.Body, MaxSize+1))
			_ = resp.Body.Close()
			if err != nil {
				if ctx.Err() != nil {
					return nil, unreachable, ctx.Err()
				}
				return DisallowAll(fmt.Sprintf("%s unreachable: %v", name(), err)), unreachable, nil
			}
			return Parse(body), fetched, nil
		case code >= 300 && code < 400:
			loc := resp.Header.Get("Location")
			drain(resp)
			if loc == "" {
				return AllowAll(fmt.Sprintf("%s unavailable (%s without Location)", name(), resp.Status)), fetched, nil
			}
			if hop == MaxRedirects {
				// Section 2.3.1.2: past five redirects the file MAY be
				// taken as unavailable.
				return AllowAll(fmt.Sprintf("%s unavailable (more than %d redirects)", file, MaxRedirects)), fetched, nil
			}
			base, err := url.Parse(raw)
			if err != nil {
				return DisallowAll(fmt.Sprintf("%s unreachable: %v", name(), err)), unreachable, nil
			}
			next, err := base.Parse(loc)
			if err != nil {
				return DisallowAll(fmt.Sprintf("%s unreachable: bad redirect Location %q", name(), loc)), unreachable, nil
			}
			raw = next.String()
		case code >= 400 && code < 500:
			drain(resp)
			return AllowAll(fmt.Sprintf("%s unavailable (%s)", name(), resp.Status)), fetched, nil
		default:
			drain(resp)
			return DisallowAll(fmt.Sprintf("%s unreachable (%s)", name(), resp.Status)), unreachable, nil
		}
	}
}

// drain lets a short body's connection be reused and cuts a long one.
func drain(resp *http.Response) {
	_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
	_ = resp.Body.Close()
}
