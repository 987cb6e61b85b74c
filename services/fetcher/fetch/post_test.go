package fetch

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/cache"
)

func post(t *testing.T, f *Fetcher, url, body string, o *distillv1.FetchOptions) (*internalv1.FetcherServiceFetchResponse, error) {
	t.Helper()
	return f.Fetch(t.Context(), &internalv1.FetcherServiceFetchRequest{
		Url: url, Options: o, Method: "POST", Body: []byte(body), BodyContentType: "application/x-www-form-urlencoded",
	})
}

// echo answers with the method, content type and body it received.
func echo(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "text/plain")
	_, _ = io.WriteString(w, r.Method+" "+r.Header.Get("Content-Type")+" "+string(body))
}

func TestPostSendsItsBody(t *testing.T) {
	t.Parallel()
	ts, _ := serve(t, echo)
	resp, err := post(t, newFetcher(t), ts.URL+"/submit", "q=tide&page=2", local())
	if err != nil {
		t.Fatal(err)
	}
	if got := string(resp.GetBody()); got != "POST application/x-www-form-urlencoded q=tide&page=2" {
		t.Fatalf("server saw %q", got)
	}
}

func TestPostIsNeverRetried(t *testing.T) {
	t.Parallel()
	ts, hits := serve(t, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	o := local()
	o.MaxRetries = ptr(int32(3))
	resp, err := post(t, newFetcher(t), ts.URL, "a=1", o)
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetStatus() != http.StatusServiceUnavailable || hits.Load() != 1 {
		t.Fatalf("status %d after %d requests, want 503 after exactly 1", resp.GetStatus(), hits.Load())
	}
}

func TestPostRedirects(t *testing.T) {
	t.Parallel()
	other, otherHits := serve(t, echo)
	ts, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/see-other":
			http.Redirect(w, r, "/landing", http.StatusSeeOther)
		case "/found":
			http.Redirect(w, r, "/landing", http.StatusFound)
		case "/temporary":
			http.Redirect(w, r, "/landing", http.StatusTemporaryRedirect)
		case "/permanent":
			http.Redirect(w, r, "/landing", http.StatusPermanentRedirect)
		case "/temporary-away":
			http.Redirect(w, r, other.URL+"/landing", http.StatusTemporaryRedirect)
		case "/permanent-away":
			http.Redirect(w, r, other.URL+"/landing", http.StatusPermanentRedirect)
		case "/see-other-away":
			http.Redirect(w, r, other.URL+"/landing", http.StatusSeeOther)
		default:
			echo(w, r)
		}
	})
	tests := []struct {
		path string
		want string // what the landing page saw; "" = refused
	}{
		{"/see-other", "GET  "},
		{"/found", "GET  "},
		{"/temporary", "POST application/x-www-form-urlencoded a=1"},
		{"/permanent", "POST application/x-www-form-urlencoded a=1"},
		{"/see-other-away", "GET  "},
		{"/temporary-away", ""},
		{"/permanent-away", ""},
	}
	f := newFetcher(t)
	for _, tt := range tests {
		t.Run(strings.TrimPrefix(tt.path, "/"), func(t *testing.T) {
			before := otherHits.Load()
			resp, err := post(t, f, ts.URL+tt.path, "a=1", local())
			if tt.want == "" {
				wantFailure(t, err, failure.Blocked, "redirect to "+other.URL+"/landing", "refusing to resend a request body to another origin")
				if otherHits.Load() != before {
					t.Error("the other origin received the body")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := string(resp.GetBody()); got != tt.want {
				t.Errorf("landing saw %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMethodAndBodyChecked(t *testing.T) {
	t.Parallel()
	f := newFetcher(t)
	_, err := f.Fetch(t.Context(), &internalv1.FetcherServiceFetchRequest{Url: "http://127.0.0.1/", Method: "DELETE", Options: local()})
	wantFailure(t, err, failure.InvalidArgument, `method "DELETE" is not GET or POST`)
	_, err = f.Fetch(t.Context(), &internalv1.FetcherServiceFetchRequest{Url: "http://127.0.0.1/", Body: []byte("x"), Options: local()})
	wantFailure(t, err, failure.InvalidArgument, "a GET carries no body")
}

func TestPostIsNeverCached(t *testing.T) {
	t.Parallel()
	c, err := cache.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ts, hits := serve(t, echo)
	f := newFetcher(t, WithCache(c))
	for range 2 {
		resp, err := post(t, f, ts.URL, "a=1", local())
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetFromCache() {
			t.Fatal("a POST answer came from the cache")
		}
	}
	if hits.Load() != 2 {
		t.Fatalf("server saw %d requests, want 2", hits.Load())
	}
	if entries, _, err := c.Info(); err != nil || entries != 0 {
		t.Fatalf("cache holds %d entries (%v), want none", entries, err)
	}
}
