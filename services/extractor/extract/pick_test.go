package extract

import (
	"strings"
	"testing"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// The pickers themselves are tested in the pick package; these tests are
// about when Extract runs them and on what.

func TestPickedOnlyWhenAsked(t *testing.T) {
	t.Parallel()
	if d := run(t, htmlReq(articlePage, nil)); d.GetPicked() != nil {
		t.Errorf("picked = %v, want nil", d.GetPicked())
	}
}

// Picking reads the whole page, nav included, whatever content the
// profile or --selector then chooses; the Markdown is the content's as
// before.
func TestPickReadsTheWholePage(t *testing.T) {
	t.Parallel()
	plain := run(t, htmlReq(articlePage, &distillv1.FetchOptions{Selector: "article"}))
	d := run(t, htmlReq(articlePage, &distillv1.FetchOptions{Selector: "article", Select: "nav a::attr(href)"}))
	want := []string{"https://news.example.com/", "https://news.example.com/world/"}
	if got := d.GetPicked().GetValues(); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("picked %q, want %q", got, want)
	}
	if d.GetMarkdown() != plain.GetMarkdown() {
		t.Errorf("picking changed the Markdown:\n%s\nwant:\n%s", d.GetMarkdown(), plain.GetMarkdown())
	}
}

func TestPickFindsOnTheArticlePage(t *testing.T) {
	t.Parallel()
	d := run(t, htmlReq(articlePage, &distillv1.FetchOptions{FindText: "avon", Similar: true}))
	p := d.GetPicked()
	if !p.GetSimilar() || p.GetKind() != distillv1.PickedKind_PICKED_KIND_ELEMENTS || len(p.GetElements()) != 1 || p.GetElements()[0].GetText() != "Avon" {
		t.Errorf("picked = %v, want the one Avon cell", p)
	}
}

// A text file has no elements: the picker finds nothing, in the shape
// asked for.
func TestPickOnText(t *testing.T) {
	t.Parallel()
	req := &internalv1.ExtractRequest{Html: []byte("avon 4.2 m"), Url: pageURLForTests, Status: 200, ContentType: "text/plain",
		Options: &distillv1.FetchOptions{Select: "td", Fields: []*distillv1.PickField{{Name: "a", Selector: "b"}}}}
	p := run(t, req).GetPicked()
	if p == nil || p.GetKind() != distillv1.PickedKind_PICKED_KIND_RECORDS || len(p.GetRecords()) != 0 {
		t.Errorf("picked = %v, want no records", p)
	}
}

func TestBadPickIsRefused(t *testing.T) {
	t.Parallel()
	_, err := newExtractor().Extract(t.Context(), htmlReq(articlePage, &distillv1.FetchOptions{Xpath: "//p["}))
	if failure.CodeOf(err) != failure.InvalidArgument || !strings.Contains(err.Error(), "--xpath: invalid XPath") {
		t.Errorf("err = %v, want InvalidArgument naming the XPath", err)
	}
}

// A pick may read what only a script holds, such as a page's state in a
// variable; without a pick, scripts are not read at all.
func TestPickReadsScripts(t *testing.T) {
	t.Parallel()
	page := `<html><head><script id="state">window.__STATE__ = {"price": 12}</script></head><body><article><h1>Flask</h1><p>` +
		strings.Repeat("A steel flask that keeps drinks cold all day. ", 8) + `</p></article></body></html>`
	d := run(t, htmlReq(page, &distillv1.FetchOptions{Select: "script#state"}))
	if got := d.GetPicked().GetValues(); len(got) != 1 || !strings.Contains(got[0], `"price": 12`) {
		t.Errorf("picked %q, want the script's state", got)
	}
	if plain := run(t, htmlReq(page, nil)); plain.GetMarkdown() != d.GetMarkdown() || strings.Contains(plain.GetMarkdown(), "__STATE__") {
		t.Errorf("the Markdown changed with the pick, or shows the script:\n%s\n%s", plain.GetMarkdown(), d.GetMarkdown())
	}
}
