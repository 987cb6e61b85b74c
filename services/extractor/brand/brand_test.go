package brand

import (
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/metadata"
)

// TestStylesheetColorsAndFonts reads a page of style elements, as the
// pipeline hands back a page's linked stylesheets.
func TestStylesheetColorsAndFonts(t *testing.T) {
	t.Parallel()
	page := `<style>/* #123456 in a comment */ :root{--accent:#e91e63} a{color:#E91E63} a:hover{color:rgba(233,30,99,.8)}
		.x{background:#fff;border-color:#abc} h1{font-family:"Playfair Display", Georgia, serif} .y{color:rgba(1,2,3,0)}
		#cafe { margin: 0 } .z{color:#aabbcc} .w{outline:2px solid #aabbcc} .v{fill:#aabbcc}
		@font-face { font-family: 'Inter'; src: url(inter.woff2) }</style>`
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse("https://www.harbor.example/")
	b := Read(doc, base, metadata.Metadata{})
	var colors []string
	for _, c := range b.GetColors() {
		colors = append(colors, c.GetHex()+"/"+c.GetName())
	}
	// The comment's colour, the ID selector, white and the transparent
	// colour are not colours of the brand.
	if got := strings.Join(colors, " "); got != "#aabbcc/ #e91e63/--accent" {
		t.Errorf("colors %q", got)
	}
	if b.GetColors()[0].GetCount() != 4 || b.GetColors()[1].GetCount() != 3 {
		t.Errorf("counts %v", b.GetColors())
	}
	if got := strings.Join(b.GetFonts(), ","); got != "Playfair Display,Inter" {
		t.Errorf("fonts %q", got)
	}
	if b.GetName() != "harbor.example" || b.GetFavicon().GetUrl() != "https://www.harbor.example/favicon.ico" {
		t.Errorf("name %q favicon %v", b.GetName(), b.GetFavicon())
	}
}
