package mcp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// linkedDocs serves a hub linking to n pages of about 300 words each, one
// of which (the last) is about rotating keys.
func linkedDocs(t *testing.T, n int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path == "/" {
			fmt.Fprint(w, "<html><head><title>Docs</title></head><body><main><h1>Docs</h1>")
			for i := range n {
				title := fmt.Sprintf("Topic %d", i)
				if i == n-1 {
					title = "Rotating API keys"
				}
				fmt.Fprintf(w, `<p><a href="/p/%d">%s</a></p>`, i, title)
			}
			fmt.Fprint(w, "</main></body></html>")
			return
		}
		var i int
		if _, err := fmt.Sscanf(r.URL.Path, "/p/%d", &i); err != nil || i >= n {
			http.NotFound(w, r)
			return
		}
		body := strings.Repeat(fmt.Sprintf("Topic %d is described here at some length for the reader. ", i), 30)
		title := fmt.Sprintf("Topic %d", i)
		if i == n-1 {
			title = "Rotating API keys"
			body = "To rotate an API key, create a new key, deploy it, then revoke the old key. Rotate keys every 90 days."
		}
		fmt.Fprintf(w, "<html><head><title>%s</title></head><body><main><h1>%s</h1><p>%s</p></main></body></html>", title, title, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCrawlToolReturnsSectionsAndAReport(t *testing.T) {
	s := linkedDocs(t, 4)
	cs := connect(t, newService(t))
	texts, isError := call(t, cs, "crawl", map[string]any{"url": s.URL + "/", "allow_local": true})
	if isError || len(texts) != 6 {
		t.Fatalf("crawl = %q (error %t), want 5 pages and a report", texts, isError)
	}
	if !strings.HasPrefix(texts[0], "==> "+s.URL+"/ <== (depth 0)\n# Docs") {
		t.Errorf("first page %q", texts[0])
	}
	report := texts[5]
	if !strings.HasPrefix(report, "Pages: 5 returned (0 failed)") || !strings.Contains(report, "read every page within depth and scope") {
		t.Errorf("report %q", report)
	}
}

func TestCrawlToolWithAQueryRatesAndStops(t *testing.T) {
	s := linkedDocs(t, 6)
	cs := connect(t, newService(t))
	texts, isError := call(t, cs, "crawl", map[string]any{"url": s.URL + "/", "allow_local": true, "query": "rotate api key", "max_pages": 2, "format": "json"})
	if isError || len(texts) != 2 {
		t.Fatalf("crawl = %q (error %t), want a JSON array and a report", texts, isError)
	}
	var pages []struct {
		URL    string `json:"url"`
		Depth  int    `json:"depth"`
		Result struct {
			Relevance *float64 `json:"relevance"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(texts[0]), &pages); err != nil {
		t.Fatal(err)
	}
	// Best first: the start page, then the page on rotating keys, though
	// it is linked last.
	if len(pages) != 2 || pages[1].URL != s.URL+"/p/5" || pages[1].Depth != 1 || pages[1].Result.Relevance == nil || *pages[1].Result.Relevance < 0.8 {
		t.Errorf("pages %+v, want / then /p/5 rated 0.8 or more", pages)
	}
	if !strings.Contains(texts[1], "Stopped at max_pages=2 with 5 links found and not read") {
		t.Errorf("report %q", texts[1])
	}
}

func TestCrawlToolKeepsToItsTokenBudget(t *testing.T) {
	s := linkedDocs(t, 8)
	cs := connect(t, newService(t))
	texts, isError := call(t, cs, "crawl", map[string]any{"url": s.URL + "/", "allow_local": true, "max_total_tokens": 800, "max_pages": 9})
	if isError {
		t.Fatalf("crawl = %q", texts)
	}
	report := texts[len(texts)-1]
	var total int
	if _, err := fmt.Sscanf(report[strings.Index(report, "about"):], "about %d tokens", &total); err != nil || total > 800 {
		t.Errorf("report %q: %d tokens, want at most 800", report, total)
	}
	if len(texts) > 6 || !strings.Contains(report, "would pass max_total_tokens=800") {
		t.Errorf("%d blocks, report %q: want the crawl cut at the budget, saying so", len(texts), report)
	}
}

func TestCrawlToolRefusesBadBounds(t *testing.T) {
	cs := connect(t, newService(t))
	for _, args := range []map[string]any{
		{"url": "https://example.com/", "max_pages": 0},
		{"url": "https://example.com/", "max_pages": 101},
		{"url": "https://example.com/", "max_total_tokens": 100001},
		{"url": "https://example.com/", "stop_when_answered": true},
	} {
		texts, isError := call(t, cs, "crawl", args)
		if !isError || len(texts) != 1 {
			t.Errorf("%v = %q, want a tool error", args, texts)
		}
	}
}
