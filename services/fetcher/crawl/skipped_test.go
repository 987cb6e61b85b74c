package crawl

import (
	"context"
	"strings"
	"sync"
	"testing"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/pipeline"
)

// claimingReader answers as a cluster's workers do when a page is linked
// both directly and through an old address that redirects to it, and the
// redirect claimed the page first: the direct link reads nothing
// (*AlreadyRead), the old address reads the page.
type claimingReader struct {
	mu    sync.Mutex
	asked []string
}

func (r *claimingReader) Read(_ context.Context, rawURL string, _ *distillv1.FetchOptions, _ Visit) (*pipeline.Result, error) {
	r.mu.Lock()
	r.asked = append(r.asked, rawURL)
	r.mu.Unlock()
	page := func(final string, links ...string) *pipeline.Result {
		d := &distillv1.Distilled{FinalUrl: final, Status: 200, Title: final, Links: &distillv1.LinkList{}}
		for _, l := range links {
			d.Links.Items = append(d.Links.Items, &distillv1.Link{Href: l, Text: l})
		}
		return &pipeline.Result{Distilled: d}
	}
	switch {
	case strings.HasSuffix(rawURL, "/p"):
		return nil, &AlreadyRead{Key: "example.test/p"}
	case strings.HasSuffix(rawURL, "/moved"):
		return page("http://example.test/p"), nil
	default:
		return page("http://example.test/", "http://example.test/p", "http://example.test/moved"), nil
	}
}

// TestAPageClaimedByARedirectIsDeliveredOnce: the page a redirect claimed
// is delivered once, through the redirect; its own link, answered as read
// elsewhere, delivers nothing and does not keep the redirect's answer
// from being delivered.
func TestAPageClaimedByARedirectIsDeliveredOnce(t *testing.T) {
	r := &claimingReader{}
	c := New(nil, nil, r)
	job, err := c.Begin(t.Context(), Request{URL: "http://example.test/", Depth: 1, Concurrency: 1, IgnoreRobots: true, Options: &distillv1.FetchOptions{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	st, err := job.Run(t.Context(), func(p Page) error {
		if p.Err != nil {
			t.Errorf("%s: %v", p.URL, p.Err)
		}
		got = append(got, p.URL+" -> "+p.Result.GetFinalUrl())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"http://example.test/ -> http://example.test/", "http://example.test/moved -> http://example.test/p"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("delivered %q, want %q", got, want)
	}
	if len(r.asked) != 3 || st.Done != 3 || st.Failed != 0 {
		t.Errorf("asked for %q; status %+v; want three pages done, none failed", r.asked, st)
	}
}
