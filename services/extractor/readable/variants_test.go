package readable

import (
	"strings"
	"testing"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

func TestDropVariantsKeepsOnePerScreenWidth(t *testing.T) {
	// Two sections, each written for three widths (w1 the widest), side
	// by side; the second section's variants start where the first's end,
	// and a button's variants nest inside the first section's.
	const page = `<body><main>
<div class="ssr-variant hidden-w2 hidden-w3"><section><h2>Plans</h2><p>Plans for wide screens.</p>
<div class="ssr-variant hidden-w2 hidden-w3"><a>Buy wide</a></div><div class="ssr-variant hidden-w1"><a>Buy narrow</a></div></section></div>
<div class="ssr-variant hidden-w1 hidden-w3"><section><h2>Plans</h2><p>Plans for tablets.</p></section></div>
<div class="ssr-variant hidden-w1 hidden-w2"><section><h2>Plans</h2><p>Plans for phones.</p></section></div>
<div class="ssr-variant hidden-w2 hidden-w3"><section><h2>Support</h2><p>Support, wide.</p></section></div>
<div class="ssr-variant hidden-w1"><section><h2>Support</h2><p>Support, narrow.</p></section></div>
<div class="card"><p>Not a variant.</p></div><div class="card"><p>Nor this.</p></div>
</main></body>`
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	DropVariants(doc)
	got := strings.Join(strings.Fields(htmlnode.Text(doc)), " ")
	want := "Plans Plans for wide screens. Buy wide Support Support, wide. Not a variant. Nor this."
	if got != want {
		t.Errorf("text = %q\nwant   %q", got, want)
	}
}
