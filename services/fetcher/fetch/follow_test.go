package fetch

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
)

// TestFollowIfJudgesARedirectBeforeItIsTaken: the judge sees the target
// of each hop, and a refused hop is never requested.
func TestFollowIfJudgesARedirectBeforeItIsTaken(t *testing.T) {
	t.Parallel()
	var refusedHits atomic.Int32
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	mux.HandleFunc("/a", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/b", http.StatusFound) })
	mux.HandleFunc("/b", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/out/c", http.StatusFound) })
	mux.HandleFunc("/out/c", func(w http.ResponseWriter, r *http.Request) { refusedHits.Add(1); html(w, 200, page) })
	mux.HandleFunc("/in/c", func(w http.ResponseWriter, r *http.Request) { html(w, 200, page) })

	f := newFetcher(t)
	var judged []string
	judge := func(to *url.URL) error {
		judged = append(judged, to.Path)
		if strings.HasPrefix(to.Path, "/out/") {
			return errors.New("outside the crawl's scope")
		}
		return nil
	}
	_, err := f.FetchWith(t.Context(), &internalv1.FetcherServiceFetchRequest{Url: ts.URL + "/a", Options: local()}, FollowIf(judge))
	wantFailure(t, err, failure.Blocked, "fetch "+ts.URL+"/b: redirect to "+ts.URL+"/out/c not followed: outside the crawl's scope")
	if strings.Join(judged, " ") != "/b /out/c" {
		t.Errorf("judged %q, want each hop's target: /b /out/c", judged)
	}
	if n := refusedHits.Load(); n != 0 {
		t.Errorf("the refused target was requested %d times", n)
	}
	// Without the judge the same fetch follows every hop.
	if resp := mustGet(t, f, ts.URL+"/a", local()); resp.GetFinalUrl() != ts.URL+"/out/c" {
		t.Errorf("final %s without FollowIf", resp.GetFinalUrl())
	}
}

// TestFollowIfJudgesACachedAnswersHops: a cached answer's redirects were
// taken by an earlier call, which did not judge them; FetchWith does.
func TestFollowIfJudgesACachedAnswersHops(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	mux.HandleFunc("/a", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/out/c", http.StatusFound) })
	mux.HandleFunc("/out/c", func(w http.ResponseWriter, r *http.Request) { html(w, 200, page) })
	f, _, _ := cached(t)
	if resp := mustGet(t, f, ts.URL+"/a", local()); resp.GetFromCache() {
		t.Fatal("the first fetch came from the cache")
	}
	// The server is gone: only the cached answer can be judged.
	ts.Close()
	resp, err := f.FetchWith(t.Context(), &internalv1.FetcherServiceFetchRequest{Url: ts.URL + "/a", Options: local()},
		FollowIf(func(to *url.URL) error {
			if strings.HasPrefix(to.Path, "/out/") {
				return errors.New("outside")
			}
			return nil
		}))
	wantFailure(t, err, failure.Blocked, "redirect to "+ts.URL+"/out/c not followed: outside")
	if resp != nil {
		t.Errorf("answer %v with the error", resp)
	}
}
