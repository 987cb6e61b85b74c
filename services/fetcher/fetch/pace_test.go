package fetch

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
)

// TestPaceWithTurnsEveryRequest: robots.txt, the page and its redirect
// hop each wait for a turn before they are sent, in the order they go
// out, and each is reported once written, after its turn.
func TestPaceWithTurnsEveryRequest(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var events []string
	note := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, s)
	}
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) { note("serve " + r.URL.Path) })
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		note("serve " + r.URL.Path)
		http.Redirect(w, r, "/new", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/new", func(w http.ResponseWriter, r *http.Request) {
		note("serve " + r.URL.Path)
		html(w, 200, page)
	})
	f := newFetcher(t)
	opts := local()
	opts.RespectRobots = true
	turn := func(_ context.Context, u *url.URL) error { note("turn " + u.Path); return nil }
	sent := func(u *url.URL, at time.Time) {
		if at.IsZero() {
			t.Errorf("%s reported sent at no time", u)
		}
		note("sent " + u.Path)
	}
	if _, err := f.FetchWith(t.Context(), &internalv1.FetcherServiceFetchRequest{Url: ts.URL + "/old", Options: opts}, PaceWith(turn, sent)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range []string{"/robots.txt", "/old", "/new"} {
		ti, si, vi := slices.Index(events, "turn "+p), slices.Index(events, "sent "+p), slices.Index(events, "serve "+p)
		if ti < 0 || si < 0 || vi < 0 || ti > si || ti > vi {
			t.Errorf("%s: want a turn, then its request sent and served; events %q", p, events)
		}
	}
	if slices.Index(events, "turn /old") > slices.Index(events, "turn /new") {
		t.Errorf("the hop's turn came before the page's: %q", events)
	}
}
