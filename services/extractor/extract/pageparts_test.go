package extract

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

const partsPage = `<!doctype html><html lang="fr"><head><title> Marée </title><meta name="robots" content="noindex">
<meta property="og:site_name" content="Port"><link rel="icon" href="/i.ico"><script>var s = "SCRIPT";</script></head>
<body><nav>NAV</nav><main><p>` + "Tide tables tell the harbour when the water will rise. " + `</p><!-- c --><img src="/a.png"><img srcset="b.png 1x, c.png 2x"><img src="/a.png"></main><aside class="ad">AD</aside></body></html>`

// The page's own parts come from the one parse the content is read
// from, exclude_tags taken out of every one of them.
func TestPageParts(t *testing.T) {
	e := New(slog.New(slog.NewTextHandler(io.Discard, nil)))
	parses := 0
	ctx := WithParseHook(context.Background(), func() { parses++ })
	out, err := e.Extract(ctx, &internalv1.ExtractRequest{Html: []byte(partsPage), Url: "http://x.test/d/p", ContentType: "text/html; charset=utf-8",
		Options: &distillv1.FetchOptions{ExcludeTags: []string{".ad"}, RawHtml: true, CleanHtml: true, Images: true, HeadMetadata: true}})
	if err != nil {
		t.Fatal(err)
	}
	d := out.GetDistilled()
	if parses != 1 {
		t.Errorf("parsed %d times, want 1", parses)
	}
	for name, s := range map[string]string{"markdown": d.GetMarkdown(), "raw_html": d.GetRawHtml(), "clean_html": d.GetCleanHtml()} {
		if strings.Contains(s, "AD") {
			t.Errorf("%s keeps the excluded aside: %q", name, s)
		}
	}
	if !strings.Contains(d.GetRawHtml(), "SCRIPT") || strings.Contains(d.GetCleanHtml(), "SCRIPT") || strings.Contains(d.GetCleanHtml(), "NAV") || strings.Contains(d.GetCleanHtml(), "<!--") {
		t.Errorf("raw_html %q\nclean_html %q", d.GetRawHtml(), d.GetCleanHtml())
	}
	if want := []string{"http://x.test/a.png", "http://x.test/d/b.png"}; !slices.Equal(d.GetImages().GetUrls(), want) {
		t.Errorf("images = %v, want %v", d.GetImages().GetUrls(), want)
	}
	h := d.GetHead()
	if h.GetTitle() != "Marée" || h.GetLanguage() != "fr" || h.GetRobots() != "noindex" || h.GetOgSiteName() != "Port" ||
		h.GetFavicon() != "http://x.test/i.ico" || h.GetContentType() != "text/html; charset=utf-8" {
		t.Errorf("head = %v", h)
	}
	// A page that is not HTML has no markup: no HTML, no images.
	out, err = e.Extract(ctx, &internalv1.ExtractRequest{Html: []byte("just text"), Url: "http://x.test/t", ContentType: "text/plain",
		Options: &distillv1.FetchOptions{RawHtml: true, Images: true, HeadMetadata: true}})
	if err != nil {
		t.Fatal(err)
	}
	if d := out.GetDistilled(); d.RawHtml != nil || d.GetImages() == nil || len(d.GetImages().GetUrls()) != 0 || d.GetHead().GetContentType() != "text/plain" {
		t.Errorf("text page: raw_html %v, images %v, head %v", d.RawHtml, d.GetImages(), d.GetHead())
	}
}
