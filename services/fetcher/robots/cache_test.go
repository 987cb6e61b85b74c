package robots

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// getter is a plain loopback Getter; the fetcher's own, which applies the
// network policy, is tested in package fetch.
func getter(t *testing.T) Getter {
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	t.Cleanup(client.CloseIdleConnections)
	return func(ctx context.Context, raw string) (*http.Response, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
		if err != nil {
			return nil, err
		}
		return client.Do(req)
	}
}

func serve(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, &hits
}

func TestCacheStatuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handler http.HandlerFunc
		allowed bool
		reason  string
	}{
		{name: "200 parsed", handler: func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "User-agent: *\nDisallow: /page\n")
		}, reason: "Disallow: /page"},
		{name: "404 allows all", handler: http.NotFound, allowed: true, reason: "unavailable (404 Not Found)"},
		{name: "403 allows all", handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusForbidden)
		}, allowed: true, reason: "unavailable (403 Forbidden)"},
		{name: "500 disallows all", handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
		}, reason: "unreachable (500 Internal Server Error)"},
		{name: "503 disallows all", handler: func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusServiceUnavailable)
		}, reason: "unreachable (503 Service Unavailable)"},
		{name: "redirects followed", handler: func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				http.Redirect(w, r, "/a", http.StatusMovedPermanently)
				return
			}
			if r.URL.Path == "/a" {
				http.Redirect(w, r, "/b", http.StatusFound)
				return
			}
			_, _ = io.WriteString(w, "User-agent: *\nDisallow: /page\n")
		}, reason: "Disallow: /page"},
		{name: "too many redirects is unavailable", handler: func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/loop", http.StatusFound)
		}, allowed: true, reason: "more than 5 redirects"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ts, _ := serve(t, tt.handler)
			r, err := NewCache().Get(t.Context(), mustURL(t, ts.URL+"/page"), getter(t))
			if err != nil {
				t.Fatal(err)
			}
			v := r.For("distill").Check(mustURL(t, ts.URL+"/page"))
			if v.Allowed != tt.allowed || !strings.Contains(v.String(), tt.reason) {
				t.Fatalf("got %+v, want allowed=%v reason containing %q", v, tt.allowed, tt.reason)
			}
		})
	}
}

func TestCacheUnreachable(t *testing.T) {
	t.Parallel()
	ts := httptest.NewServer(http.NotFoundHandler())
	addr := ts.URL
	ts.Close()
	r, err := NewCache().Get(t.Context(), mustURL(t, addr+"/page"), getter(t))
	if err != nil {
		t.Fatal(err)
	}
	if v := r.For("distill").Check(mustURL(t, addr+"/page")); v.Allowed || !strings.Contains(v.String(), "unreachable") {
		t.Fatalf("got %+v, want disallowed as unreachable", v)
	}
}

// A refusal of the Getter, such as the network policy's, is unreachable.
func TestCacheGetterRefuses(t *testing.T) {
	t.Parallel()
	refuse := func(ctx context.Context, raw string) (*http.Response, error) {
		return nil, errors.New("blocked by network policy: 10.0.0.1 (private range)")
	}
	r, err := NewCache().Get(t.Context(), mustURL(t, "https://example.com/x"), refuse)
	if err != nil {
		t.Fatal(err)
	}
	v := r.For("distill").Check(mustURL(t, "https://example.com/x"))
	if v.Allowed || !strings.Contains(v.String(), "blocked by network policy") {
		t.Fatalf("got %+v", v)
	}
}

type fakeNow struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeNow) now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *fakeNow) add(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.t = f.t.Add(d)
}

func TestCacheTTL(t *testing.T) {
	t.Parallel()
	var status atomic.Int32
	status.Store(200)
	ts, hits := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(int(status.Load()))
		_, _ = io.WriteString(w, "User-agent: *\nDisallow: /x\n")
	})
	clock := &fakeNow{t: time.Unix(1e9, 0)}
	c := NewCache(WithClock(clock.now), WithTTL(time.Hour, time.Minute))
	u := mustURL(t, ts.URL+"/x")
	get := func() {
		t.Helper()
		if _, err := c.Get(t.Context(), u, getter(t)); err != nil {
			t.Fatal(err)
		}
	}
	for range 5 {
		get()
	}
	if n := hits.Load(); n != 1 {
		t.Fatalf("%d fetches for five pages within the TTL, want 1", n)
	}
	clock.add(time.Hour)
	status.Store(503)
	get()
	if n := hits.Load(); n != 2 {
		t.Fatalf("%d fetches after the TTL, want 2", n)
	}
	clock.add(59 * time.Second)
	get()
	if n := hits.Load(); n != 2 {
		t.Fatalf("unreachable answer not kept for its TTL: %d fetches", n)
	}
	clock.add(time.Second)
	get()
	if n := hits.Load(); n != 3 {
		t.Fatalf("unreachable answer kept past its TTL: %d fetches, want 3", n)
	}
}

func TestCacheSharesOneFetch(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	ts, hits := serve(t, func(w http.ResponseWriter, r *http.Request) {
		<-release
		_, _ = io.WriteString(w, "User-agent: *\nDisallow: /x\n")
	})
	c := NewCache()
	const callers = 10
	arrived := make(chan struct{}, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() {
			ctx := &arrival{Context: t.Context(), arrived: arrived}
			if _, err := c.Get(ctx, mustURL(t, fmt.Sprintf("%s/%d", ts.URL, i)), getter(t)); err != nil {
				t.Error(err)
			}
		})
	}
	// The fetch is held until every caller is either sending it or
	// waiting for it: none can come late and find the file cached.
	for range callers {
		<-arrived
	}
	close(release)
	wg.Wait()
	if n := hits.Load(); n != 1 {
		t.Fatalf("%d fetches for ten concurrent callers, want 1", n)
	}
}

// arrival is a caller's context that reports, once, when the caller first
// waits on it: a caller waiting for another's fetch does so as it begins
// to wait, the one fetching as it sends its request.
type arrival struct {
	context.Context
	once    sync.Once
	arrived chan<- struct{}
}

func (a *arrival) Done() <-chan struct{} {
	a.once.Do(func() { a.arrived <- struct{}{} })
	return a.Context.Done()
}

// A caller running out of time is not the site's failure: nothing is
// cached and the next caller fetches afresh.
func TestCacheContextErrorNotCached(t *testing.T) {
	t.Parallel()
	var slow atomic.Bool
	slow.Store(true)
	ts, hits := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if slow.Load() {
			<-r.Context().Done()
			return
		}
		_, _ = io.WriteString(w, "User-agent: *\nDisallow: /x\n")
	})
	c := NewCache()
	u := mustURL(t, ts.URL+"/y")
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := c.Get(ctx, u, getter(t)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v, want the deadline", err)
	}
	slow.Store(false)
	r, err := c.Get(t.Context(), u, getter(t))
	if err != nil {
		t.Fatal(err)
	}
	if !r.For("distill").Check(u).Allowed || hits.Load() != 2 {
		t.Fatalf("second call: allowed=%v after %d fetches, want a fresh fetch", r.For("distill").Check(u).Allowed, hits.Load())
	}
}

func TestCacheBounded(t *testing.T) {
	t.Parallel()
	ts, hits := serve(t, http.NotFound)
	c := NewCache(WithMaxHosts(2))
	get := func(host string) {
		t.Helper()
		// One server, several origins: the host names differ only in the
		// cache key, the Getter dials the server whatever the name.
		u := mustURL(t, "http://"+host+"/x")
		_, err := c.Get(t.Context(), u, func(ctx context.Context, raw string) (*http.Response, error) {
			return getter(t)(ctx, ts.URL+"/robots.txt")
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	get("a.test")
	get("b.test")
	get("c.test")
	if n := len(c.entries); n > 2 {
		t.Fatalf("%d origins kept, bound is 2", n)
	}
	get("c.test")
	if n := hits.Load(); n != 3 {
		t.Fatalf("%d fetches, want 3 (the newest origin stays cached)", n)
	}
}

// A 2xx body is read only up to the parse limit, however long it is.
func TestCacheBodyLimit(t *testing.T) {
	t.Parallel()
	ts, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "User-agent: *\nDisallow: /x\n")
		line := []byte(strings.Repeat("#", 1023) + "\n")
		for r.Context().Err() == nil {
			if _, err := w.Write(line); err != nil {
				return
			}
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	r, err := NewCache().Get(ctx, mustURL(t, ts.URL+"/x"), getter(t))
	if err != nil {
		t.Fatalf("endless robots.txt not cut at the limit: %v", err)
	}
	if r.For("distill").Check(mustURL(t, ts.URL+"/x")).Allowed {
		t.Fatal("rule before the limit lost")
	}
}
