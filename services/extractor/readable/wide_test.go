package readable

import (
	"context"
	"strings"
	"testing"

	"distill.dev/services/extractor/internal/htmlnode"
)

// TestWideKeepsAThreadInAForm: forum engines wrap a thread's posts in a
// form for quoting several at once; the search form beside it is chrome.
func TestWideKeepsAThreadInAForm(t *testing.T) {
	t.Parallel()
	page := `<html><body>
<header><a href="/">Case Makers Forum</a><form action="/search"><input name="q"><button>Search</button></form></header>
<div class="layout">
<div class="sidebar"><p>` + prose("sidebar", 6) + `</p></div>
<form action="/topic/42/multiquote" method="post">
 <article class="post"><div class="author">rabbids</div><p>What are the two ports under the power supply for? The manual says nothing about them, and they both look deliberate.</p></article>
 <article class="post"><div class="author">devbiker</div><p>The rear one is said to be for linking external lighting controllers; the one by the fans I have not seen explained.</p></article>
</form>
</div>
<footer>© Case Makers</footer>
</body></html>`
	content, err := ArticleOf(context.Background(), parse(t, page), Page{Type: TypeForum})
	if err != nil {
		t.Fatal(err)
	}
	text := htmlnode.Text(content)
	for _, want := range []string{"two ports under the power supply", "external lighting controllers"} {
		if !strings.Contains(text, want) {
			t.Errorf("content lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "Search") {
		t.Errorf("the search form stayed:\n%s", text)
	}
}
