package markdown

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

func convert(t *testing.T, fragment string) string {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(fragment))
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse("https://example.com/blog/post/")
	md, err := New().Convert(context.Background(), htmlnode.First(doc, "body"), base)
	if err != nil {
		t.Fatal(err)
	}
	return md
}

func TestConvert(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"relative link made absolute", `<a href="../other">Other</a>`, "[Other](https://example.com/blog/other)"},
		{"link title dropped", `<a href="/x" title="Tip">X</a>`, "[X](https://example.com/x)"},
		{"javascript link becomes text", `<p>Go <a href="javascript:void(0)">here</a> now</p>`, "Go here now"},
		{"link without href becomes text", `<p>Go <a name="x">here</a></p>`, "Go here"},
		{"tel link becomes text", `<a href="tel:+44123">Call</a>`, "Call"},
		{"mailto kept", `<a href="mailto:a@example.com">Mail</a>`, "[Mail](mailto:a@example.com)"},
		{"empty link dropped", `<p>Before <a href="/x"></a> after</p>`, "Before after"},
		{"link around a dropped image dropped", `<p>A <a href="/x"><img alt="gone"></a> B</p>`, "A B"},
		{"image src absolute", `<img src="pic.png" alt="P">`, "![P](https://example.com/blog/post/pic.png)"},
		{"lazy data-src over placeholder", `<img src="data:image/gif;base64,AAAA" data-src="/real.jpg" alt="R">`, "![R](https://example.com/real.jpg)"},
		{"lazy data-lazy-src", `<img data-lazy-src="//cdn.example.net/a.jpg" alt="C">`, "![C](https://cdn.example.net/a.jpg)"},
		{"first srcset candidate", `<img srcset="/s.jpg 480w, /l.jpg 1080w" alt="S">`, "![S](https://example.com/s.jpg)"},
		{"image without source dropped", `<p>x <img alt="nothing"> y</p>`, "x y"},
		{"data image dropped", `<img src="data:image/png;base64,AAAA" alt="inline">`, ""},
		{"code language on code", `<pre><code class="language-rust">fn main() {}</code></pre>`, "```rust\nfn main() {}\n```"},
		{"code language lang-", `<pre class="lang-js">let a</pre>`, "```js\nlet a\n```"},
		{"code language from wrapper", `<div class="highlight highlight-source-shell"><pre>ls -l</pre></div>`, "```shell\nls -l\n```"},
		{"code language data-lang", `<pre data-lang="sql">SELECT 1</pre>`, "```sql\nSELECT 1\n```"},
		{"code language brush", `<pre class="brush: ruby; gutter: false">puts 1</pre>`, "```ruby\nputs 1\n```"},
		{"code without language", `<pre class="prettyprint">plain</pre>`, "```\nplain\n```"},
		{"strikethrough", `<p><del>old</del> new</p>`, "~~old~~ new"},
		{"table", `<table><tr><th>A</th><th>B</th></tr><tr><td>1</td><td>2</td></tr></table>`, "| A | B |\n|---|---|\n| 1 | 2 |"},
		{"blank lines collapsed", `<p>a</p><div><br><br><br></div><p>b</p>`, "a\n\nb"},
		{"adjacent lists without an end comment", `<ul><li>a</li></ul><ul><li>b</li></ul>`, "- a\n\n- b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := convert(t, tt.in); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestTidy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"trims", "\n\n  text  \n\n", "text"},
		{"collapses blank runs", "a\n\n\n\nb\n \n\t\nc", "a\n\nb\n\nc"},
		{"keeps code blank lines", "```\nx\n\n\n\ny\n```\n\n\n\nz", "```\nx\n\n\n\ny\n```\n\nz"},
		{"longer fence needs longer close", "````\n```\n\n\n````\n\n\nq", "````\n```\n\n\n````\n\nq"},
		{"keeps hard breaks", "line one  \nline two", "line one  \nline two"},
		{"trims other trailing space", "line \t\nnext", "line\nnext"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Tidy(tt.in); got != tt.want {
				t.Errorf("Tidy(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestOpenFence(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"none", "text", ""},
		{"closed", "```go\nx\n```", ""},
		{"open", "intro\n```go\nx := 1", "```"},
		{"open tilde", "~~~\nx", "~~~"},
		{"inner shorter fence does not close", "````\n```\n", "````"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := OpenFence(tt.in); got != tt.want {
				t.Errorf("OpenFence(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// endingCtx is a context that ends after its Err has been asked a given
// number of times: a cancellation in the middle of a conversion, placed
// without a clock.
type endingCtx struct {
	context.Context
	asked, after int
}

func (c *endingCtx) Err() error {
	c.asked++
	if c.asked > c.after {
		return context.Canceled
	}
	return nil
}

// A conversion whose context ends midway renders the rest as nothing and
// reports the context's error, instead of running on over a huge page.
func TestConvertStopsWhenItsContextEnds(t *testing.T) {
	t.Parallel()
	doc, err := html.Parse(strings.NewReader("<body>" + strings.Repeat("<p>A paragraph of <b>text</b>.</p>", 5000)))
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse("https://example.com/")
	ctx := &endingCtx{Context: context.Background(), after: 100}
	md, err := New().Convert(ctx, htmlnode.First(doc, "body"), base)
	if !errors.Is(err, context.Canceled) || md != "" {
		t.Fatalf("Convert = %d bytes, %v; want nothing and context.Canceled", len(md), err)
	}
	// Once ended, each node is looked at once more at most.
	if ctx.asked > 100+3*5000+10 {
		t.Errorf("Err asked %d times", ctx.asked)
	}
}
