package fetch

import (
	"io"
	"net/http"
	"sync"
	"testing"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	"distill.dev/services/fetcher/cache"
)

// The caller's headers go to the origin it named: on every hop there,
// not to robots.txt, not across a redirect to another origin, and the
// answer is not cached.
func TestCallerHeaders(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	seen := map[string][]string{}
	record := func(who string, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		seen[who] = append(seen[who], r.Header.Get("X-Team")+"|"+r.Header.Get("User-Agent"))
	}
	other, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		record("other", r)
		_, _ = io.WriteString(w, "elsewhere")
	})
	site, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			record("robots", r)
			_, _ = io.WriteString(w, "User-agent: *\nAllow: /\n")
		case "/hop":
			record("hop", r)
			http.Redirect(w, r, "/page", http.StatusFound)
		case "/away":
			record("away", r)
			http.Redirect(w, r, other.URL+"/", http.StatusFound)
		default:
			record("page", r)
			w.Header().Set("Cache-Control", "max-age=3600")
			_, _ = io.WriteString(w, "team "+r.Header.Get("X-Team"))
		}
	})
	c, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := newFetcher(t, WithCache(c))
	fetch := func(path string) string {
		t.Helper()
		o := local()
		o.RespectRobots = true
		o.Headers = map[string]string{"X-Team": "tides", "User-Agent": "harbour-bot/1"}
		resp, err := f.Fetch(t.Context(), &internalv1.FetcherServiceFetchRequest{Url: site.URL + path, Options: o})
		if err != nil {
			t.Fatal(err)
		}
		return string(resp.GetBody())
	}
	if body := fetch("/hop"); body != "team tides" {
		t.Errorf("the page answered %q", body)
	}
	fetch("/hop")
	fetch("/away")
	mu.Lock()
	defer mu.Unlock()
	sent := "tides|harbour-bot/1"
	if hop := seen["hop"]; len(hop) != 2 || hop[0] != sent {
		t.Errorf("the first hop got %v, want the headers twice (no cache)", hop)
	}
	if page := seen["page"]; len(page) != 2 || page[1] != sent {
		t.Errorf("the same-origin redirect's target got %v", page)
	}
	if away := seen["away"]; len(away) != 1 || away[0] != sent {
		t.Errorf("/away got %v", away)
	}
	for _, who := range []string{"robots", "other"} {
		for _, h := range seen[who] {
			if h[:1] != "|" {
				t.Errorf("%s got the caller's X-Team: %q", who, h)
			}
		}
	}
	if len(seen["other"]) == 0 {
		t.Error("the redirect to the other origin was not followed")
	}
}
