package firecrawl_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"distill.dev/gateway/app"
	"distill.dev/gateway/firecrawl"
	"distill.dev/services/extractor/extract"
)

// One scrape reads its page once, whatever parts of it the formats ask
// for: excludeTags, rawHtml, html and images all come from the
// extractor's one parse. The parses are counted by extract's parse
// hook, put on each request's context.
func TestScrapeParsesOnce(t *testing.T) {
	t.Parallel()
	pages := site(t)
	sys, err := app.Open(t.Context(), quiet, app.Config{UserAgentVersion: "test", Workers: 4, CacheDir: t.TempDir(), AllowLocal: true})
	if err != nil {
		t.Fatal(err)
	}
	fc := firecrawl.New(quiet, sys, firecrawl.Config{AllowLocal: true})
	var parses atomic.Int64
	h := fc.Handler()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(extract.WithParseHook(r.Context(), func() { parses.Add(1) })))
	}))
	t.Cleanup(func() {
		api.Close()
		fc.Close()
		_ = sys.Close()
	})
	d := call(t, "POST", api.URL+"/v2/scrape", "", map[string]any{
		"url": pages.URL + "/article", "excludeTags": []string{"nav"},
		"formats": []any{"markdown", "html", "rawHtml", map[string]string{"type": "images"}},
	}).data(t)
	if n := parses.Load(); n != 1 {
		t.Errorf("one scrape parsed its page %d times, want 1", n)
	}
	// The parts are there, and excludeTags took nav out of all of them.
	for _, k := range []string{"markdown", "html", "rawHtml"} {
		if s, _ := d[k].(string); s == "" || strings.Contains(s, "NAV-MARKER") {
			t.Errorf("%s = %q, want the page without its nav", k, s)
		}
	}
	if images := strs(d["images"]); len(images) != 2 {
		t.Errorf("images = %v", images)
	}
}
