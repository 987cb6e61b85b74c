package extract

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/internal/golden"
	"distill.dev/services/extractor/markdown"
	"distill.dev/services/extractor/pdf/pdftest"
)

func newExtractor() *Extractor {
	return New(slog.New(slog.NewTextHandler(io.Discard, nil)), WithPDFCacheDir(pdftest.CacheDir()))
}

// run extracts req and fails the test on error.
func run(t *testing.T, req *internalv1.ExtractRequest) *distillv1.Distilled {
	t.Helper()
	resp, err := newExtractor().Extract(context.Background(), req)
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	return resp.GetDistilled()
}

func readPage(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGoldenPages runs the article profile over realistic pages: the
// content must be there, the furniture gone, and the Markdown as reviewed.
func TestGoldenPages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		page    string
		url     string
		present []string
		absent  []string
	}{
		{
			page: "blog.html",
			url:  "https://crumb.example.com/2024/03/why-sourdough-needs-time/",
			present: []string{
				"# Why Sourdough Needs Time",
				"the clock is an ingredient",
				"*Lactobacillus*",
				"![Open crumb of a sourdough loaf](https://crumb.example.com/images/crumb-shot.jpg)",
				"## What happens during a cold retard",
				"[guide to cold retarding](https://crumb.example.com/techniques/cold-retard/)",
				"- Shape, then retard at 4 °C for 12 to 16 hours.",
				"> Flour, water, salt and time",
				"while you sleep.",
			},
			absent: []string{
				"cookies", "Accept all", "Recipes", "Techniques", "Tweet", "sharer",
				"Get new recipes by email", "Subscribe", "Popular posts", "Buy our flour",
				"You might also like", "Comments", "Jake", "rye starter", "All rights reserved",
				"Privacy", "dataLayer",
			},
		},
		{
			page: "docs.html",
			url:  "https://fetchkit.example.dev/docs/retries/",
			present: []string{
				"# Configuring retries",
				"| Setting | Default | Meaning |",
				"| `MaxRetries` | 2 | Attempts after the first one |",
				"```go\nclient := fetchkit.New(",
				"\tMaxRetries: 4,",
				"```python\nfrom fetchkit import Client, RetryPolicy\n\nclient = Client(retry=RetryPolicy(max_retries=4))\n\n\nresp",
				"```shell\nfetchkit get --max-retries 4",
				"**Warning:** retrying a `POST`",
				"[Timeouts](https://fetchkit.example.dev/docs/timeouts/)",
			},
			absent: []string{
				"Installation", "Quick start", "On this page", "MIT licence", "Blog", "GitHub",
				"Guides",
			},
		},
		{
			page: "lazy.html",
			url:  "https://walks.example.com/posts/coast-path",
			present: []string{
				"![The harbour at dawn](https://walks.example.com/travel/2023/photos/harbour.jpg)",
				"![Cliffs above the cove](https://images.example.net/cliffs.jpg)",
				"![The cove at low tide](https://walks.example.com/travel/2023/photos/cove-800.jpg)",
				"[map for day one](https://walks.example.com/travel/2023/maps/day-one.html)",
				"[kit list](https://walks.example.com/travel/kit-list/)",
				"[walks@example.com](mailto:walks@example.com)",
				"steep path that is closed in winter.",
				"[to the tide table](https://walks.example.com/travel/2023/#tides)",
				"[tide service](https://tides.example.org/today)",
			},
			absent: []string{
				"javascript:", "data:image", "blank.gif", "A photo that never loaded", "[](", "()",
			},
		},
		{
			page:   "appshell.html",
			url:    "https://app.example.com/dashboard",
			absent: []string{"enable JavaScript", "__INITIAL_STATE__"},
		},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSuffix(tt.page, ".html"), func(t *testing.T) {
			t.Parallel()
			d := run(t, &internalv1.ExtractRequest{Html: readPage(t, tt.page), Url: tt.url, Status: 200})
			md := d.GetMarkdown()
			for _, s := range tt.present {
				if !strings.Contains(md, s) {
					t.Errorf("markdown lacks %q", s)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(md, s) {
					t.Errorf("markdown still has %q", s)
				}
			}
			if markdown.Tidy(md) != md {
				t.Error("markdown is not tidy: blank-line runs outside code or untrimmed")
			}
			golden.Check(t, strings.TrimSuffix(tt.page, ".html")+".md", md)
		})
	}
}

// TestConcurrentExtract runs one Extractor from many goroutines: it shares
// its Markdown converter, so shared state would show as differing output.
func TestConcurrentExtract(t *testing.T) {
	t.Parallel()
	e := newExtractor()
	pages := []string{"blog.html", "docs.html", "lazy.html"}
	body := map[string][]byte{}
	want := map[string]string{}
	for _, p := range pages {
		body[p] = readPage(t, p)
		want[p] = run(t, &internalv1.ExtractRequest{Html: body[p], Url: "https://example.com/x/"}).GetMarkdown()
	}
	errs := make(chan string, 8*len(pages))
	done := make(chan struct{})
	for i := range 8 * len(pages) {
		p := pages[i%len(pages)]
		go func() {
			defer func() { done <- struct{}{} }()
			resp, err := e.Extract(context.Background(), &internalv1.ExtractRequest{Html: body[p], Url: "https://example.com/x/"})
			if err != nil {
				errs <- err.Error()
				return
			}
			if resp.GetDistilled().GetMarkdown() != want[p] {
				errs <- p + ": output differs under concurrency"
			}
		}()
	}
	for range 8 * len(pages) {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}
