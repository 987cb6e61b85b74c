package fetch

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/cache"
	"distill.dev/services/platform/netpolicy/netpolicytest"
)

type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func cached(t *testing.T, opts ...Option) (*Fetcher, *cache.Cache, *testClock) {
	t.Helper()
	clk := &testClock{t: time.Now()}
	c, err := cache.Open(t.TempDir(), cache.WithClock(clk.now))
	if err != nil {
		t.Fatal(err)
	}
	return newFetcher(t, append([]Option{WithCache(c)}, opts...)...), c, clk
}

func entries(t *testing.T, c *cache.Cache) int64 {
	t.Helper()
	n, _, err := c.Info()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestCacheServesTheSecondFetch(t *testing.T) {
	t.Parallel()
	ts, hits := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/page", http.StatusFound)
			return
		}
		html(w, 200, page)
	})
	f, _, _ := cached(t)
	first := mustGet(t, f, ts.URL+"/moved", local())
	if first.GetFromCache() {
		t.Error("first fetch says it came from the cache")
	}
	second := mustGet(t, f, ts.URL+"/moved#section", local())
	if n := hits.Load(); n != 2 {
		t.Fatalf("server got %d requests, want 2 (redirect and page) for both fetches", n)
	}
	if !second.GetFromCache() {
		t.Error("second fetch not marked from_cache")
	}
	if string(second.GetBody()) != page || second.GetFinalUrl() != ts.URL+"/page" ||
		second.GetCharset() != "utf-8" || len(second.GetRedirectHistory()) != 1 {
		t.Errorf("cached answer differs: %v", second)
	}
}

func TestCacheFreshness(t *testing.T) {
	t.Parallel()
	ts, hits := serve(t, func(w http.ResponseWriter, r *http.Request) { html(w, 200, page) })
	f, _, clk := cached(t)
	withTTL := func(secs int64) *distillv1.FetchOptions {
		o := local()
		o.CacheTtl = ptr(secs)
		return o
	}

	mustGet(t, f, ts.URL, local())
	mustGet(t, f, ts.URL, withTTL(0))
	if n := hits.Load(); n != 2 {
		t.Fatalf("cache_ttl 0: server got %d requests, want 2", n)
	}
	clk.advance(50 * time.Second)
	if !mustGet(t, f, ts.URL, withTTL(60)).GetFromCache() {
		t.Error("a 50-second-old answer was refetched under a 60-second TTL")
	}
	clk.advance(20 * time.Second)
	if mustGet(t, f, ts.URL, withTTL(60)).GetFromCache() {
		t.Error("a 70-second-old answer was served under a 60-second TTL")
	}
	if n := hits.Load(); n != 3 {
		t.Fatalf("server got %d requests, want 3", n)
	}
}

func TestNoCacheNeitherReadsNorWrites(t *testing.T) {
	t.Parallel()
	ts, hits := serve(t, func(w http.ResponseWriter, r *http.Request) { html(w, 200, page) })
	f, c, _ := cached(t)
	noCache := local()
	noCache.NoCache = true

	mustGet(t, f, ts.URL, noCache)
	if n := entries(t, c); n != 0 {
		t.Fatalf("no_cache fetch stored %d entries", n)
	}
	mustGet(t, f, ts.URL, local())
	if resp := mustGet(t, f, ts.URL, noCache); resp.GetFromCache() {
		t.Error("no_cache fetch was served from the cache")
	}
	if n := hits.Load(); n != 3 {
		t.Fatalf("server got %d requests, want 3", n)
	}
}

func TestErrorAnswersAreNotCached(t *testing.T) {
	t.Parallel()
	ts, hits := serve(t, func(w http.ResponseWriter, r *http.Request) { html(w, 404, page) })
	f, c, _ := cached(t)
	for range 2 {
		if resp := mustGet(t, f, ts.URL, local()); resp.GetStatus() != 404 || resp.GetFromCache() {
			t.Fatalf("status %d, from_cache %v", resp.GetStatus(), resp.GetFromCache())
		}
	}
	if n := hits.Load(); n != 2 {
		t.Errorf("server got %d requests, want 2", n)
	}
	if n := entries(t, c); n != 0 {
		t.Errorf("%d entries after two 404s", n)
	}
}

// A cached page over a caller's cap is served cut to it, as the server's
// answer would be; a cut answer is never stored, or a later caller with a
// larger cap would get less than the page.
func TestCachedAnswerOverTheCallersByteCapIsServedCut(t *testing.T) {
	t.Parallel()
	ts, hits := serve(t, func(w http.ResponseWriter, r *http.Request) { html(w, 200, page) })
	small := local()
	small.MaxBytes = ptr(int64(len(page) - 1))

	f, c, _ := cached(t)
	resp := mustGet(t, f, ts.URL, small)
	if !resp.GetTruncatedBody() || resp.GetFromCache() {
		t.Fatalf("truncated_body %v, from_cache %v; want a live, cut answer", resp.GetTruncatedBody(), resp.GetFromCache())
	}
	if n := entries(t, c); n != 0 {
		t.Fatalf("%d entries after a cut answer, want 0", n)
	}

	mustGet(t, f, ts.URL, local())
	resp = mustGet(t, f, ts.URL, small)
	if !resp.GetFromCache() || !resp.GetTruncatedBody() || string(resp.GetBody()) != page[:len(page)-1] {
		t.Errorf("from_cache %v, truncated_body %v, body %q; want the cached page cut to the cap", resp.GetFromCache(), resp.GetTruncatedBody(), resp.GetBody())
	}
	if n := hits.Load(); n != 2 {
		t.Errorf("server got %d requests, want 2", n)
	}
}

func TestCachedLoopbackAnswerNeedsAllowLocal(t *testing.T) {
	t.Parallel()
	ts, hits := serve(t, func(w http.ResponseWriter, r *http.Request) { html(w, 200, page) })
	f, _, _ := cached(t)
	mustGet(t, f, ts.URL, local())
	_, err := get(t, f, ts.URL, nil)
	wantFailure(t, err, failure.Blocked, "loopback")
	if n := hits.Load(); n != 1 {
		t.Errorf("server got %d requests, want 1", n)
	}
}

// A name is judged by what it resolves to now, not when it was cached.
func TestCacheHitResolvesNamesAgain(t *testing.T) {
	t.Parallel()
	ts, hits := serve(t, func(w http.ResponseWriter, r *http.Request) { html(w, 200, page) })
	// Without keep-alive every fetch dials, so every fetch resolves.
	ts.Config.SetKeepAlivesEnabled(false)
	port := ts.Listener.Addr().(*net.TCPAddr).Port

	var mu sync.Mutex
	answer := []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	dns, err := netpolicytest.StartDNS(func(string) []netip.Addr {
		mu.Lock()
		defer mu.Unlock()
		return answer
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dns.Close() })
	f, _, _ := cached(t, WithResolver(dns.Resolver()))
	url := fmt.Sprintf("http://moving.test:%d/", port)

	mustGet(t, f, url, local())
	if !mustGet(t, f, url, local()).GetFromCache() {
		t.Fatal("second fetch not served from the cache")
	}
	_, err = get(t, f, url, nil)
	wantFailure(t, err, failure.Blocked, "127.0.0.1 (loopback")

	mu.Lock()
	answer = []netip.Addr{netip.MustParseAddr("10.1.2.3")}
	mu.Unlock()
	_, err = get(t, f, url, local())
	wantFailure(t, err, failure.Blocked, "10.1.2.3")

	mu.Lock()
	answer = nil
	mu.Unlock()
	if _, err := get(t, f, url, local()); err == nil {
		t.Error("an answer whose host no longer resolves was served from the cache")
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("server got %d requests, want 1", n)
	}
}

// An entry stored by a call that ignored robots.txt is not handed to one
// that respects it.
func TestCacheHitRespectsRobots(t *testing.T) {
	t.Parallel()
	var pageHits atomic.Int32
	ts, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		pageHits.Add(1)
		html(w, 200, page)
	})
	f, _, _ := cached(t)
	mustGet(t, f, ts.URL+"/private", local())
	polite := local()
	polite.RespectRobots = true
	_, err := get(t, f, ts.URL+"/private", polite)
	wantFailure(t, err, failure.RobotsDisallowed)
	if !mustGet(t, f, ts.URL+"/private", local()).GetFromCache() {
		t.Error("the entry was lost")
	}
	if n := pageHits.Load(); n != 1 {
		t.Errorf("page got %d requests, want 1", n)
	}
}
