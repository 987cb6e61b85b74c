package extract

import (
	"strings"
	"testing"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/internal/golden"
)

// TestGoldenMatrix pins what every profile and option produces on the
// fixture pages, each output in its own reviewed golden file
// (testdata/golden/<page>.<case>.*). The article profile's Markdown is
// pinned by TestGoldenPages.
func TestGoldenMatrix(t *testing.T) {
	t.Parallel()
	pages := map[string]string{
		"blog.html":     "https://crumb.example.com/2024/03/why-sourdough-needs-time/",
		"docs.html":     "https://fetchkit.example.dev/docs/retries/",
		"lazy.html":     "https://walks.example.com/posts/coast-path",
		"appshell.html": "https://app.example.com/dashboard",
	}
	budget := int64(120)
	cases := []struct {
		name string
		ext  string
		opts *distillv1.FetchOptions
		// out picks the output the golden file holds.
		out func(t *testing.T, d *distillv1.Distilled) string
	}{
		{"full", "md", &distillv1.FetchOptions{Profile: distillv1.Profile_PROFILE_FULL}, markdownOf},
		{"metadata", "md", &distillv1.FetchOptions{Profile: distillv1.Profile_PROFILE_METADATA}, markdownOf},
		{"text", "txt", &distillv1.FetchOptions{Format: distillv1.Format_FORMAT_TEXT}, textOf},
		{"truncated", "md", &distillv1.FetchOptions{MaxOutputTokens: &budget}, markdownOf},
		{"selector", "md", &distillv1.FetchOptions{Selector: "h1, h2, pre, table, blockquote"}, markdownOf},
		{"everything", "json", &distillv1.FetchOptions{
			Stats: true, Diagnostics: true, ExtractLinks: true, ExtractTables: true, ExtractActions: true,
		}, withoutContent},
		{"links-all", "json", &distillv1.FetchOptions{LinksFull: true}, linksOf},
	}
	for page, url := range pages {
		html := readPage(t, page)
		stem := strings.TrimSuffix(page, ".html")
		for _, c := range cases {
			t.Run(stem+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				d := run(t, &internalv1.ExtractRequest{Html: html, Url: url, Status: 200, Options: c.opts})
				golden.Check(t, stem+"."+c.name+"."+c.ext, c.out(t, d))
			})
		}
	}
}

func markdownOf(_ *testing.T, d *distillv1.Distilled) string { return d.GetMarkdown() }
func textOf(_ *testing.T, d *distillv1.Distilled) string     { return d.GetText() }

// withoutContent keeps everything but the Markdown, which other goldens
// pin, so this file shows the structured parts and figures.
func withoutContent(t *testing.T, d *distillv1.Distilled) string {
	c := &distillv1.Distilled{
		FinalUrl: d.GetFinalUrl(), Status: d.GetStatus(), Title: d.GetTitle(), Byline: d.Byline, Excerpt: d.Excerpt,
		Stats: d.GetStats(), Links: d.GetLinks(), Tables: d.GetTables(), Actions: d.GetActions(), Diagnostics: d.GetDiagnostics(),
	}
	return golden.ProtoJSON(t, c)
}

func linksOf(t *testing.T, d *distillv1.Distilled) string { return golden.ProtoJSON(t, d.GetLinks()) }
