package readable

import (
	"context"
	"strings"
	"testing"

	"distill.dev/services/extractor/internal/htmlnode"
)

// thread is a forum thread whose second post shows, above its own text,
// a preview of the post it answers, and whose third post quotes the
// first in full.
const thread = `<html><head><title>Which lathe for a beginner</title></head><body>
<main>
<h1>Which lathe for a beginner</h1>
<article class="post">
 <div class="author">ana_turns</div>
 <div class="body"><p>I have a small garage and about five hundred to spend on a first lathe.</p>
 <p>Is a mini lathe enough for bowls, or should I wait and save for a midi?</p></div>
</article>
<article class="post">
 <div class="author">woodchip</div>
 <div class="parent-preview"><p>I have a small garage and about five hundred to spend on a first lathe.</p></div>
 <div class="body"><p>A mini lathe turns bowls up to about eight inches across without trouble.</p></div>
</article>
<article class="post">
 <div class="author">grain_runner</div>
 <div class="body"><blockquote><cite>ana_turns said:</cite><p>Is a mini lathe enough for bowls, or should I wait and save for a midi?</p></blockquote>
 <p>Save for the midi if you ever want to turn table legs.</p>
 <pre><code>swing: 12 inches
swing: 12 inches</code></pre>
 <p>Same question here, thanks.</p><p>Same question here, thanks.</p></div>
</article>
</main></body></html>`

func TestRepeatsLeaveAThread(t *testing.T) {
	t.Parallel()
	content, err := ArticleOf(context.Background(), parse(t, thread), Page{Type: TypeForum})
	if err != nil {
		t.Fatal(err)
	}
	text := htmlnode.Text(content)
	for phrase, want := range map[string]int{
		"about five hundred to spend":      1, // the preview of the first post goes
		"Is a mini lathe enough for bowls": 1, // and the quotation of all of it
		"ana_turns said":                   1, // but the quotation's citation stays
		"eight inches across":              1,
		"Save for the midi":                1,
		"swing: 12 inches":                 2, // code keeps its repeated lines
		"Same question here, thanks":       2, // too short to be a repeat
		"Which lathe for a beginner":       1,
	} {
		if got := strings.Count(text, phrase); got != want {
			t.Errorf("%q appears %d times, want %d:\n%s", phrase, got, want, text)
		}
	}
	for _, div := range htmlnode.Elements(content, "div") {
		if htmlnode.Attr(div, "class") == "parent-preview" {
			t.Errorf("the emptied preview's wrapper stayed")
		}
	}
}

// TestRepeatsStayOnServicePages: the terms a service page prints under
// each of its offers are each offer's terms.
func TestRepeatsStayOnServicePages(t *testing.T) {
	t.Parallel()
	page := `<html><body><main><h1>Plans</h1>
<section><h2>Basic</h2><p>Ten dollars a month for one seat.</p><p>Cancel at any time from your account page, no questions asked.</p></section>
<section><h2>Team</h2><p>Forty dollars a month for five seats.</p><p>Cancel at any time from your account page, no questions asked.</p></section>
</main></body></html>`
	content, err := ArticleOf(context.Background(), parse(t, page), Page{Type: TypeService})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(htmlnode.Text(content), "Cancel at any time"); got != 2 {
		t.Errorf("the terms appear %d times, want 2:\n%s", got, htmlnode.Text(content))
	}
}

func TestWordsKey(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in    string
		key   string
		words int
	}{
		{"", "", 0},
		{"  Hello,   World! ", "hello world", 2},
		{"It's 6.5 — Qt's\tversion", "it s 6 5 qt s version", 7},
		{"Größe ÜBER", "größe über", 2},
	} {
		key, words := wordsKey(c.in)
		if key != c.key || words != c.words {
			t.Errorf("wordsKey(%q) = %q, %d; want %q, %d", c.in, key, words, c.key, c.words)
		}
	}
}
