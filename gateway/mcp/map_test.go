package mcp

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// sitemapSite serves a sitemap listing n pages whose paths are path(i),
// and a home page; every other path is 404.
func sitemapSite(t *testing.T, n int, path func(i int) string) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/sitemap.xml":
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprint(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
			for i := range n {
				fmt.Fprintf(w, "<url><loc>%s%s</loc></url>", srv.URL, path(i))
			}
			fmt.Fprint(w, "</urlset>")
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><head><title>Home</title></head><body><main><p>The home page of a site with many pages.</p></main></body></html>")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func numbered(i int) string { return fmt.Sprintf("/p/%d", i) }

func TestMapListsTheSiteWithItsCounts(t *testing.T) {
	s := sitemapSite(t, 30, numbered)
	cs := connect(t, newService(t))
	texts, isError := call(t, cs, "map", map[string]any{"url": s.URL + "/", "allow_local": true})
	if isError || len(texts) != 2 {
		t.Fatalf("map = %q (error %t), want the URLs and a report", texts, isError)
	}
	// Fewer than 200 in the sitemaps: the short crawl adds the home page.
	urls := strings.Split(strings.TrimSuffix(texts[0], "\n"), "\n")
	if len(urls) != 31 || urls[0] != s.URL+"/p/0" || urls[29] != s.URL+"/p/29" || urls[30] != s.URL+"/" {
		t.Errorf("URLs: %d, %q ... %q; want /p/0 to /p/29 in order, then /", len(urls), urls[0], urls[len(urls)-1])
	}
	if !strings.HasPrefix(texts[1], "URLs: 31 listed of 31 found (from sitemaps: 30, from the crawl: 1; pages read: 1).") || strings.Contains(texts[1], "cut") {
		t.Errorf("report %q", texts[1])
	}
}

func TestMapSaysWhatTheLimitLeftOut(t *testing.T) {
	s := sitemapSite(t, 30, numbered)
	cs := connect(t, newService(t))

	// Without a query the map stops looking at map_limit.
	texts, _ := call(t, cs, "map", map[string]any{"url": s.URL + "/", "allow_local": true, "map_limit": 5})
	if len(texts) != 2 || strings.Count(texts[0], "\n") != 5 ||
		!strings.Contains(texts[1], "The map stopped looking at map_limit=5 URLs, so the site may have more") {
		t.Errorf("map_limit 5: %q", texts)
	}

	// With one, every URL is ranked and the rest counted.
	texts, _ = call(t, cs, "map", map[string]any{"url": s.URL + "/", "allow_local": true, "map_limit": 1, "query": "p 17"})
	if len(texts) != 2 || texts[0] != s.URL+"/p/17\n" ||
		!strings.Contains(texts[1], "URLs: 1 listed of 31 found") || !strings.Contains(texts[1], "cut: map_limit=1; URLs left out: 30.") ||
		strings.Contains(texts[1], "stopped looking") {
		t.Errorf("map_limit 1 with a query: %q", texts)
	}
}

func TestMapCutsTheListAtItsCharacterBudget(t *testing.T) {
	// 600 URLs of about 220 characters: more than maxMapChars together.
	long := strings.Repeat("segment-", 25)
	s := sitemapSite(t, 600, func(i int) string { return fmt.Sprintf("/%s/%d", long, i) })
	cs := connect(t, newService(t))
	texts, isError := call(t, cs, "map", map[string]any{"url": s.URL + "/", "allow_local": true, "map_limit": 1000})
	if isError || len(texts) != 2 {
		t.Fatalf("map = %d blocks (error %t)", len(texts), isError)
	}
	if len(texts[0]) > maxMapChars || len(texts[0]) < maxMapChars-300 {
		t.Errorf("list of %d characters, want just under %d", len(texts[0]), maxMapChars)
	}
	shown := strings.Count(texts[0], "\n")
	want := fmt.Sprintf("URLs: %d listed of 600 found", shown)
	cut := fmt.Sprintf("cut: the list stops at %d characters; URLs left out: %d.", maxMapChars, 600-shown)
	if !strings.HasPrefix(texts[1], want) || !strings.Contains(texts[1], cut) {
		t.Errorf("report %q, want %q and %q", texts[1], want, cut)
	}
	if !strings.HasSuffix(texts[0], fmt.Sprintf("/%d\n", shown-1)) {
		t.Errorf("the list does not end with whole line %d: ...%q", shown-1, texts[0][len(texts[0])-40:])
	}
}

func TestMapBadArguments(t *testing.T) {
	cs := connect(t, newService(t))
	for _, tt := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{}, "url"},
		{map[string]any{"url": "https://example.com/", "map_limit": 0}, "map_limit must be 1 to 5000"},
		{map[string]any{"url": "https://example.com/", "map_limit": 5001}, "map_limit must be 1 to 5000"},
		{map[string]any{"url": "https://example.com/", "include_paths": []string{"("}}, "("},
		{map[string]any{"url": "ftp://example.com/"}, "ftp://example.com/"},
		{map[string]any{"url": "https://example.com/", "timeout_secs": 0}, "timeout"},
	} {
		if msg := callError(t, cs, "map", tt.args); !strings.HasPrefix(msg, "map: ") || !strings.Contains(msg, tt.want) {
			t.Errorf("map(%v) = %q, want a line saying %q", tt.args, msg, tt.want)
		}
	}
}
