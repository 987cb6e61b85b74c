package fetch

import (
	"net/http"
	"testing"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

func TestResourceTakesAnyType(t *testing.T) {
	gz := []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}
	ts, hits := serve(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-gzip")
		_, _ = w.Write(gz)
	})
	f, _, _ := cached(t)
	resp, err := f.Resource(t.Context(), ts.URL+"/sitemap.xml.gz", local())
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.GetBody()) != string(gz) || resp.GetContentType() != "application/x-gzip" || resp.GetStatus() != 200 {
		t.Errorf("resource = %d %s %x", resp.GetStatus(), resp.GetContentType(), resp.GetBody())
	}
	// Neither stored nor read: a page fetch of the same URL goes to the
	// network and refuses the type, as it always has.
	_, err = get(t, f, ts.URL+"/sitemap.xml.gz", local())
	wantFailure(t, err, distillv1.ErrorCode_ERROR_CODE_UNSUPPORTED_CONTENT, "application/x-gzip")
	if _, err := f.Resource(t.Context(), ts.URL+"/sitemap.xml.gz", local()); err != nil {
		t.Fatal(err)
	}
	if n := hits.Load(); n != 3 {
		t.Errorf("%d requests, want 3: a resource is never cached", n)
	}
}

func TestResourceUnderPolicyAndRobots(t *testing.T) {
	site, base := newRobotsSite(t, 200, "User-agent: *\nDisallow: /private\nSitemap: https://example.com/s.xml\n")
	f := newFetcher(t, WithAllowLocal(false))
	_, err := f.Resource(t.Context(), base+"/sitemap.xml", &distillv1.FetchOptions{})
	wantFailure(t, err, distillv1.ErrorCode_ERROR_CODE_BLOCKED)
	_, err = f.Resource(t.Context(), base+"/sitemap.xml", local())
	wantFailure(t, err, distillv1.ErrorCode_ERROR_CODE_INVALID_ARGUMENT)

	f = newFetcher(t)
	_, err = f.Resource(t.Context(), base+"/private/s.xml", respecting())
	wantFailure(t, err, distillv1.ErrorCode_ERROR_CODE_ROBOTS_DISALLOWED, "Disallow: /private")
	if site.count("/private/s.xml") != 0 {
		t.Error("a disallowed resource was requested")
	}
}

func TestRobotsSharesTheFetchCache(t *testing.T) {
	site, base := newRobotsSite(t, 200, "User-agent: *\nDisallow: /private\nSitemap: https://example.com/s.xml\n")
	f := newFetcher(t)
	mustGet(t, f, base+"/page", respecting())
	r, err := f.Robots(t.Context(), base+"/anything", respecting())
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Sitemaps(); len(got) != 1 || got[0] != "https://example.com/s.xml" {
		t.Errorf("Sitemaps() = %q", got)
	}
	if n := site.count("/robots.txt"); n != 1 {
		t.Errorf("robots.txt requested %d times, want once", n)
	}
	_, err = f.Robots(t.Context(), "ftp://example.com/", local())
	wantFailure(t, err, distillv1.ErrorCode_ERROR_CODE_INVALID_URL)
}
