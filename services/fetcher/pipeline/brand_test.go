package pipeline

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// styleFetcher serves a page whose brand links stylesheets, and the
// stylesheets through Resource; a URL it has no sheet for is refused as
// the network policy refuses a private address.
type styleFetcher struct {
	fetchFunc
	sheets map[string]string
	asked  []string
	opts   *distillv1.FetchOptions
}

func (f *styleFetcher) Resource(_ context.Context, rawURL string, opts *distillv1.FetchOptions) (*internalv1.FetcherServiceFetchResponse, error) {
	f.asked = append(f.asked, rawURL)
	f.opts = opts
	css, ok := f.sheets[rawURL]
	if !ok {
		return nil, failure.New(failure.Blocked, "blocked by network policy: %s", rawURL)
	}
	return &internalv1.FetcherServiceFetchResponse{FinalUrl: rawURL, Status: 200, ContentType: "text/css", Body: []byte(css)}, nil
}

// brandExtractor answers the page with a brand that links two sheets, and
// the page of style elements the pipeline builds with the colours it
// names (#rrggbb words) and the fonts (font: words), once each.
type brandExtractor struct{ styles string }

func (e *brandExtractor) Extract(_ context.Context, r *internalv1.ExtractRequest) (*internalv1.ExtractResponse, error) {
	d := &distillv1.Distilled{FinalUrl: r.GetUrl(), Status: 200, Markdown: "page"}
	body := string(r.GetHtml())
	if strings.HasPrefix(body, "<!doctype html><html><head>") {
		e.styles = body
		b := &distillv1.Brand{}
		for _, w := range strings.Fields(strings.NewReplacer("<style>", " ", "</style>", " ").Replace(body)) {
			switch {
			case strings.HasPrefix(w, "#"):
				b.Colors = append(b.Colors, &distillv1.BrandColor{Hex: w, Count: 1})
			case strings.HasPrefix(w, "font:"):
				b.Fonts = append(b.Fonts, strings.TrimPrefix(w, "font:"))
			}
		}
		d.Brand = b
	} else if r.GetOptions().GetBrand() {
		d.Brand = &distillv1.Brand{Name: "Harbor", Fonts: []string{"Inter"},
			Colors:      []*distillv1.BrandColor{{Hex: "#0b5fff", Count: 1, Name: proto.String("--primary")}},
			Stylesheets: []string{"https://harbor.example/site.css", "http://10.0.0.1/private.css"}}
	}
	return &internalv1.ExtractResponse{Distilled: d}, nil
}

func TestBrandReadsLinkedStylesheets(t *testing.T) {
	t.Parallel()
	f := &styleFetcher{fetchFunc: page("<html>brand</html>"),
		sheets: map[string]string{"https://harbor.example/site.css": "#ff7a00 #0b5fff #ff7a00 font:inter font:Lato </STYLE><script>x</script>"}}
	e := &brandExtractor{}
	res, err := New(quiet, f, e, nil).Run(context.Background(), "https://harbor.example/", &distillv1.FetchOptions{Brand: true, MaxBytes: proto.Int64(8 << 20)})
	if err != nil {
		t.Fatal(err)
	}
	b := res.Distilled.GetBrand()
	var colors []string
	for _, c := range b.GetColors() {
		colors = append(colors, c.GetHex()+"="+string(rune('0'+c.GetCount()))+c.GetName())
	}
	if got := strings.Join(colors, " "); got != "#0b5fff=2--primary #ff7a00=2" {
		t.Errorf("colors %q", got)
	}
	if got := strings.Join(b.GetFonts(), ","); got != "Inter,Lato" {
		t.Errorf("fonts %q", got)
	}
	if len(f.asked) != 2 || f.opts.GetMaxBytes() != maxStylesheetBytes {
		t.Errorf("asked %v with max_bytes %d, want both sheets within %d bytes", f.asked, f.opts.GetMaxBytes(), maxStylesheetBytes)
	}
	if strings.Contains(strings.ToLower(e.styles), "</style><script") {
		t.Errorf("a stylesheet ended its style element:\n%s", e.styles)
	}

	// Without brand, no stylesheet is read.
	f.asked = nil
	if _, err := New(quiet, f, e, nil).Run(context.Background(), "https://harbor.example/", nil); err != nil || len(f.asked) != 0 {
		t.Errorf("without brand: err %v, asked %v", err, f.asked)
	}
}
