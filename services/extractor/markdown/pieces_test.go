package markdown

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// longPage writes a body of every kind of block the converter renders,
// with text and inline runs straight inside containers, big enough to be
// cut into many pieces.
func longPage(sections int) string {
	var b strings.Builder
	b.WriteString(`<body><div class="page"><main><article>`)
	for i := range sections {
		fmt.Fprintf(&b, `<section><h2>Part %d</h2>
Loose text %d with <a href="/x/%d">a link</a> and <em>stress</em>
<p>A paragraph, <strong>bold</strong>, <code>code</code> and a  line<br>break.</p>
<div><div>Nested text %d</div><blockquote><p>Quoted %d</p><p>Second</p></blockquote></div>
<ol start="3"><li>three</li><li>four <ul><li>inner</li></ul></li></ol>
<pre class="language-go">func f%d() {

	return
}</pre>
<table><tr><th>k</th><th>v</th></tr><tr><td colspan="2">%d</td></tr></table>
<hr><figure><img src="/i/%d.png" alt="pic %d"><figcaption>Caption %d</figcaption></figure>
</section>`, i, i, i, i, i, i, i, i, i, i)
		if i%7 == 0 {
			b.WriteString("Text between sections, <span>inline</span>\n")
		}
	}
	b.WriteString(`</article></main></div></body>`)
	return b.String()
}

func convertWith(t *testing.T, page string, limit int) (md string, pieces int, left *html.Node) {
	t.Helper()
	old := pieceNodes
	pieceNodes = limit
	defer func() { pieceNodes = old }()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	body := htmlnode.First(doc, "body")
	base, _ := url.Parse("https://example.com/")
	prepare(body, base)
	pieces = len(splitPieces(cloneTree(body)))
	md, err = New().Convert(context.Background(), body, base)
	if err != nil {
		t.Fatal(err)
	}
	return md, pieces, body
}

// TestPiecesRenderAsTheWhole checks that a page rendered a piece at a time
// reads exactly as the page rendered at once, and that the pieces are
// taken out of the tree, so that they can be freed.
func TestPiecesRenderAsTheWhole(t *testing.T) {
	page := longPage(60)
	whole, pieces, _ := convertWith(t, page, 1<<30)
	if pieces != 1 {
		t.Fatalf("without a limit the page was cut into %d pieces", pieces)
	}
	for _, limit := range []int{1, 40, 300, 5000} {
		got, pieces, body := convertWith(t, page, limit)
		if limit < 5000 && pieces < 2 {
			t.Errorf("limit %d: %d pieces, want several", limit, pieces)
		}
		if got != whole {
			t.Errorf("limit %d: pieces render differently:\n%s", limit, firstDiff(whole, got))
		}
		if left := htmlnode.TextLen(body); pieces > 1 && left > 0 {
			t.Errorf("limit %d: %d characters of rendered pieces are still in the tree", limit, left)
		}
	}
	if !strings.Contains(whole, "Loose text 59 with [a link](https://example.com/x/59) and *stress*") {
		t.Errorf("loose text lost or split:\n%s", whole)
	}
}

// TestPiecesNeverCutARunOfText checks that a container holding one long
// run of inline content is not cut inside it.
func TestPiecesNeverCutARunOfText(t *testing.T) {
	var b strings.Builder
	b.WriteString("<body><div>")
	for i := range 3000 {
		fmt.Fprintf(&b, `word%d <a href="/%d">link</a> `, i, i)
	}
	b.WriteString("</div></body>")
	whole, _, _ := convertWith(t, b.String(), 1<<30)
	got, _, _ := convertWith(t, b.String(), 50)
	if got != whole {
		t.Fatalf("a run of text was cut:\n%s", firstDiff(whole, got))
	}
	if strings.Contains(got, "\n") {
		t.Fatal("one run of text became several lines")
	}
}

func cloneTree(n *html.Node) *html.Node {
	c := &html.Node{Type: n.Type, Data: n.Data, DataAtom: n.DataAtom, Attr: n.Attr}
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		c.AppendChild(cloneTree(ch))
	}
	return c
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d:\n  whole:  %q\n  pieces: %q", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("lengths differ: %d and %d lines", len(al), len(bl))
}
