package cleanhtml

import (
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func TestBlocks(t *testing.T) {
	t.Parallel()
	page := `<div class="wrap" style="color:red"><section><h2 id="x">Part <span>one</span></h2>
<div>Loose <b>text</b> here</div><div>and more</div>
<p hidden>secret</p><script>alert(1)</script><form><input name=q></form>
<ul>
  <li><a href="/next" class="btn" onclick="x()">Next</a> <a href="javascript:void(0)">Menu</a></li>
</ul>
<table><tr><td colspan="2" class="c">wide</td></tr></table>
<pre class="language-go"><code>a  :=  1
b := "&lt;x&gt;"</code></pre>
<img src="/logo.png" alt="Logo" width="10"></section></div>`
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	base, _ := url.Parse("https://x.example/docs/")
	got := Blocks(doc, base)
	want := []string{
		"<h2>Part one</h2>",
		"<p>Loose <b>text</b> here</p>",
		"<p>and more</p>",
		`<ul><li><a href="https://x.example/next">Next</a> Menu</li></ul>`,
		`<table><tbody><tr><td colspan="2">wide</td></tr></tbody></table>`,
		"<pre class=\"language-go\"><code>a  :=  1\nb := &#34;&lt;x&gt;&#34;</code></pre>",
		`<p><img src="https://x.example/logo.png" alt="Logo"></p>`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
