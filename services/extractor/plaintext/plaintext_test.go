package plaintext

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func render(t *testing.T, fragment string) string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(fragment))
	if err != nil {
		t.Fatal(err)
	}
	return Render(doc)
}

func TestRender(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"paragraphs separated by a blank line", "<p>One.</p><p>Two.</p>", "One.\n\nTwo."},
		{"headings on their own lines", "<h1>Title</h1>Intro text<h2>Part</h2><p>Body</p>", "Title\n\nIntro text\n\nPart\n\nBody"},
		{"whitespace collapsed", "<p>  a \n\t b   c </p>", "a b c"},
		{"inline elements joined", "<p>a <b>bold</b>, <i>it</i> and <a href='/x'>link</a>.</p>", "a bold, it and link."},
		{"unordered list", "<ul><li>alpha</li><li>beta <em>b</em></li></ul>", "- alpha\n- beta b"},
		{"ordered list numbered", `<ol start="3"><li>c</li><li>d</li></ol>`, "3. c\n4. d"},
		{"nested list indented", "<ul><li>a<ul><li>a1</li></ul></li><li>b</li></ul>", "- a\n  - a1\n- b"},
		{"line break", "<p>line one<br>line two</p>", "line one\nline two"},
		{"table cells", "<table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table>", "A | B\n1 | 2"},
		{"pre kept verbatim", "<p>Code:</p><pre>a  =  1\n  b = 2</pre><p>after</p>", "Code:\n\na  =  1\n  b = 2\n\nafter"},
		{"scripts, styles and images skipped", "<p>a<script>x()</script><style>p{}</style><img alt='i'>b</p>", "ab"},
		{"divs break lines", "<div>one</div><div>two</div>", "one\ntwo"},
		{"no markdown syntax", "<h2>H</h2><p><strong>s</strong> <code>c</code></p><blockquote>q</blockquote>", "H\n\ns c\n\nq"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := render(t, tt.in); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestRenderDeepTree(t *testing.T) {
	t.Parallel()
	// A tree deeper than any parser would build: the walk keeps no stack.
	root := &html.Node{Type: html.ElementNode, Data: "div"}
	n := root
	for range 1_000_000 {
		c := &html.Node{Type: html.ElementNode, Data: "span"}
		n.AppendChild(c)
		n = c
	}
	n.AppendChild(&html.Node{Type: html.TextNode, Data: "bottom"})
	if got := Render(root); got != "bottom" {
		t.Errorf("got %q", got)
	}
}

func TestRenderNil(t *testing.T) {
	t.Parallel()
	if got := Render(nil); got != "" {
		t.Errorf("got %q", got)
	}
}
