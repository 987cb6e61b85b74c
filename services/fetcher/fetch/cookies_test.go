package fetch

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	"distill.dev/services/fetcher/cache"
)

// loginSite sets a session cookie at /login and sends it on to /members,
// which greets whoever the cookie names; robots.txt reports whether it was
// sent a cookie.
func loginSite(t *testing.T) (string, func() []string) {
	var mu sync.Mutex
	var robotsCookies []string
	ts, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/login":
			http.SetCookie(w, &http.Cookie{Name: "sid", Value: "alice", Path: "/", HttpOnly: true})
			http.Redirect(w, r, "/members", http.StatusSeeOther)
		case "/members":
			who := "anonymous"
			if c, err := r.Cookie("sid"); err == nil {
				who = c.Value
			}
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, "hello "+who)
		case "/logout":
			http.SetCookie(w, &http.Cookie{Name: "sid", Path: "/", MaxAge: -1})
			_, _ = io.WriteString(w, "bye")
		case "/robots.txt":
			mu.Lock()
			robotsCookies = append(robotsCookies, r.Header.Get("Cookie"))
			mu.Unlock()
			_, _ = io.WriteString(w, "User-agent: *\nAllow: /\n")
		}
	})
	return ts.URL, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return robotsCookies
	}
}

func TestCookiesAcrossHopsAndCalls(t *testing.T) {
	t.Parallel()
	base, robotsCookies := loginSite(t)
	f := newFetcher(t)
	fetchWith := func(path string, use bool, jar []*internalv1.JarEntry) *internalv1.FetcherServiceFetchResponse {
		t.Helper()
		o := local()
		o.RespectRobots = true
		resp, err := f.Fetch(t.Context(), &internalv1.FetcherServiceFetchRequest{Url: base + path, Options: o, UseCookies: use, Jar: jar})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}

	// The cookie set on the redirect is sent on the next hop.
	resp := fetchWith("/login", true, nil)
	if got := string(resp.GetBody()); got != "hello alice" {
		t.Fatalf("after login: %q", got)
	}
	set := resp.GetSetCookies()
	if len(set) != 1 || set[0].GetCookie().GetName() != "sid" || set[0].GetUrl() != base+"/login" || !set[0].GetCookie().GetHttpOnly() {
		t.Fatalf("set_cookies = %v", set)
	}

	// The returned entries are the jar of the next call.
	if got := string(fetchWith("/members", true, set).GetBody()); got != "hello alice" {
		t.Fatalf("with the jar: %q", got)
	}
	// Without use_cookies nothing is sent or kept.
	resp = fetchWith("/login", false, set)
	if got := string(resp.GetBody()); got != "hello anonymous" || len(resp.GetSetCookies()) != 0 {
		t.Fatalf("without cookies: %q, set %v", got, resp.GetSetCookies())
	}
	// A deletion travels back as an entry that expires the cookie.
	resp = fetchWith("/logout", true, set)
	jar := append(set, resp.GetSetCookies()...)
	if got := string(fetchWith("/members", true, jar).GetBody()); got != "hello anonymous" {
		t.Fatalf("after logout: %q", got)
	}
	for _, c := range robotsCookies() {
		if c != "" {
			t.Fatalf("robots.txt was sent the session's cookie %q", c)
		}
	}
}

func TestCookieCallsSkipTheCache(t *testing.T) {
	t.Parallel()
	var n int
	var mu sync.Mutex
	ts, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		mu.Unlock()
		w.Header().Set("Cache-Control", "max-age=3600")
		_, _ = io.WriteString(w, "page for "+r.Header.Get("Cookie"))
	})
	c, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := newFetcher(t, WithCache(c))
	get := func(use bool) string {
		resp, err := f.Fetch(t.Context(), &internalv1.FetcherServiceFetchRequest{Url: ts.URL, Options: local(), UseCookies: use})
		if err != nil {
			t.Fatal(err)
		}
		return string(resp.GetBody())
	}
	get(false) // stored
	get(false) // from the cache
	get(true)  // live
	get(true)  // live again
	mu.Lock()
	defer mu.Unlock()
	if n != 3 {
		t.Fatalf("server hit %d times, want 3: one stateless fetch cached, both cookie fetches live", n)
	}
}

func TestRetryAfterIsReported(t *testing.T) {
	t.Parallel()
	ts, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/busy") {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	o := local()
	o.MaxRetries = ptr(int32(0))
	resp, err := newFetcher(t).Fetch(t.Context(), &internalv1.FetcherServiceFetchRequest{Url: ts.URL + "/busy", Options: o})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetStatus() != 503 || resp.GetRetryAfterSecs() != 7 {
		t.Fatalf("status %d retry_after %d, want 503 and 7", resp.GetStatus(), resp.GetRetryAfterSecs())
	}
}
