package fetch

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	"distill.dev/services/platform/netpolicy"
)

// A host platform's allowlist, carried by the call's context, judges every
// hop: a redirect off the list is refused before it is requested.
func TestAllowlistJudgesRedirects(t *testing.T) {
	t.Parallel()
	elsewhere, elsewhereHits := serve(t, func(w http.ResponseWriter, r *http.Request) { html(w, 200, page) })
	eu, _ := url.Parse(elsewhere.URL)
	// The same server, named otherwise: 127.0.0.1 is listed, localhost not.
	off := "http://localhost:" + eu.Port() + "/"
	start, startHits := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/ok" {
			http.Redirect(w, r, elsewhere.URL+"/", http.StatusFound)
			return
		}
		http.Redirect(w, r, off, http.StatusFound)
	})
	su, _ := url.Parse(start.URL)
	ports := []int{mustPort(t, su), mustPort(t, eu)}
	list, err := netpolicy.NewAllowlist([]string{"127.0.0.1"}, []string{"http"}, ports)
	if err != nil {
		t.Fatal(err)
	}
	f := newFetcher(t)
	ctx := netpolicy.WithAllowlist(t.Context(), list)

	resp, err := f.Fetch(ctx, &internalv1.FetcherServiceFetchRequest{Url: start.URL + "/ok", Options: local()})
	if err != nil {
		t.Fatalf("a redirect within the list: %v", err)
	}
	if resp.GetFinalUrl() != elsewhere.URL+"/" {
		t.Fatalf("final URL %s", resp.GetFinalUrl())
	}
	before := elsewhereHits.Load()

	_, err = f.Fetch(ctx, &internalv1.FetcherServiceFetchRequest{Url: start.URL + "/off", Options: local()})
	wantFailure(t, err, failure.Blocked, "redirect to "+off, "not in the host's allowed hosts")
	if got := elsewhereHits.Load(); got != before {
		t.Fatalf("the refused hop was requested (%d requests, want %d)", got, before)
	}
	if startHits.Load() != 2 {
		t.Fatalf("start server got %d requests, want 2", startHits.Load())
	}

	// The first URL is judged too, before any request.
	_, err = f.Fetch(ctx, &internalv1.FetcherServiceFetchRequest{Url: off, Options: local()})
	wantFailure(t, err, failure.Blocked, "not in the host's allowed hosts")
	if got := elsewhereHits.Load(); got != before {
		t.Fatalf("a refused first URL was requested")
	}
}

func mustPort(t *testing.T, u *url.URL) int {
	t.Helper()
	p, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatal(err)
	}
	return p
}
