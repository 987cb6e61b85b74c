package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// partsHTML is a page with furniture to take out, images to list and a
// head to read.
const partsHTML = `<!doctype html>
<html lang="en"><head><title>Kelp Forests</title>
<meta name="description" content="How kelp grows along cold coasts.">
<meta property="og:site_name" content="The Shore">
<link rel="icon" href="/icon.png">
</head><body>
<nav><a href="/">Home</a> <a href="/about">Navigation menu</a></nav>
<article>
<h1>Kelp Forests</h1>
<p>Kelp grows fast in cold water, up to half a metre a day, and shelters fish, urchins and otters.</p>
<img src="/kelp.jpg" alt="Kelp">
<picture><source srcset="/kelp-2x.webp 2x, /kelp-3x.webp 3x"><img src="kelp.jpg"></picture>
<div class="ad">Buy a snorkel today <img src="/ad.gif"></div>
<p>Where urchins take over, the forest becomes a barren within a few seasons.</p>
</article>
</body></html>`

func partsPage(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, partsHTML)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// pageParts is the part of the JSON the page-part flags add.
type pageParts struct {
	Markdown  string            `json:"markdown"`
	RawHTML   *string           `json:"raw_html"`
	CleanHTML *string           `json:"clean_html"`
	Images    []string          `json:"images"`
	Head      map[string]string `json:"head"`
}

func fetchParts(t *testing.T, args ...string) pageParts {
	t.Helper()
	out, errOut, code := run(t, append([]string{"fetch", "--allow-local", "--format", "json"}, args...)...)
	if code != ExitOK {
		t.Fatalf("distill fetch %v: exit %d, stderr %q", args, code, errOut)
	}
	var p pageParts
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	return p
}

// The page's parts come out of one fetch as keys of its JSON, without the
// elements --exclude-tags takes out.
func TestFetchPageParts(t *testing.T) {
	srv := partsPage(t)
	p := fetchParts(t, "--exclude-tags", "nav", "--exclude-tags", `div[class="ad"]`, "--raw-html", "--images", "--head-metadata", srv.URL)
	if p.RawHTML == nil || !strings.Contains(*p.RawHTML, "<h1>Kelp Forests</h1>") {
		t.Fatalf("raw_html = %v, want the page's HTML", p.RawHTML)
	}
	for _, gone := range []string{"Navigation menu", "Buy a snorkel"} {
		if strings.Contains(*p.RawHTML, gone) || strings.Contains(p.Markdown, gone) {
			t.Errorf("%q is still in raw_html or the Markdown after --exclude-tags:\n%s\n%s", gone, *p.RawHTML, p.Markdown)
		}
	}
	want := []string{srv.URL + "/kelp.jpg", srv.URL + "/kelp-2x.webp"}
	if !slices.Equal(p.Images, want) {
		t.Errorf("images = %q, want %q (absolute, once each, the excluded ad's left out)", p.Images, want)
	}
	for key, value := range map[string]string{
		"title": "Kelp Forests", "description": "How kelp grows along cold coasts.", "language": "en",
		"og_site_name": "The Shore", "favicon": srv.URL + "/icon.png", "content_type": "text/html; charset=utf-8",
	} {
		if got := p.Head[key]; got != value {
			t.Errorf("head.%s = %q, want %q", key, got, value)
		}
	}
	if p.CleanHTML != nil {
		t.Errorf("clean_html present without --clean-html: %q", *p.CleanHTML)
	}
}

// --clean-html with --include-tags keeps only the elements they select;
// without the part flags the JSON has none of their keys.
func TestFetchCleanHTMLOfIncludedTags(t *testing.T) {
	srv := partsPage(t)
	p := fetchParts(t, "--include-tags", "h1", "--include-tags", "img[alt]", "--clean-html", srv.URL)
	if p.CleanHTML == nil || !strings.Contains(*p.CleanHTML, "Kelp Forests") || strings.Contains(*p.CleanHTML, "half a metre") {
		t.Errorf("clean_html = %v, want the h1 and the image alone", p.CleanHTML)
	}
	if strings.Contains(p.Markdown, "half a metre") {
		t.Errorf("the Markdown holds what --include-tags did not select:\n%s", p.Markdown)
	}
	out, _, code := run(t, "fetch", "--allow-local", "--format", "json", srv.URL)
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	for _, key := range []string{"raw_html", "clean_html", "images", "head"} {
		if strings.Contains(out, `"`+key+`"`) {
			t.Errorf("%q present without being asked for", key)
		}
	}
}

// A tag selector that cannot run, or a part asked for in a format with no
// room for it, is refused in one line before anything is fetched.
func TestPagePartsRefusedBeforeFetching(t *testing.T) {
	srv, hits := counted(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--exclude-tags", "p["}, `--exclude-tags: invalid selector "p["`},
		{[]string{"--include-tags", "article", "--include-tags", ":has(:has(p))"}, "--include-tags: invalid selector"},
		{[]string{"--exclude-tags", " "}, "--exclude-tags: an empty selector"},
		{[]string{"--raw-html"}, "add --format json or jsonl (--format is markdown)"},
		{[]string{"--images", "--format", "text"}, "(--format is text)"},
	}
	for _, tt := range tests {
		args := append(append([]string{"fetch", "--allow-local", "--no-cache"}, tt.args...), srv.URL)
		_, errOut, code := run(t, args...)
		first, rest, _ := strings.Cut(strings.TrimSpace(errOut), "\n")
		if code != ExitUsage || !strings.Contains(first, tt.want) || strings.Contains(rest, tt.want) {
			t.Errorf("distill %v: exit %d, stderr %q; want exit %d and one line naming %q", tt.args, code, errOut, ExitUsage, tt.want)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the server got %d requests, want none", n)
	}
	if _, errOut, code := run(t, "crawl", "--exclude-tags", "a[", srv.URL); code != ExitUsage || !strings.Contains(errOut, "--exclude-tags") {
		t.Errorf("crawl: exit %d, stderr %q; want a usage error naming --exclude-tags", code, errOut)
	}
}

// distill extract reads the same parts from a saved page.
func TestExtractPageParts(t *testing.T) {
	file := filepath.Join(t.TempDir(), "kelp.html")
	if err := os.WriteFile(file, []byte(partsHTML), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "extract", "--url", "https://shore.example/kelp", "--format", "json", "--exclude-tags", ".ad", "--images", "--head-metadata", file)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var p pageParts
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	if want := []string{"https://shore.example/kelp.jpg", "https://shore.example/kelp-2x.webp"}; !slices.Equal(p.Images, want) {
		t.Errorf("images = %q, want %q", p.Images, want)
	}
	if strings.Contains(p.Markdown, "Buy a snorkel") {
		t.Errorf("--exclude-tags .ad left the ad in the Markdown:\n%s", p.Markdown)
	}
	if p.Head["title"] != "Kelp Forests" || p.Head["og_site_name"] != "The Shore" {
		t.Errorf("head = %v", p.Head)
	}
}
