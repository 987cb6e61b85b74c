package fetch

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"

	"google.golang.org/protobuf/proto"

	"distill.dev/proto/fetchopts"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	"distill.dev/services/fetcher/cache"
	"distill.dev/services/fetcher/identity"
	"distill.dev/services/platform/netpolicy"
)

// WithCache makes the Fetcher answer from c while an answer is fresh
// (options.cache_ttl) and store every successful answer in it, unless a
// call sets options.no_cache.
func WithCache(c *cache.Cache) Option {
	return func(f *Fetcher) { f.cache = c }
}

// usesCache reports whether c may read or write the cache. Calls with bad
// options skip it so the live path reports them.
func (f *Fetcher) usesCache(c *call) bool {
	// Only a GET's answer is the page at a URL; a POST's is one reply, and
	// an answer to a request with cookies may be one user's page.
	// A resource is not a page: an answer of a type pages refuse must not
	// be handed to a later page fetch of the same URL. Nor is an answer
	// to the caller's own headers.
	return f.cache != nil && !c.anyType && c.send.method == http.MethodGet && c.jar == nil && len(c.opts.GetHeaders()) == 0 &&
		!c.opts.GetNoCache() && fetchopts.Validate(c.opts) == nil
}

// cacheKey is the cache key of c's URL under c's profile, or "" when the
// URL is one the policy refuses or cannot parse; the live path then
// reports why. The profile is part of the key: a site may answer a
// browser otherwise than a crawler that says what it is (a challenge
// page to one, the page to the other), and a call that asked for one
// identity is owed the page that identity was given. distill's keys are
// the URL's alone, as before profiles.
func (c *call) cacheKey() string {
	u, err := c.policy.CheckURL(c.raw)
	if err != nil {
		return ""
	}
	key := cache.Key(u)
	if name := c.profile.Name(); name != identity.DistillName {
		sum := sha256.Sum256([]byte(name + "\n" + key))
		key = hex.EncodeToString(sum[:])
	}
	return key
}

// fromCache returns a fresh cached answer that this call may be given. A
// cached answer skips the dial, where the policy is otherwise enforced, so
// every URL the answer came through is judged again under this call's
// policy, names through a fresh lookup, and, if the call respects
// robots.txt, by the site's robots.txt: the entry may have been stored by a
// call that did not. Whatever would be refused or cannot be judged now is a
// miss, and the live fetch decides and reports.
func (f *Fetcher) fromCache(ctx context.Context, c *call) (*internalv1.FetcherServiceFetchResponse, bool) {
	key := c.cacheKey()
	if key == "" {
		return nil, false
	}
	e, ok := f.cache.Get(key, fetchopts.CacheTTL(c.opts))
	if !ok {
		return nil, false
	}
	resp := e.Response
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	seen := map[string]bool{}
	for _, raw := range slices.Concat([]string{c.raw, resp.GetFinalUrl()}, resp.GetRedirectHistory()) {
		u, err := c.policy.CheckURL(raw)
		if err != nil {
			return nil, false
		}
		port, _ := netpolicy.Port(u)
		if seen[u.Host] {
			continue
		}
		seen[u.Host] = true
		if _, err := c.policy.ResolvePort(ctx, f.resolver, u.Hostname(), port); err != nil {
			return nil, false
		}
	}
	for _, raw := range slices.Concat(resp.GetRedirectHistory(), []string{resp.GetFinalUrl()}) {
		u, err := c.policy.CheckURL(raw)
		if err != nil || f.checkRobots(ctx, c, u, "fetch "+display(raw)) != nil {
			return nil, false
		}
	}
	resp = proto.CloneOf(resp)
	resp.FromCache = true
	// The entry holds the whole body; a caller with a smaller cap gets its
	// first max_bytes, as from the server.
	if !e.Fits(c.maxBytes) {
		resp.Body, resp.TruncatedBody = resp.Body[:c.maxBytes:c.maxBytes], true
	}
	return resp, true
}

// store keeps a live answer; a cache that cannot be written costs speed,
// not the answer, so failures are only logged.
func (f *Fetcher) store(ctx context.Context, c *call, resp *internalv1.FetcherServiceFetchResponse) {
	key := c.cacheKey()
	// A truncated body is not the page at the URL, only the part one
	// caller's cap let through.
	if key == "" || !cache.Storable(resp) || resp.GetTruncatedBody() {
		return
	}
	if err := f.cache.Put(key, resp); err != nil {
		f.logger.WarnContext(ctx, "cache write failed", "url", c.raw, "err", err.Error())
	}
}
