package citations

import (
	"net/url"
	"strings"
	"testing"
)

func TestApply(t *testing.T) {
	t.Parallel()
	page, _ := url.Parse("https://wiki.example/wiki/Tide_pool")
	tests := []struct {
		name, md, want string
	}{
		{
			name: "first appearance, one number per URL",
			md:   "See [seawater](https://wiki.example/wiki/Seawater) and [tides](https://wiki.example/wiki/Tide).\n\nAgain [sea water](https://wiki.example/wiki/Seawater).",
			want: "See seawater[^1] and tides[^2].\n\nAgain sea water[^1].\n\n## Links\n\n[^1]: https://wiki.example/wiki/Seawater\n[^2]: https://wiki.example/wiki/Tide",
		},
		{
			name: "images keep their alt",
			md:   "![A green anemone](https://wiki.example/a.jpg \"Anemone\") grows here.",
			want: "![A green anemone][^1] grows here.\n\n## Links\n\n[^1]: https://wiki.example/a.jpg",
		},
		{
			name: "a linked image cites both",
			md:   "[![logo](https://wiki.example/logo.png)](https://wiki.example/)",
			want: "![logo][^1][^2]\n\n## Links\n\n[^1]: https://wiki.example/logo.png\n[^2]: https://wiki.example/",
		},
		{
			name: "same-page and javascript links lose their URL",
			md:   "A pool.[[1]](https://wiki.example/wiki/Tide_pool#cite-1) [Top](#top) [Show more](javascript:void(0))",
			want: "A pool.[1] Top Show more",
		},
		{
			name: "code is untouched",
			md:   "Call `[x](https://a.example/)` here.\n\n```md\n[y](https://b.example/)\n```\n\n[z](https://c.example/)",
			want: "Call `[x](https://a.example/)` here.\n\n```md\n[y](https://b.example/)\n```\n\nz[^1]\n\n## Links\n\n[^1]: https://c.example/",
		},
		{
			name: "numbering follows the page's own footnotes",
			md:   "A claim.[^2]\n\n[^2]: A note.\n\nSee [b](https://b.example/x_(y)).",
			want: "A claim.[^2]\n\n[^2]: A note.\n\nSee b[^3].\n\n## Links\n\n[^3]: https://b.example/x_(y)",
		},
		{
			name: "reference links, autolinks and bare brackets stay",
			md:   "[a][ref] and <https://a.example/> and [not a link] and escaped \\[x](y)",
			want: "[a][ref] and <https://a.example/> and [not a link] and escaped \\[x](y)",
		},
		{
			name: "relative links resolve against the page",
			md:   "[Low tide](/wiki/Low_tide)",
			want: "Low tide[^1]\n\n## Links\n\n[^1]: https://wiki.example/wiki/Low_tide",
		},
		{name: "no links", md: "Just text.", want: "Just text."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Apply(tt.md, page); got != tt.want {
				t.Errorf("Apply:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestNotesCountAcrossPages(t *testing.T) {
	t.Parallel()
	n := New(0)
	a := n.Rewrite("[x](https://x.example/) [y](https://y.example/)", nil)
	b := n.Rewrite("[y](https://y.example/) [z](https://z.example/)", nil)
	if a != "x[^1] y[^2]" || b != "y[^2] z[^3]" || n.Len() != 3 {
		t.Errorf("got %q and %q (%d URLs)", a, b, n.Len())
	}
}

func TestRenumberAcrossPages(t *testing.T) {
	t.Parallel()
	a := Apply("[x](https://x.example/) and [y](https://y.example/)", nil)
	b := Apply("A note.[^1]\n\n[^1]: Own.\n\n[y](https://y.example/) [z](https://z.example/) `[^1]`", nil)
	n := New(0)
	ra, rb := n.Renumber(a), n.Renumber(b)
	if ra != a {
		t.Errorf("the first page changed:\n%s", ra)
	}
	want := "A note.[^1]\n\n[^1]: Own.\n\ny[^2] z[^3] `[^1]`\n\n## Links\n\n[^2]: https://y.example/\n[^3]: https://z.example/"
	if rb != want {
		t.Errorf("second page:\n%s\nwant:\n%s", rb, want)
	}
	if n.Renumber("no links") != "no links" {
		t.Error("a page without citations changed")
	}
}

// TestHostileMarkdown runs Apply over Markdown built to make a naive
// scanner quadratic or recurse without end; it must finish, and keep the
// text.
func TestHostileMarkdown(t *testing.T) {
	t.Parallel()
	for name, md := range map[string]string{
		"unclosed brackets": strings.Repeat("[", 300_000),
		"unclosed links":    strings.Repeat("[a](", 100_000),
		"unclosed code":     strings.Repeat("`x``", 100_000),
		"nested labels":     strings.Repeat("[", 50_000) + "x" + strings.Repeat("](https://a.example/)", 50_000),
	} {
		out := Apply(md, nil)
		if name != "nested labels" && out != md {
			t.Errorf("%s: changed", name)
		}
		if name == "nested labels" && !strings.Contains(out, "[^1]: https://a.example/") {
			t.Errorf("%s: the link is not cited", name)
		}
	}
}
