package extract

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// withoutCode renders doc without the text of its executable scripts
// and, as cuts says, of its style sheets and of what its drawings hold:
// what elideCode promises to leave.
func withoutCode(t *testing.T, doc *html.Node, cuts elision) string {
	t.Helper()
	var drop []*html.Node
	htmlnode.Walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		code := n.Data == "script" && !strings.Contains(strings.ToLower(htmlnode.Attr(n, "type")), "ld+json") || cuts.styles && n.Data == "style"
		drawing := cuts.drawings && n.Data == "svg" && n.Namespace == "svg" && n.Parent != nil && n.Parent.Namespace == ""
		if n.Namespace == "" && code || drawing {
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				drop = append(drop, c)
			}
		}
		return true
	})
	for _, n := range drop {
		n.Parent.RemoveChild(n)
	}
	var b bytes.Buffer
	if err := html.Render(&b, doc); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestElideCodeKeepsTheTree(t *testing.T) {
	for _, tt := range []struct {
		name, page string
		styles     bool
		drawings   bool
		// gone is text that must not be in the elided page; kept must be.
		gone, kept []string
	}{
		{
			name:   "scripts, JSON state and styles go, JSON-LD stays",
			styles: true,
			page:   `<html><head><style>p{color:red}</style><script>var a = "<p>x</p>";</script><script type="application/ld+json">{"@type":"Article"}</script><script type=" Application/LD+JSON ">{"@type":"Person"}</script></head><body><p>Hi</p><script type=module>import x from "y"</script><script id="__NEXT_DATA__" type="application/json">{"props":{}}</script></body></html>`,
			gone:   []string{"color:red", "var a", "import x", `"props"`},
			kept:   []string{`{"@type":"Article"}`, `{"@type":"Person"}`, "<p>Hi</p>", "<style></style>", `<script type=module></script>`, `type="application/json"></script>`},
		},
		{
			name: "styles stay when asked",
			page: `<style>p{color:red}</style><script>go()</script><p>Hi</p>`,
			gone: []string{"go()"},
			kept: []string{"color:red"},
		},
		{
			name:   "a tag name in an attribute or a comment is no tag",
			page:   `<div title="<script>" data-x='<style>'>A</div><!-- <script> --><p =x="<script>">B</p><script>drop()</script><p>C</p>`,
			styles: true,
			gone:   []string{"drop()"},
			kept:   []string{`title="<script>"`, "<!-- <script> -->", "<p>C</p>"},
		},
		{
			name:   "capitals and spaced end tags",
			page:   `<SCRIPT TYPE="text/javascript">x()</SCRIPT ><Style>a{}</STYLE/><p>D</p>`,
			styles: true,
			gone:   []string{"x()", "a{}"},
			kept:   []string{"<p>D</p>", "</STYLE/>"},
		},
		{
			name:   "text elements hold their tags as text",
			page:   `<textarea><script>keep()</script></textarea><title><style>t</style></title><noscript><script>k2()</script></noscript><script>drop()</script>`,
			styles: true,
			gone:   []string{"drop()"},
			kept:   []string{"keep()", "<style>t</style>", "k2()"},
		},
		{
			name:   "the first type counts, and a referenced one is kept",
			page:   `<script type="text/javascript" type="application/ld+json">drop()</script><script type="application&#47;ld+json">{"a":1}</script>`,
			styles: true,
			gone:   []string{"drop()"},
			kept:   []string{`{"a":1}`},
		},
		{
			name:   "an escaped script stops the eliding",
			page:   `<style>s1{}</style><script><!-- document.write("<script>x<\/script>") --></script><style>s2{}</style>`,
			styles: true,
			gone:   []string{"s1{}"},
			kept:   []string{"document.write", "s2{}"},
		},
		{
			name:   "a CDATA section stops the eliding",
			page:   `<svg><![CDATA[ a > b <script> ]]></svg><script>k()</script>`,
			styles: true,
			kept:   []string{"k()"},
		},
		{
			name:   "odd comments and declarations",
			page:   `<!DOCTYPE html><?xml x?><!--><!---><!-- a -- b --!><p>E</p></><!a <script> ><script>drop()</script>`,
			styles: true,
			gone:   []string{"drop()"},
			kept:   []string{"<p>E</p>"},
		},
		{
			name:   "inside SVG and MathML, whose scripts and styles are markup, nothing is cut",
			page:   `<svg><style>.a{fill:red}</style><script>s()</script></svg><math><style>m{}</style></math><style>b{}</style>`,
			styles: true,
			gone:   []string{"b{}"},
			kept:   []string{".a{fill:red}", "s()", "m{}"},
		},
		{
			name:   "a page that ends inside a script",
			page:   `<p>F</p><script>never(`,
			styles: true,
			kept:   []string{"never("},
		},
		{
			name:   "a page that ends inside a tag",
			page:   `<p>G</p><script>drop()</script><div class="x`,
			styles: true,
			gone:   []string{"drop()"},
		},
		{
			name:     "a drawing's shapes and title go, the svg and its attributes stay",
			page:     `<p>A <svg class="icon" aria-label="Cart" viewBox="0 0 24 24"><title>Cart</title><path d="M1 2L3 4"/><g><circle r=1></circle></g><style>.s{}</style></svg> B</p><script>drop()</script>`,
			drawings: true,
			gone:     []string{"M1 2L3 4", "<title>", "circle", ".s{}", "drop()"},
			kept:     []string{`<svg class="icon" aria-label="Cart" viewBox="0 0 24 24"></svg> B</p>`},
		},
		{
			name:   "drawings stay unless asked",
			page:   `<svg><path d="M9"/></svg>`,
			styles: true,
			kept:   []string{`d="M9"`},
		},
		{
			name:     "nested drawings: the outer one ends at its own end tag",
			page:     `<svg><svg><rect/></svg><path d="M7"/><SVG/></Svg><p>after</p>`,
			drawings: true,
			gone:     []string{"M7", "rect"},
			kept:     []string{"<p>after</p>"},
		},
		{
			name:     "a tag that breaks out of the drawing keeps it whole",
			page:     `<svg><path d="M0"/><P>text</P></svg><svg><font color=red>f</font><path d="M1"/></svg>`,
			drawings: true,
			kept:     []string{"M0", "<P>text</P>", "M1"},
		},
		{
			name:     "a tag in an HTML integration point keeps the drawing whole",
			page:     `<svg><desc><a href=x>x</a></desc><path d="M5"/></svg><svg><foreignObject><i>i</i></foreignObject><path d="M6"/></svg>`,
			drawings: true,
			kept:     []string{"M5", "M6"},
		},
		{
			name:     "an end tag the drawing did not open keeps it whole",
			page:     `<div><svg><path d="M2"></div>after</svg>`,
			drawings: true,
			kept:     []string{"M2", "after"},
		},
		{
			name:     "a drawing in a select, whose tags the parser drops, keeps its text",
			page:     `<select><option>a<svg><path/>T</svg></select><svg><path d="M3"/></svg>`,
			drawings: true,
			gone:     []string{"M3"},
			kept:     []string{"T</svg>"},
		},
		{
			name:     "a frameset after a drawing with text undoes the cut",
			page:     `<svg><text>words</text></svg><frameset><frame src=a></frameset><script>drop()</script>`,
			drawings: true,
			gone:     []string{"drop()"},
			kept:     []string{"words"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cuts := elision{styles: tt.styles, drawings: tt.drawings}
			got := elideCode([]byte(tt.page), cuts).bytes()
			for _, g := range tt.gone {
				if bytes.Contains(got, []byte(g)) {
					t.Errorf("%q still in %s", g, got)
				}
			}
			for _, k := range tt.kept {
				if !bytes.Contains(got, []byte(k)) {
					t.Errorf("%q lost from %s", k, got)
				}
			}
			want, err := html.Parse(strings.NewReader(tt.page))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := html.Parse(bytes.NewReader(got))
			if err != nil {
				t.Fatal(err)
			}
			if w, g := withoutCode(t, want, cuts), withoutCode(t, doc, cuts); w != g {
				t.Errorf("trees differ:\n got %s\nwant %s", g, w)
			}
		})
	}
}

func TestElideCodeReturnsAPageWithNoCodeAsItIs(t *testing.T) {
	page := []byte(`<p>No code <b>here</b></p><script type="application/ld+json">{}</script>`)
	if got := elideCode(page, elision{styles: true, drawings: true}).bytes(); &got[0] != &page[0] || len(got) != len(page) {
		t.Errorf("elideCode copied a page it had nothing to cut from")
	}
}

// The parser reads the kept parts in place, a few at a time or many at
// once, as they would be read joined.
func TestElidedReadsWhatIsKept(t *testing.T) {
	page := []byte(`<style>a{}</style>` + strings.Repeat(`<p>x</p><script>go()</script>`, 50) + `<p>end</p>`)
	e := elideCode(page, elision{styles: true})
	want := string(e.bytes())
	if strings.Contains(want, "go()") || !strings.HasSuffix(want, "<p>end</p>") {
		t.Fatalf("joined: %s", want)
	}
	for _, size := range []int{1, 7, 4096} {
		r := e.reader()
		var got []byte
		buf := make([]byte, size)
		for {
			n, err := r.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if string(got) != want {
			t.Errorf("read %d at a time: %q, want %q", size, got, want)
		}
	}
	if string(whole(page).bytes()) != string(page) || len(elideCode(nil, elision{}).bytes()) != 0 {
		t.Error("whole or empty pages are not read as they are")
	}
}

// FuzzElideCode checks the promise on any input: the page parses to the
// same tree as before, but for the text of its scripts and style sheets
// and what its drawings hold.
func FuzzElideCode(f *testing.F) {
	for _, seed := range []string{
		`<style>a{}</style><script>x()</script><p>t</p>`,
		`<div title="<script>">a</div><script type=module>y</script>`,
		`<svg><style><b>bold</b></style></svg><script>z()</script>`,
		`<math><mi><style>s</style></mi></math><style>t</style>`,
		`<!--<script>--><script>w</script>`,
		`<textarea><script>k</script></textarea><script>d</script>`,
		`<script><!-- a </script><script>b</script>`,
		`<p =x='<script>' y=">">q</p><script>e</script>`,
		`<p><svg><title>t</title><g><path d="M0"/></g></svg></p>`,
		`<svg><path/><div>out</div></svg><svg><desc><b>d</b></desc></svg>`,
		`<select><svg>s</svg></select><svg><rect></p></svg>`,
		`<svg>x</svg><frameset></frameset>`,
		`<table><svg><path/>t</svg><tr><td>c</table>`,
	} {
		f.Add(seed, true, true)
		f.Add(seed, false, false)
	}
	f.Fuzz(func(t *testing.T, page string, styles, drawings bool) {
		cuts := elision{styles: styles, drawings: drawings}
		got := elideCode([]byte(page), cuts).bytes()
		want, err := html.Parse(strings.NewReader(page))
		if err != nil {
			return
		}
		doc, err := html.Parse(bytes.NewReader(got))
		if err != nil {
			t.Fatalf("the elided page does not parse: %v", err)
		}
		if w, g := withoutCode(t, want, cuts), withoutCode(t, doc, cuts); w != g {
			t.Errorf("trees differ for %q:\n got %s\nwant %s", page, g, w)
		}
	})
}
