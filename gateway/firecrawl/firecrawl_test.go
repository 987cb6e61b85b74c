package firecrawl_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"distill.dev/gateway/app"
	"distill.dev/gateway/firecrawl"
	"distill.dev/services/platform/grpcauth"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

const testToken = "firecrawl-test-token-0123456789"

// words makes a page long enough that distill keeps it as fetched: a
// short page looks like an app shell and would be rendered.
var words = strings.Repeat("Tide tables tell the harbour when the water will rise and fall. ", 12)

// docsPages is how many numbered pages /docs has.
const docsPages = 6

// site serves the pages the tests scrape, on loopback.
func site(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/article", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html lang="en-GB"><head><title>Tides of the harbour</title>
<meta name="description" content="When the water rises.">
<meta property="og:title" content="Harbour tides">
<link rel="icon" href="/favicon.ico">
<script>var tracker = "SCRIPT-MARKER";</script><style>p{color:red}</style></head>
<body><nav>NAV-MARKER <a href="/home">Home</a></nav>
<main id="main"><h1>Tides of the harbour</h1><p>%s</p>
<p><a href="/charts?year=2026">Tide charts</a> and <a href="https://example.org/moon">the moon</a>.</p>
<img src="/img/high-tide.png" alt="high tide"><img srcset="/img/low-tide.png 1x, /img/low-tide@2x.png 2x"></main>
<aside id="aside"><p>ASIDE-MARKER %s</p></aside>
<footer>FOOTER-MARKER</footer></body></html>`, words, words)
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, "<html><head><title>Not here</title></head><body><main><p>%s</p></main></body></html>", words)
	})
	mux.HandleFunc("/page/{n}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><head><title>Page %s</title></head><body><main><p>%s</p></main></body></html>", r.PathValue("n"), words)
	})
	mux.HandleFunc("/sitemap.xml", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		base := "http://" + r.Host
		fmt.Fprintf(w, `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>%[1]s/article</loc></url><url><loc>%[1]s/page/1</loc></url><url><loc>%[1]s/page/2</loc></url></urlset>`, base)
	})
	// /docs is a small site to crawl: an index, pages that link on to
	// the next, one answer that is not a page, and a page outside /docs.
	mux.HandleFunc("/docs/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<html><head><title>Docs</title></head><body><main><p>%s</p>
<a href="/docs/1">One</a> <a href="/docs/blob">Blob</a> <a href="/article">Article</a></main></body></html>`, words)
	})
	mux.HandleFunc("/docs/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.PathValue("n"))
		if err != nil {
			w.Header().Set("Content-Type", "application/zip")
			fmt.Fprint(w, "PK\x03\x04 not a page")
			return
		}
		w.Header().Set("Content-Type", "text/html")
		next := ""
		if n < docsPages {
			next = fmt.Sprintf(`<a href="/docs/%d">Next</a>`, n+1)
		}
		fmt.Fprintf(w, "<html><head><title>Doc %d</title></head><body><main><p>%s</p>%s <a href=\"/docs/\">Index</a></main></body></html>", n, words, next)
	})
	// /form takes a click and typing: the page says what was typed.
	mux.HandleFunc("/form", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<html><head><title>Form</title></head><body><main><p>%s</p>
<input id="q"><button id="go" onclick="document.getElementById('out').textContent='TYPED-' + document.getElementById('q').value">Go</button>
<p id="out">nothing yet</p></main></body></html>`, words)
	})
	// /team greets whoever the X-Team header names.
	mux.HandleFunc("/team", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><head><title>Team</title></head><body><main><p>TEAM-%s</p><p>%s</p></main></body></html>", r.Header.Get("X-Team"), words)
	})
	mux.HandleFunc("/hang", func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "User-agent: *\nAllow: /\n") })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// serve runs the API over distill in this process, loopback allowed as
// an operator's --allow-local allows it, unless cfg says otherwise.
func serve(t *testing.T, cfg firecrawl.Config) *httptest.Server {
	t.Helper()
	sys, err := app.Open(t.Context(), quiet, app.Config{UserAgentVersion: "test", Workers: 4, CacheDir: t.TempDir(), AllowLocal: cfg.AllowLocal})
	if err != nil {
		t.Fatal(err)
	}
	fc := firecrawl.New(quiet, sys, cfg)
	srv := httptest.NewServer(fc.Handler())
	t.Cleanup(func() {
		srv.Close()
		fc.Close()
		_ = sys.Close()
	})
	return srv
}

type answer struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func call(t *testing.T, method, url, token string, body any) answer {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(enc)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := answer{status: res.StatusCode, header: res.Header, raw: string(raw)}
	if err := json.Unmarshal(raw, &a.body); err != nil {
		t.Fatalf("%s %s answered %d with a body that is not a JSON object: %s", method, url, res.StatusCode, raw)
	}
	return a
}

// data is the answer's data object.
func (a answer) data(t *testing.T) map[string]any {
	t.Helper()
	d, ok := a.body["data"].(map[string]any)
	if a.status != http.StatusOK || a.body["success"] != true || !ok {
		t.Fatalf("answer %d: %s", a.status, a.raw)
	}
	return d
}

func strs(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, s := range list {
		if str, ok := s.(string); ok {
			out = append(out, str)
		}
	}
	return out
}

func TestScrapeEveryFormat(t *testing.T) {
	t.Parallel()
	pages := site(t)
	api := serve(t, firecrawl.Config{AllowLocal: true})
	d := call(t, "POST", api.URL+"/v2/scrape", "", map[string]any{
		"url": pages.URL + "/article", "formats": []any{"markdown", "html", "rawHtml", "links", map[string]string{"type": "images"}},
		"origin": "js-sdk@test",
	}).data(t)

	md, _ := d["markdown"].(string)
	if !strings.Contains(md, "Tide tables tell the harbour") || strings.Contains(md, "NAV-MARKER") {
		t.Errorf("markdown is not the main content:\n%s", md)
	}
	html, _ := d["html"].(string)
	switch {
	case !strings.Contains(html, "Tide charts"):
		t.Errorf("html lost the content:\n%s", html)
	case strings.Contains(html, "SCRIPT-MARKER") || strings.Contains(html, "color:red"):
		t.Errorf("html keeps scripts or styles:\n%s", html)
	case strings.Contains(html, "NAV-MARKER") || strings.Contains(html, "FOOTER-MARKER"):
		t.Errorf("html keeps the page's furniture with onlyMainContent:\n%s", html)
	}
	if raw, _ := d["rawHtml"].(string); !strings.Contains(raw, "SCRIPT-MARKER") || !strings.Contains(raw, "NAV-MARKER") {
		t.Errorf("rawHtml is not the page as served:\n%s", raw)
	}
	links := strs(d["links"])
	for _, want := range []string{pages.URL + "/charts?year=2026", "https://example.org/moon", pages.URL + "/home"} {
		if !slices.Contains(links, want) {
			t.Errorf("links %v lack %s", links, want)
		}
	}
	images := strs(d["images"])
	if want := []string{pages.URL + "/img/high-tide.png", pages.URL + "/img/low-tide.png"}; !slices.Equal(images, want) {
		t.Errorf("images = %v, want %v", images, want)
	}
	meta, _ := d["metadata"].(map[string]any)
	for k, want := range map[string]any{
		"title": "Tides of the harbour", "description": "When the water rises.", "language": "en-GB",
		"sourceURL": pages.URL + "/article", "url": pages.URL + "/article", "statusCode": float64(200),
		"contentType": "text/html", "ogTitle": "Harbour tides", "favicon": pages.URL + "/favicon.ico",
	} {
		if meta[k] != want {
			t.Errorf("metadata.%s = %v, want %v", k, meta[k], want)
		}
	}
	if id, _ := meta["scrapeId"].(string); len(id) != 36 {
		t.Errorf("metadata.scrapeId = %q, want a UUID", id)
	}
	if _, ok := d["warning"]; ok {
		t.Errorf("a request distill honours whole got a warning: %v", d["warning"])
	}
}

// Only the formats asked for come back; markdown is the default; a page
// that answers 404 is a page, with its status in the metadata.
func TestScrapeDefaultsAndStatus(t *testing.T) {
	t.Parallel()
	pages := site(t)
	api := serve(t, firecrawl.Config{AllowLocal: true})
	d := call(t, "POST", api.URL+"/v2/scrape", "", map[string]any{"url": pages.URL + "/missing"}).data(t)
	for _, k := range []string{"html", "rawHtml", "links", "images"} {
		if _, ok := d[k]; ok {
			t.Errorf("%s came back without being asked for", k)
		}
	}
	if md, _ := d["markdown"].(string); !strings.Contains(md, "Tide tables") {
		t.Errorf("markdown = %q", md)
	}
	if meta, _ := d["metadata"].(map[string]any); meta["statusCode"] != float64(404) || meta["title"] != "Not here" {
		t.Errorf("metadata = %v, want statusCode 404 and the page's title", meta)
	}
}

func TestScrapeContentChoices(t *testing.T) {
	t.Parallel()
	pages := site(t)
	api := serve(t, firecrawl.Config{AllowLocal: true})

	full := call(t, "POST", api.URL+"/v2/scrape", "", map[string]any{"url": pages.URL + "/article", "onlyMainContent": false, "formats": []string{"markdown", "html"}}).data(t)
	if md, _ := full["markdown"].(string); !strings.Contains(md, "ASIDE-MARKER") {
		t.Errorf("onlyMainContent false left the aside out:\n%s", md)
	}
	if html, _ := full["html"].(string); !strings.Contains(html, "FOOTER-MARKER") {
		t.Errorf("onlyMainContent false left the footer out of html:\n%s", html)
	}

	only := call(t, "POST", api.URL+"/v2/scrape", "", map[string]any{"url": pages.URL + "/article", "includeTags": []string{"#aside"}, "formats": []string{"markdown", "html"}}).data(t)
	if md, _ := only["markdown"].(string); !strings.Contains(md, "ASIDE-MARKER") || strings.Contains(md, "Tide charts") {
		t.Errorf("includeTags #aside gave:\n%s", md)
	}
	if html, _ := only["html"].(string); !strings.HasPrefix(html, `<aside id="aside">`) || strings.Contains(html, "Tide charts") {
		t.Errorf("includeTags #aside gave html:\n%s", html)
	}

	trimmed := call(t, "POST", api.URL+"/v2/scrape", "", map[string]any{"url": pages.URL + "/article", "onlyMainContent": false, "excludeTags": []string{"#aside", "nav"}, "formats": []string{"markdown", "html", "links"}}).data(t)
	md, _ := trimmed["markdown"].(string)
	if strings.Contains(md, "ASIDE-MARKER") || strings.Contains(md, "NAV-MARKER") || !strings.Contains(md, "Tide charts") || !strings.Contains(md, "FOOTER-MARKER") {
		t.Errorf("excludeTags #aside, nav gave:\n%s", md)
	}
	if html, _ := trimmed["html"].(string); strings.Contains(html, "ASIDE-MARKER") || !strings.Contains(html, "FOOTER-MARKER") {
		t.Errorf("excludeTags #aside, nav gave html:\n%s", html)
	}
	if links := strs(trimmed["links"]); slices.Contains(links, pages.URL+"/home") || !slices.Contains(links, pages.URL+"/charts?year=2026") {
		t.Errorf("excludeTags nav left links %v", links)
	}

	warned := call(t, "POST", api.URL+"/v2/scrape", "", map[string]any{
		"url": pages.URL + "/article", "location": map[string]any{"country": "DE"}, "maxAge": 0, "timeout": 15000, "waitFor": 500,
		"removeBase64Images": false, "blockAds": false, "fastMode": true,
	}).data(t)
	for _, field := range []string{"location is ignored", "removeBase64Images: false is ignored", "blockAds: false is ignored", "fastMode is ignored"} {
		if w, _ := warned["warning"].(string); !strings.Contains(w, field) {
			t.Errorf("%q was not warned about: %q", field, w)
		}
	}
	// Firecrawl's defaults are what distill does: no warning.
	plain := call(t, "POST", api.URL+"/v2/scrape", "", map[string]any{
		"url": pages.URL + "/article", "removeBase64Images": true, "blockAds": true, "fastMode": false, "safeMode": false,
	}).data(t)
	if w, ok := plain["warning"]; ok {
		t.Errorf("Firecrawl's defaults got a warning: %v", w)
	}
}

// Every field distill cannot honour is refused by name in Firecrawl's
// error shape; nothing is silently dropped.
func TestRefusals(t *testing.T) {
	t.Parallel()
	pages := site(t)
	api := serve(t, firecrawl.Config{AllowLocal: true, MaxBodyBytes: 4096})
	page := pages.URL + "/article"
	for _, tc := range []struct {
		name, method, path string
		body               any
		status             int
		want               string
	}{
		{"scrape action", "POST", "/v2/scrape", map[string]any{"url": page, "actions": []any{map[string]any{"type": "scrape"}}}, 400, "actions[0] (scrape): not supported"},
		{"write before a click", "POST", "/v2/scrape", map[string]any{"url": page, "actions": []any{map[string]any{"type": "write", "text": "x"}}}, 400, "actions[0] (write): not supported: distill types into an element: click it first"},
		{"unknown action", "POST", "/v2/scrape", map[string]any{"url": page, "actions": []any{map[string]any{"type": "hover", "selector": "a"}}}, 400, "actions: --steps: step 0 (hover): unknown type"},
		{"action key", "POST", "/v2/scrape", map[string]any{"url": page, "actions": []any{map[string]any{"type": "click", "selector": "a", "colour": "red"}}}, 400, "Unrecognized key in body: colour"},
		{"screenshot viewport", "POST", "/v2/scrape", map[string]any{"url": page, "formats": []any{map[string]any{"type": "screenshot", "viewport": map[string]int{"width": 400, "height": 300}}}}, 400, "formats: screenshot: viewport: not supported"},
		{"json without a model", "POST", "/v2/scrape", map[string]any{"url": page, "formats": []any{map[string]any{"type": "json", "prompt": "tides"}}}, 400, "formats: json: not supported: this server runs no language model"},
		{"summary without a model", "POST", "/v2/scrape", map[string]any{"url": page, "formats": []string{"summary"}}, 400, "formats: summary: not supported: this server runs no language model"},
		{"json without schema or prompt", "POST", "/v2/scrape", map[string]any{"url": page, "formats": []any{map[string]any{"type": "json"}}}, 400, "formats: json: needs a schema or a prompt"},
		{"json system prompt", "POST", "/v2/scrape", map[string]any{"url": page, "formats": []any{map[string]any{"type": "json", "prompt": "x", "systemPrompt": "y"}}}, 400, "formats: json: systemPrompt: not supported"},
		{"v1 jsonOptions in v2", "POST", "/v2/scrape", map[string]any{"url": page, "jsonOptions": map[string]any{"prompt": "x"}}, 400, "Unrecognized key in body: jsonOptions"},
		{"reserved header", "POST", "/v2/scrape", map[string]any{"url": page, "headers": map[string]string{"Host": "b"}}, 400, "headers: Host is the fetcher's to send"},
		{"headers and actions", "POST", "/v2/scrape", map[string]any{"url": page, "headers": map[string]string{"X-A": "b"}, "actions": []any{map[string]any{"type": "wait", "milliseconds": 5}}}, 400, "headers with actions or a screenshot: not supported"},
		{"mobile", "POST", "/v2/scrape", map[string]any{"url": page, "mobile": true}, 400, "mobile: not supported yet"},
		{"image parser", "POST", "/v2/scrape", map[string]any{"url": page, "parsers": []string{"image"}}, 400, "parsers: image: not supported"},
		{"unknown key", "POST", "/v2/scrape", map[string]any{"url": page, "colour": "blue"}, 400, "Unrecognized key in body: colour"},
		{"unknown format", "POST", "/v2/scrape", map[string]any{"url": page, "formats": []string{"poetry"}}, 400, `unknown format "poetry"`},
		{"no url", "POST", "/v2/scrape", map[string]any{"formats": []string{"markdown"}}, 400, "url is required"},
		{"not json", "POST", "/v2/scrape", "{", 400, "Bad Request"},
		{"not an object", "POST", "/v2/scrape", "[]", 400, "the body must be a JSON object, got array"},
		{"empty body", "POST", "/v2/scrape", "", 400, "the body must be a JSON object"},
		{"wrong type", "POST", "/v2/scrape", map[string]any{"url": page, "timeout": "soon"}, 400, "timeout: expected int64, got string"},
		{"too large", "POST", "/v2/scrape", map[string]any{"url": page, "origin": strings.Repeat("x", 5000)}, 413, "Payload Too Large"},
		{"bad selector", "POST", "/v2/scrape", map[string]any{"url": page, "includeTags": []string{"div:has(p:has(a))"}}, 400, "includeTags"},
		{"search", "POST", "/v2/search", map[string]any{"query": "tides"}, 400, "not supported: distill does not search the web"},
		{"crawl prompt", "POST", "/v2/crawl", map[string]any{"url": page, "prompt": "only the docs"}, 400, "prompt: not supported"},
		{"crawl external", "POST", "/v2/crawl", map[string]any{"url": page, "allowExternalLinks": true}, 400, "allowExternalLinks: not supported"},
		{"crawl limit", "POST", "/v2/crawl", map[string]any{"url": page, "limit": 0}, 400, "limit must be between 1 and"},
		{"crawl bad regex", "POST", "/v2/crawl", map[string]any{"url": page, "includePaths": []string{"(docs"}}, 400, "Bad Request"},
		{"crawl unknown key", "POST", "/v2/crawl", map[string]any{"url": page, "scrapeOptions": map[string]any{"colour": "blue"}}, 400, "Unrecognized key in body: colour"},
		{"unknown crawl", "GET", "/v2/crawl/0000", nil, 404, "Job not found"},
		{"crawl params preview", "POST", "/v2/crawl/params-preview", map[string]any{"url": page, "prompt": "docs"}, 400, "crawl params-preview: not supported"},
		{"extract without a model", "POST", "/v2/extract", map[string]any{"urls": []string{page}, "prompt": "tides"}, 400, "extract: not supported: this server runs no language model"},
		{"unknown extract", "GET", "/v2/extract/0000", nil, 404, "Extract job not found"},
		{"webhook", "POST", "/v2/batch/scrape", map[string]any{"urls": []string{page}, "webhook": "http://127.0.0.1:1/hook"}, 400, "webhook: not supported: this server signs webhooks with a secret"},
		{"sitemap skip", "POST", "/v2/map", map[string]any{"url": pages.URL, "sitemap": "skip"}, 400, "sitemap: skip: not supported"},
		{"unknown job", "GET", "/v2/batch/scrape/0000", nil, 404, "Job not found"},
		{"unknown endpoint", "GET", "/v2/tea", nil, 404, "Not Found"},
		{"team usage", "GET", "/v2/team/credit-usage", nil, 400, "team usage: not supported: distill has no teams"},
		{"v1 deep research", "POST", "/v1/deep-research", map[string]any{"query": "tides"}, 400, "deep-research: not supported: distill does not search the web"},
		{"agent", "GET", "/v2/agent/0000", nil, 400, "agent: not supported"},
		{"threat protection", "POST", "/v2/scrape", map[string]any{"url": page, "threatProtection": map[string]any{"blacklist": []string{"*.example.com"}}}, 400, "threatProtection: not supported"},
		{"crawl threat protection", "POST", "/v2/crawl", map[string]any{"url": page, "threatProtection": map[string]any{"mode": "normal"}}, 400, "threatProtection: not supported"},
		{"map threat protection", "POST", "/v2/map", map[string]any{"url": page, "threatProtection": map[string]any{"mode": "off", "whitelist": []string{"a.example"}}}, 400, "threatProtection: not supported"},
		{"domain tools", "POST", "/v2/scrape", map[string]any{"url": page, "domainTools": true}, 400, "domainTools: not supported"},
		{"safe mode", "POST", "/v2/scrape", map[string]any{"url": page, "safeMode": true}, 400, "safeMode: not supported"},
		{"blocked", "POST", "/v2/scrape", map[string]any{"url": "http://169.254.169.254/latest/meta-data/"}, 403, "Forbidden"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := call(t, tc.method, api.URL+tc.path, "", tc.body)
			msg, _ := a.body["error"].(string)
			if a.status != tc.status || a.body["success"] != false || !strings.Contains(msg, tc.want) {
				t.Errorf("answered %d %s, want %d with an error containing %q", a.status, a.raw, tc.status, tc.want)
			}
		})
	}
}

// Firecrawl's API has no allow_local: loopback is the operator's to open.
func TestLoopbackOnlyWithAllowLocal(t *testing.T) {
	t.Parallel()
	pages := site(t)
	api := serve(t, firecrawl.Config{})
	a := call(t, "POST", api.URL+"/v2/scrape", "", map[string]any{"url": pages.URL + "/article"})
	if msg, _ := a.body["error"].(string); a.status != http.StatusForbidden || !strings.Contains(msg, "127.0.0.1") {
		t.Errorf("a loopback scrape without --allow-local answered %d %s", a.status, a.raw)
	}
	a = call(t, "POST", api.URL+"/v2/map", "", map[string]any{"url": pages.URL})
	if a.status == http.StatusOK {
		t.Errorf("a loopback map without --allow-local answered %s", a.raw)
	}
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	pages := site(t)
	guard, err := grpcauth.New(grpcauth.Config{Tokens: []string{testToken}})
	if err != nil {
		t.Fatal(err)
	}
	api := serve(t, firecrawl.Config{AllowLocal: true, Auth: guard})
	body := map[string]any{"url": pages.URL + "/article"}
	for _, token := range []string{"", "not-the-token-0123456789"} {
		a := call(t, "POST", api.URL+"/v2/scrape", token, body)
		if msg, _ := a.body["error"].(string); a.status != http.StatusUnauthorized || !strings.HasPrefix(msg, "Unauthorized") {
			t.Errorf("token %q answered %d %s, want 401", token, a.status, a.raw)
		}
	}
	call(t, "POST", api.URL+"/v2/scrape", testToken, body).data(t)
}

// A server at its limit answers 429 with Retry-After rather than queueing.
func TestBusyIsTooManyRequests(t *testing.T) {
	t.Parallel()
	arrived, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(arrived) })
		select {
		case <-release:
		case <-r.Context().Done():
		}
		fmt.Fprintf(w, "<html><body><main><p>%s</p></main></body></html>", words)
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	api := serve(t, firecrawl.Config{AllowLocal: true, MaxInFlight: 1, MaxBatches: 1})

	// The first scrape waits at the slow site, holding the one place.
	first := make(chan int, 1)
	go func() {
		res, err := http.Post(api.URL+"/v2/scrape", "application/json", strings.NewReader(`{"url":"`+slow.URL+`/a"}`))
		if err != nil {
			first <- 0
			return
		}
		res.Body.Close()
		first <- res.StatusCode
	}()
	<-arrived
	a := call(t, "POST", api.URL+"/v2/scrape", "", map[string]any{"url": slow.URL + "/b"})
	if a.status != http.StatusTooManyRequests || a.header.Get("Retry-After") == "" {
		t.Errorf("a scrape beyond the limit answered %d (Retry-After %q) %s", a.status, a.header.Get("Retry-After"), a.raw)
	}
	batch := call(t, "POST", api.URL+"/v2/batch/scrape", "", map[string]any{"urls": []string{slow.URL + "/c"}})
	if batch.status != http.StatusOK {
		t.Fatalf("batch answered %s", batch.raw)
	}
	second := call(t, "POST", api.URL+"/v2/batch/scrape", "", map[string]any{"urls": []string{slow.URL + "/d"}})
	if second.status != http.StatusTooManyRequests || second.header.Get("Retry-After") != "5" {
		t.Errorf("a batch beyond the limit answered %d (Retry-After %q) %s", second.status, second.header.Get("Retry-After"), second.raw)
	}
	close(release)
	if code := <-first; code != http.StatusOK {
		t.Errorf("the scrape that held the place answered %d", code)
	}
}

// A scrape that outlives its timeout answers 408.
func TestTimeoutIs408(t *testing.T) {
	t.Parallel()
	hang := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(hang.Close)
	api := serve(t, firecrawl.Config{AllowLocal: true})
	a := call(t, "POST", api.URL+"/v2/scrape", "", map[string]any{"url": hang.URL, "timeout": 1000})
	if a.status != http.StatusRequestTimeout || a.body["code"] != "SCRAPE_TIMEOUT" {
		t.Errorf("answered %d %s, want 408 SCRAPE_TIMEOUT", a.status, a.raw)
	}
}

// waitJob polls a batch until it is no longer scraping.
func waitJob(t *testing.T, statusURL string) answer {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		a := call(t, "GET", statusURL, "", nil)
		if a.status != http.StatusOK {
			t.Fatalf("status answered %d %s", a.status, a.raw)
		}
		if a.body["status"] != "scraping" {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("the batch is still scraping: %s", a.raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestBatchScrape(t *testing.T) {
	t.Parallel()
	pages := site(t)
	api := serve(t, firecrawl.Config{AllowLocal: true})
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL + "/gone"
	dead.Close()
	urls := []string{pages.URL + "/page/1", pages.URL + "/missing", deadURL, "not a url at all", pages.URL + "/page/2"}
	start := call(t, "POST", api.URL+"/v2/batch/scrape", "", map[string]any{"urls": urls, "formats": []string{"markdown", "links"}, "maxConcurrency": 2})
	if start.status != http.StatusOK || start.body["success"] != true {
		t.Fatalf("start answered %d %s", start.status, start.raw)
	}
	id, _ := start.body["id"].(string)
	if u, _ := start.body["url"].(string); u != api.URL+"/v2/batch/scrape/"+id {
		t.Errorf("status url = %q", u)
	}
	if inv := strs(start.body["invalidURLs"]); !slices.Equal(inv, []string{"not a url at all"}) {
		t.Errorf("invalidURLs = %v", inv)
	}
	done := waitJob(t, api.URL+"/v2/batch/scrape/"+id)
	if done.body["status"] != "completed" || done.body["total"] != float64(4) || done.body["completed"] != float64(3) {
		t.Errorf("status = %s", done.raw)
	}
	if _, ok := done.body["next"]; ok {
		t.Errorf("a one-page answer has next: %v", done.body["next"])
	}
	var titles []string
	for _, d := range done.body["data"].([]any) {
		doc := d.(map[string]any)
		meta := doc["metadata"].(map[string]any)
		titles = append(titles, meta["title"].(string))
		if _, ok := doc["links"]; !ok {
			t.Errorf("document of %v has no links", meta["sourceURL"])
		}
	}
	if want := []string{"Page 1", "Not here", "Page 2"}; !slices.Equal(titles, want) {
		t.Errorf("documents %v, want %v in the order of the urls", titles, want)
	}
	errs := call(t, "GET", api.URL+"/v2/batch/scrape/"+id+"/errors", "", nil)
	list, _ := errs.body["errors"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["url"] != deadURL {
		t.Errorf("errors = %s", errs.raw)
	}

	// The v1 client asks for the errors with DELETE.
	if v1errs := call(t, "DELETE", api.URL+"/v1/batch/scrape/"+id+"/errors", "", nil); len(v1errs.body["errors"].([]any)) != 1 {
		t.Errorf("v1 errors = %s", v1errs.raw)
	}

	// The v1 client polls a batch at /v1/crawl/{id}.
	v1 := call(t, "GET", api.URL+"/v1/crawl/"+id, "", nil)
	if v1.status != http.StatusOK || v1.body["status"] != "completed" {
		t.Errorf("/v1/crawl/{id} answered %d %s", v1.status, v1.raw)
	}
	cancelled := call(t, "DELETE", api.URL+"/v2/batch/scrape/"+id, "", nil)
	if cancelled.body["status"] != "completed" {
		t.Errorf("cancelling a finished batch answered %s", cancelled.raw)
	}
}

func TestMap(t *testing.T) {
	t.Parallel()
	pages := site(t)
	api := serve(t, firecrawl.Config{AllowLocal: true})
	a := call(t, "POST", api.URL+"/v2/map", "", map[string]any{"url": pages.URL, "sitemap": "only", "limit": 2, "origin": "js-sdk@test"})
	if a.status != http.StatusOK {
		t.Fatalf("map answered %d %s", a.status, a.raw)
	}
	var got []string
	for _, l := range a.body["links"].([]any) {
		got = append(got, l.(map[string]any)["url"].(string))
	}
	if want := []string{pages.URL + "/article", pages.URL + "/page/1"}; !slices.Equal(got, want) {
		t.Errorf("links = %v, want %v", got, want)
	}
	v1 := call(t, "POST", api.URL+"/v1/map", "", map[string]any{"url": pages.URL, "sitemapOnly": true, "search": "page"})
	if links := strs(v1.body["links"]); len(links) != 3 || !strings.HasSuffix(links[0], "/page/1") && !strings.HasSuffix(links[0], "/page/2") {
		t.Errorf("v1 map with search answered %s", v1.raw)
	}
}

func TestScrapeV1(t *testing.T) {
	t.Parallel()
	pages := site(t)
	api := serve(t, firecrawl.Config{AllowLocal: true})
	a := call(t, "POST", api.URL+"/v1/scrape", "", map[string]any{"url": pages.URL + "/article", "formats": []string{"markdown", "rawHtml"}, "location": map[string]string{"country": "US"}})
	d := a.data(t)
	if raw, _ := d["rawHtml"].(string); !strings.Contains(raw, "SCRIPT-MARKER") {
		t.Errorf("rawHtml = %q", raw)
	}
	if w, _ := a.body["warning"].(string); !strings.Contains(w, "location") {
		t.Errorf("v1 warning = %q", w)
	}
	for _, refused := range []map[string]any{
		{"url": pages.URL, "formats": []string{"extract"}},
		{"url": pages.URL, "jsonOptions": map[string]any{"prompt": "x"}},
		{"url": pages.URL, "formats": []string{"images"}},
	} {
		if a := call(t, "POST", api.URL+"/v1/scrape", "", refused); a.status != http.StatusBadRequest {
			t.Errorf("v1 %v answered %d %s", refused, a.status, a.raw)
		}
	}
}

// A batch's webhook gets started, each page and completed, in that
// order, signed with the operator's secret, and a failed delivery is
// tried again.
func TestBatchWebhook(t *testing.T) {
	t.Parallel()
	pages := site(t)
	const secret = "webhook-secret-0123456789"
	type event struct {
		Type     string           `json:"type"`
		ID       string           `json:"id"`
		Success  bool             `json:"success"`
		Data     []map[string]any `json:"data"`
		Metadata map[string]any   `json:"metadata"`
	}
	var mu sync.Mutex
	var events []event
	var attempts int
	completed := make(chan struct{})
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(body)
		if r.Header.Get("X-Firecrawl-Signature") != "sha256="+hex.EncodeToString(mac.Sum(nil)) || r.Header.Get("X-Team") != "tides" {
			t.Errorf("a delivery came unsigned or without its headers: %v", r.Header)
		}
		mu.Lock()
		defer mu.Unlock()
		attempts++
		if attempts == 2 {
			// The first page's first delivery fails: it must come again.
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		var e event
		if err := json.Unmarshal(body, &e); err != nil {
			t.Errorf("delivery %s: %v", body, err)
		}
		events = append(events, e)
		if e.Type == "batch_scrape.completed" {
			close(completed)
		}
	}))
	t.Cleanup(hook.Close)
	api := serve(t, firecrawl.Config{AllowLocal: true, WebhookSecret: secret})
	start := call(t, "POST", api.URL+"/v2/batch/scrape", "", map[string]any{
		"urls":    []string{pages.URL + "/page/1", pages.URL + "/page/2"},
		"webhook": map[string]any{"url": hook.URL + "/hook", "headers": map[string]string{"X-Team": "tides"}, "metadata": map[string]string{"run": "7"}},
	})
	if start.status != http.StatusOK {
		t.Fatalf("start answered %s", start.raw)
	}
	select {
	case <-completed:
	case <-time.After(time.Minute):
		t.Fatal("no completed event within a minute")
	}
	mu.Lock()
	defer mu.Unlock()
	var types, titles []string
	for _, e := range events {
		types = append(types, e.Type)
		if e.ID != start.body["id"] || e.Metadata["run"] != "7" {
			t.Errorf("event %+v lacks the job's id or the webhook's metadata", e)
		}
		for _, d := range e.Data {
			titles = append(titles, d["metadata"].(map[string]any)["title"].(string))
		}
	}
	if want := []string{"batch_scrape.started", "batch_scrape.page", "batch_scrape.page", "batch_scrape.completed"}; !slices.Equal(types, want) {
		t.Errorf("events %v, want %v", types, want)
	}
	slices.Sort(titles)
	if !slices.Equal(titles, []string{"Page 1", "Page 2"}) {
		t.Errorf("pages delivered: %v", titles)
	}
}

// Webhooks go out under the network policy: loopback only with
// --allow-local, metadata addresses never.
func TestWebhookUnderThePolicy(t *testing.T) {
	t.Parallel()
	api := serve(t, firecrawl.Config{WebhookSecret: "webhook-secret-0123456789"})
	for _, hook := range []string{"http://127.0.0.1:9/hook", "http://169.254.169.254/hook"} {
		a := call(t, "POST", api.URL+"/v2/batch/scrape", "", map[string]any{"urls": []string{"https://example.com/"}, "webhook": hook})
		if msg, _ := a.body["error"].(string); a.status != http.StatusBadRequest || !strings.HasPrefix(msg, "webhook: ") || a.body["code"] != "BLOCKED" {
			t.Errorf("webhook %s answered %d %s", hook, a.status, a.raw)
		}
	}
}

// crawlDocs are the titles and source URLs of a crawl status's documents.
func crawlDocs(a answer) (titles, sources []string) {
	data, _ := a.body["data"].([]any)
	for _, d := range data {
		meta := d.(map[string]any)["metadata"].(map[string]any)
		titles = append(titles, meta["title"].(string))
		sources = append(sources, meta["sourceURL"].(string))
	}
	return titles, sources
}

func TestCrawl(t *testing.T) {
	t.Parallel()
	pages := site(t)
	api := serve(t, firecrawl.Config{AllowLocal: true})
	start := call(t, "POST", api.URL+"/v2/crawl", "", map[string]any{
		"url": pages.URL + "/docs/", "limit": 20, "maxConcurrency": 2,
		"scrapeOptions": map[string]any{"formats": []string{"markdown", "links"}},
	})
	if start.status != http.StatusOK || start.body["success"] != true {
		t.Fatalf("start answered %d %s", start.status, start.raw)
	}
	id, _ := start.body["id"].(string)
	if u, _ := start.body["url"].(string); u != api.URL+"/v2/crawl/"+id {
		t.Errorf("status url = %q", u)
	}
	done := waitJob(t, api.URL+"/v2/crawl/"+id)
	titles, _ := crawlDocs(done)
	slices.Sort(titles)
	// The index and its six pages; /article is outside /docs, and the
	// blob is no page.
	want := []string{"Doc 1", "Doc 2", "Doc 3", "Doc 4", "Doc 5", "Doc 6", "Docs"}
	if done.body["status"] != "completed" || done.body["completed"] != float64(7) || done.body["total"] != float64(8) || !slices.Equal(titles, want) {
		t.Errorf("crawl = %s %v/%v %v, want completed 7/8 %v", done.body["status"], done.body["completed"], done.body["total"], titles, want)
	}
	errs := call(t, "GET", api.URL+"/v2/crawl/"+id+"/errors", "", nil)
	list, _ := errs.body["errors"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["url"] != pages.URL+"/docs/blob" {
		t.Errorf("errors = %s", errs.raw)
	}

	// Pages of three documents, each naming the next, until the last.
	var all []string
	next := api.URL + "/v2/crawl/" + id + "?limit=3"
	for range 4 {
		a := call(t, "GET", next, "", nil)
		_, sources := crawlDocs(a)
		all = append(all, sources...)
		n, ok := a.body["next"].(string)
		if !ok {
			break
		}
		if len(sources) != 3 {
			t.Errorf("a page with a next holds %d documents, want 3", len(sources))
		}
		next = n
	}
	slices.Sort(all)
	if len(all) != 7 || slices.Compact(all) == nil || len(slices.Compact(all)) != 7 {
		t.Errorf("paging through the crawl gave %v, want its 7 documents once each", all)
	}

	// crawlEntireDomain leaves /docs for the rest of the site.
	wide := call(t, "POST", api.URL+"/v2/crawl", "", map[string]any{"url": pages.URL + "/docs/", "limit": 20, "crawlEntireDomain": true, "maxDiscoveryDepth": 1})
	all = nil
	wideDone := waitJob(t, wide.body["url"].(string))
	_, all = crawlDocs(wideDone)
	if !slices.Contains(all, pages.URL+"/article") || slices.Contains(all, pages.URL+"/docs/2") {
		t.Errorf("crawlEntireDomain, maxDiscoveryDepth 1 read %v: want /article and not /docs/2", all)
	}

	// A v1 client starts a crawl with its own keys and reads it at
	// /v1/crawl/{id}.
	v1 := call(t, "POST", api.URL+"/v1/crawl", "", map[string]any{"url": pages.URL + "/docs/", "maxDepth": 1, "limit": 3, "scrapeOptions": map[string]any{"formats": []string{"markdown"}}})
	if v1.status != http.StatusOK || !strings.HasSuffix(v1.body["url"].(string), "/v1/crawl/"+v1.body["id"].(string)) {
		t.Fatalf("v1 start answered %d %s", v1.status, v1.raw)
	}
	v1Done := waitJob(t, v1.body["url"].(string))
	if v1Done.body["total"] != float64(3) {
		t.Errorf("v1 crawl of limit 3 = %s", v1Done.raw)
	}
}

func TestCrawlCancel(t *testing.T) {
	t.Parallel()
	pages := site(t)
	api := serve(t, firecrawl.Config{AllowLocal: true})
	// A second between two requests: the crawl is still running when it
	// is cancelled.
	start := call(t, "POST", api.URL+"/v2/crawl", "", map[string]any{"url": pages.URL + "/docs/", "delay": 1, "maxConcurrency": 1})
	if start.status != http.StatusOK {
		t.Fatalf("start answered %d %s", start.status, start.raw)
	}
	id := start.body["id"].(string)
	active := call(t, "GET", api.URL+"/v2/crawl/active", "", nil)
	if list, _ := active.body["crawls"].([]any); len(list) != 1 || list[0].(map[string]any)["id"] != id {
		t.Errorf("active crawls = %s", active.raw)
	}
	cancelled := call(t, "DELETE", api.URL+"/v2/crawl/"+id, "", nil)
	if cancelled.status != http.StatusOK || cancelled.body["status"] != "cancelled" || cancelled.body["success"] != true {
		t.Errorf("cancel answered %d %s", cancelled.status, cancelled.raw)
	}
	done := waitJob(t, api.URL+"/v2/crawl/"+id)
	if done.body["status"] != "cancelled" || done.body["completed"].(float64) >= 7 {
		t.Errorf("a cancelled crawl ended %s", done.raw)
	}
	if list, _ := call(t, "GET", api.URL+"/v2/crawl/active", "", nil).body["crawls"].([]any); len(list) != 0 {
		t.Errorf("a cancelled crawl is still active: %v", list)
	}
	again := call(t, "DELETE", api.URL+"/v2/crawl/"+id, "", nil)
	if again.body["status"] != "cancelled" {
		t.Errorf("cancelling again answered %s", again.raw)
	}
}

// A batch's and a crawl's pages are distilled where they are read; the
// formats made from the page's HTML come back all the same.
func TestPageFormatsInJobs(t *testing.T) {
	t.Parallel()
	pages := site(t)
	api := serve(t, firecrawl.Config{AllowLocal: true})
	start := call(t, "POST", api.URL+"/v2/batch/scrape", "", map[string]any{"urls": []string{pages.URL + "/article"}, "formats": []string{"markdown", "html", "rawHtml", "images"}})
	if start.status != http.StatusOK {
		t.Fatalf("batch start answered %d %s", start.status, start.raw)
	}
	done := waitJob(t, start.body["url"].(string))
	data, _ := done.body["data"].([]any)
	if len(data) != 1 {
		t.Fatalf("batch = %s", done.raw)
	}
	doc := data[0].(map[string]any)
	html, _ := doc["html"].(string)
	raw, _ := doc["rawHtml"].(string)
	meta := doc["metadata"].(map[string]any)
	switch {
	case !strings.Contains(html, "Tide charts") || strings.Contains(html, "SCRIPT-MARKER"):
		t.Errorf("batch html = %q", html)
	case !strings.Contains(raw, "SCRIPT-MARKER"):
		t.Errorf("batch rawHtml = %q", raw)
	case !slices.Contains(strs(doc["images"]), pages.URL+"/img/high-tide.png"):
		t.Errorf("batch images = %v", doc["images"])
	case meta["language"] != "en-GB" || meta["contentType"] != "text/html":
		t.Errorf("batch metadata from the page's head = %v", meta)
	}
	if _, ok := doc["page"]; ok {
		t.Error("the page's bytes leaked into the document")
	}

	// excludeTags trims each page before it is distilled again.
	trimmed := call(t, "POST", api.URL+"/v2/batch/scrape", "", map[string]any{"urls": []string{pages.URL + "/article"}, "excludeTags": []string{"nav", "#aside"}, "onlyMainContent": false})
	tdone := waitJob(t, trimmed.body["url"].(string))
	tdata, _ := tdone.body["data"].([]any)
	if len(tdata) != 1 {
		t.Fatalf("batch with excludeTags = %s", tdone.raw)
	}
	if md, _ := tdata[0].(map[string]any)["markdown"].(string); strings.Contains(md, "ASIDE-MARKER") || strings.Contains(md, "NAV-MARKER") || !strings.Contains(md, "FOOTER-MARKER") {
		t.Errorf("batch with excludeTags nav, #aside gave %q", md)
	}

	crawled := call(t, "POST", api.URL+"/v2/crawl", "", map[string]any{"url": pages.URL + "/docs/", "limit": 2, "scrapeOptions": map[string]any{"formats": []string{"rawHtml"}}})
	if crawled.status != http.StatusOK {
		t.Fatalf("crawl start answered %d %s", crawled.status, crawled.raw)
	}
	cdone := waitJob(t, crawled.body["url"].(string))
	cdata, _ := cdone.body["data"].([]any)
	if len(cdata) != 2 {
		t.Fatalf("crawl = %s", cdone.raw)
	}
	for _, d := range cdata {
		doc := d.(map[string]any)
		if raw, _ := doc["rawHtml"].(string); !strings.Contains(raw, "<html><head><title>Doc") {
			t.Errorf("crawl rawHtml = %q", raw)
		}
		if _, ok := doc["markdown"]; ok {
			t.Errorf("crawl document has markdown it did not ask for")
		}
	}
}

// Actions run in the browser before the page is read; the screenshot is
// the rendered page's.
func TestActionsAndScreenshot(t *testing.T) {
	t.Parallel()
	pages := site(t)
	api := serve(t, firecrawl.Config{AllowLocal: true})
	a := call(t, "POST", api.URL+"/v2/scrape", "", map[string]any{
		"url":     pages.URL + "/form",
		"formats": []any{"markdown", map[string]any{"type": "screenshot", "fullPage": true}},
		"actions": []any{
			map[string]any{"type": "click", "selector": "#q"},
			map[string]any{"type": "write", "text": "harbour"},
			map[string]any{"type": "click", "selector": "#go"},
			map[string]any{"type": "wait", "milliseconds": 50},
			map[string]any{"type": "executeJavascript", "script": "return document.title"},
			map[string]any{"type": "screenshot"},
		},
	})
	d := a.data(t)
	if md, _ := d["markdown"].(string); !strings.Contains(md, "TYPED-harbour") {
		t.Errorf("the page read after the actions = %q", md)
	}
	shot, _ := d["screenshot"].(string)
	png, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(shot, "data:image/png;base64,"))
	if !strings.HasPrefix(shot, "data:image/png;base64,") || err != nil || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Errorf("screenshot = %.60q (%v)", shot, err)
	}
	acts, _ := d["actions"].(map[string]any)
	returns, _ := acts["javascriptReturns"].([]any)
	shots, _ := acts["screenshots"].([]any)
	if len(returns) != 1 || returns[0].(map[string]any)["value"] != "Form" || returns[0].(map[string]any)["type"] != "string" || len(shots) != 1 {
		t.Errorf("actions = %v", acts)
	}
}

func TestScrapeHeaders(t *testing.T) {
	t.Parallel()
	pages := site(t)
	api := serve(t, firecrawl.Config{AllowLocal: true})
	a := call(t, "POST", api.URL+"/v2/scrape", "", map[string]any{"url": pages.URL + "/team", "headers": map[string]string{"X-Team": "tides"}})
	if md, _ := a.data(t)["markdown"].(string); !strings.Contains(md, "TEAM-tides") {
		t.Errorf("scrape with headers = %q", md)
	}
	// The same URL without them is not answered from what was fetched
	// with them.
	a = call(t, "POST", api.URL+"/v2/scrape", "", map[string]any{"url": pages.URL + "/team"})
	if md, _ := a.data(t)["markdown"].(string); strings.Contains(md, "TEAM-tides") {
		t.Errorf("scrape without headers = %q", md)
	}
}
