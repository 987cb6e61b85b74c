package crawl

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/fetch"
	"distill.dev/services/fetcher/robots"
)

// fetchVisit is a visit that notes each request's turn and write, keeps
// its redirects out of /out/, and gives robots.txt when it has a copy.
type fetchVisit struct {
	mu     sync.Mutex
	turns  []string
	sent   int
	copyOf *robots.Robots
}

func (v *fetchVisit) Follow(_ context.Context, to *url.URL) error {
	if strings.HasPrefix(to.Path, "/out/") {
		return errOutOfScope
	}
	return nil
}

func (v *fetchVisit) Turn(_ context.Context, u *url.URL) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.turns = append(v.turns, u.Path)
	return nil
}

func (v *fetchVisit) Sent(_ context.Context, _ *url.URL, at time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !at.IsZero() {
		v.sent++
	}
}

func (v *fetchVisit) BeforeRender(context.Context) error { return nil }

func (v *fetchVisit) Robots(context.Context, *url.URL) (*robots.Robots, bool, error) {
	return v.copyOf, v.copyOf != nil, nil
}

func (v *fetchVisit) Work() Work { return Work{} }

// TestLocalReaderAppliesEachPagesVisit: one LocalReader reads pages of
// different visits, and each page's fetch is judged, paced and given
// robots.txt by its own visit alone.
func TestLocalReaderAppliesEachPagesVisit(t *testing.T) {
	var mu sync.Mutex
	var hits []string
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits = append(hits, r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/a":
			http.Redirect(w, r, "/out/b", http.StatusFound)
		case "/robots.txt":
			w.Write([]byte("User-agent: *\nAllow: /\n"))
		default:
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html><body><p>a page</p></body></html>"))
		}
	})
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	logger := slog.New(slog.DiscardHandler)
	f := fetch.New(logger, fetch.WithAllowLocal(true))
	t.Cleanup(f.Close)
	r := NewLocalReader(logger, f, pageExtract{}, renderLog{&[]string{}})
	opts := &distillv1.FetchOptions{AllowLocal: true}

	scoped := &fetchVisit{}
	_, err := r.Read(t.Context(), ts.URL+"/a", opts, scoped)
	if failure.CodeOf(err) != failure.Blocked || !strings.Contains(err.Error(), errOutOfScope.Error()) {
		t.Errorf("a redirect out of the visit's scope: %v, want it refused", err)
	}
	if !slices.Equal(scoped.turns, []string{"/a"}) || scoped.sent != 1 {
		t.Errorf("the refused page's turns %q, %d sent; want one, for /a", scoped.turns, scoped.sent)
	}
	res, err := r.Read(t.Context(), ts.URL+"/a", opts, nil)
	if err != nil || res.Distilled.GetFinalUrl() != ts.URL+"/out/b" {
		t.Errorf("without a visit: %v, %v; want the redirect followed", res, err)
	}

	// robots.txt from the visit's copy, or else as the fetcher reads it.
	obey := &distillv1.FetchOptions{AllowLocal: true, RespectRobots: true}
	shared := &fetchVisit{copyOf: robots.DisallowAll("the crawl's copy")}
	if _, err := r.Read(t.Context(), ts.URL+"/c", obey, shared); failure.CodeOf(err) != failure.RobotsDisallowed {
		t.Errorf("a page the visit's copy of robots.txt disallows: %v", err)
	}
	own := &fetchVisit{}
	if _, err := r.Read(t.Context(), ts.URL+"/c", obey, own); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(own.turns, []string{"/robots.txt", "/c"}) || own.sent != 2 {
		t.Errorf("a visit without a copy: turns %q, %d sent; want robots.txt read, then the page", own.turns, own.sent)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"/a", "/a", "/out/b", "/robots.txt", "/c"}; !slices.Equal(hits, want) {
		t.Errorf("the site was asked for %q, want %q", hits, want)
	}
}
