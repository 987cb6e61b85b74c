package readable

import (
	"context"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// TestStyleHiddenPageWrapper checks that a box hidden by its style is
// read when it wraps most of the page, as pages that reveal themselves
// with scripts do, while a small hidden box still goes.
func TestStyleHiddenPageWrapper(t *testing.T) {
	t.Parallel()
	para := "<p>" + strings.Repeat("Supervised learning trains models on labelled data, one example at a time. ", 6) + "</p>"
	page := `<html><body><div style="visibility:hidden">` +
		`<h1>Machine learning</h1>` + para + para + `<div style="display:none">Sign in to continue</div>` +
		`<div hidden>Cookie settings</div></div></body></html>`
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	content, err := Article(context.Background(), doc)
	if err != nil {
		t.Fatal(err)
	}
	text := htmlnode.Text(content)
	if !strings.Contains(text, "Supervised learning trains models") {
		t.Errorf("the wrapped article is missing: %q", text)
	}
	for _, gone := range []string{"Sign in to continue", "Cookie settings"} {
		if strings.Contains(text, gone) {
			t.Errorf("hidden %q is in the content", gone)
		}
	}
}
