package readable

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/golden"
	"distill.dev/services/extractor/plaintext"
)

// TestDocumentation draws our own documentation pages as the classifier
// sees them: the pages are taken for documentation, their sections, code
// (every tab of it) and notes kept, and the furniture around them gone.
func TestDocumentation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		page, url string
		present   []string
		absent    []string
	}{
		{
			page: "sidebar.html", url: "https://fetchkit.example.dev/docs/guides/retries/",
			present: []string{
				"Configuring retries", "reset connection", "The retry policy", "fetchkit.Retries(4",
				"retries=4, first_delay=0.2", "A retry budget", "idempotency key",
			},
			absent: []string{
				"Installation", "Guides", "On this page", "Which methods are retried\n- ", "Edit this page",
				"Last updated", "Was this page helpful", "Previous: Quickstart", "Next: Timeouts", "Privacy", "Search",
			},
		},
		{
			page: "manual.html", url: "https://tally.example.org/manual/3.1/storage/compacting.html",
			present: []string{
				"4.2. Compacting the log", "When compaction runs", "Compacting by hand", "twice the size",
				"Note", "tally compact --wait",
			},
			absent: []string{"Tally 3.1 manual", "Contents", "Table of contents", "4.1. Segments", "previous", "Copyright"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.page, func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(filepath.Join("testdata", "docs", tt.page))
			if err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			doc, err := html.Parse(strings.NewReader(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			ShowNoscript(doc)
			page := Classify(doc, u)
			if page.Type != TypeDocumentation || page.Uncertain {
				t.Errorf("Classify = %s (uncertain %t), want documentation", page.Type, page.Uncertain)
			}
			content, err := ArticleOf(context.Background(), doc, Page{Type: TypeDocumentation})
			if err != nil {
				t.Fatal(err)
			}
			text := plaintext.Render(content)
			for _, s := range tt.present {
				if !strings.Contains(text, s) {
					t.Errorf("%q missing from\n%s", s, text)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(text, s) {
					t.Errorf("%q kept in\n%s", s, text)
				}
			}
			golden.Check(t, filepath.Join("docs", strings.TrimSuffix(tt.page, ".html")+".txt"), text)
		})
	}
}
