package mcp

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
)

// pagePartsJSON is what the page-part parameters add to a page's JSON.
type pagePartsJSON struct {
	Markdown  string            `json:"markdown"`
	RawHTML   *string           `json:"raw_html"`
	CleanHTML *string           `json:"clean_html"`
	Images    *[]string         `json:"images"`
	Head      map[string]string `json:"head"`
}

// fetch_url takes the page-part parameters and answers with the parts as
// keys of the page's JSON, read by distill in one process.
func TestFetchURLPageParts(t *testing.T) {
	site := pages(t)
	cs := connect(t, newService(t))
	p := callJSON[pagePartsJSON](t, cs, "fetch_url", map[string]any{
		"url": site.URL + "/article", "allow_local": true, "format": "json",
		"exclude_tags": []string{"nav", "table"}, "raw_html": true, "clean_html": true, "images": true, "head_metadata": true,
	})
	if p.RawHTML == nil || !strings.Contains(*p.RawHTML, "<h1>Keeping the Lamp</h1>") || strings.Contains(*p.RawHTML, "<nav") || strings.Contains(*p.RawHTML, "<table") {
		t.Errorf("raw_html = %v, want the page without its nav and table", p.RawHTML)
	}
	if p.CleanHTML == nil || !strings.Contains(*p.CleanHTML, "ninety-one steps") || strings.Contains(*p.CleanHTML, "<footer") {
		t.Errorf("clean_html = %v, want the article without the footer", p.CleanHTML)
	}
	if p.Images == nil || len(*p.Images) != 0 {
		t.Errorf("images = %v, want an empty list: the page has none", p.Images)
	}
	if p.Head["title"] != "Keeping the Lamp | Harbour Log" || p.Head["author"] != "Ines Varga" ||
		p.Head["language"] != "en" || p.Head["content_type"] != "text/html; charset=utf-8" {
		t.Errorf("head = %v", p.Head)
	}
	if !strings.Contains(p.Markdown, "ninety-one steps") || strings.Contains(p.Markdown, "November") {
		t.Errorf("the Markdown keeps the excluded table, or lost the rest:\n%s", p.Markdown)
	}

	// include_tags choose the content; in markdown the parts follow the
	// page as a JSON block of their own.
	texts, isError := call(t, cs, "fetch_url", map[string]any{
		"url": site.URL + "/article", "allow_local": true, "include_tags": []string{"h1", "table"}, "head_metadata": true,
	})
	if isError || len(texts) != 2 {
		t.Fatalf("fetch_url markdown with head_metadata = %q (error %t), want the page and a JSON block", texts, isError)
	}
	if !strings.Contains(texts[0], "| November | 30 |") || strings.Contains(texts[0], "ninety-one steps") {
		t.Errorf("include_tags [h1, table] gave:\n%s", texts[0])
	}
	var parts map[string]json.RawMessage
	if err := json.Unmarshal([]byte(texts[1]), &parts); err != nil || !slices.Equal(slices.Sorted(maps.Keys(parts)), []string{"head"}) {
		t.Errorf("second block = %s (%v), want {head}", texts[1], err)
	}
}

// A tag selector that cannot run is refused by name before anything is
// fetched, as selector is.
func TestPagePartsBadTags(t *testing.T) {
	cs := connect(t, newService(t))
	for param, want := range map[string]string{
		"exclude_tags": `exclude_tags: invalid selector "p["`,
		"include_tags": `include_tags: invalid selector "p["`,
	} {
		msg := callError(t, cs, "fetch_url", map[string]any{"url": "http://127.0.0.1:1/", "allow_local": true, param: []string{"p["}})
		if !strings.Contains(msg, want) || !strings.Contains(msg, "invalid arguments") {
			t.Errorf("%s [p[]: %q, want an argument error naming %q", param, msg, want)
		}
	}
	if msg := callError(t, cs, "fetch_url", map[string]any{"url": "http://127.0.0.1:1/", "exclude_tags": "nav"}); !strings.Contains(msg, "exclude_tags must be an array of strings") {
		t.Errorf("exclude_tags as a string: %q", msg)
	}
}
