package readable

import (
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// TestClassifySignals checks the classifier on each of its signals alone,
// on pages otherwise alike: a paragraph of prose and a few links.
func TestClassifySignals(t *testing.T) {
	t.Parallel()
	prose := "<p>" + strings.Repeat("Plain words make up this paragraph of running text, long enough to read as prose. ", 4) + "</p>"
	tests := []struct {
		name, head, body, url string
		want                  PageType
		uncertain             bool
	}{
		{name: "forum posting JSON-LD", head: ld(`{"@type":"DiscussionForumPosting"}`), want: TypeForum},
		{name: "Q&A page in a graph", head: ld(`{"@graph":[{"@type":"WebSite"},{"@type":"QAPage"}]}`), want: TypeForum},
		{name: "FAQ questions are not a forum", head: ld(`{"@type":"FAQPage","mainEntity":[{"@type":"Question"},{"@type":"Question"},{"@type":"Question"}]}`) + ld(`{"@type":"BlogPosting"}`), want: TypeArticle},
		{name: "thread path with authors", url: "https://example.org/threads/how-to.12/", body: `<div class="username">a</div><div class="username">b</div>`, want: TypeForum},
		{name: "product JSON-LD", head: ld(`{"@type":"Product","name":"Kettle"}`), want: TypeProduct},
		{name: "og product", head: `<meta property="og:type" content="product">`, want: TypeProduct},
		{name: "many products are a collection", head: ld(`[{"@type":"Product"},{"@type":"Product"},{"@type":"Product"}]`), want: TypeCollection},
		{name: "prices without prose", body: strings.Repeat(`<div><a href="/p">Kettle</a> $12.00 steel</div>`, 12), want: TypeCollection},
		{name: "item list", head: ld(`{"@type":"ItemList"}`), body: `<div>x</div>`, want: TypeListing},
		{name: "cards", body: strings.Repeat(`<div class="card"><h3><a href="/j">Analytics engineer wanted</a></h3><div>Remote, full time, data team.</div></div>`, 6), want: TypeListing},
		{name: "cards with prices", body: strings.Repeat(`<div class="card"><h3><a href="/p">Enamelled stovetop kettle</a></h3><div>Steel body, 1.7 litres, $39.00</div></div>`, 6), want: TypeCollection},
		{name: "forum engine script", url: "https://example.net/viewtopic.php?t=12", want: TypeForum},
		{name: "forum host with dated posts", url: "https://forum.example.net/some-thread-title", body: `<time>1 May</time><time>2 May</time>`, want: TypeForum},
		{name: "tech article", head: ld(`{"@type":"TechArticle"}`), want: TypeDocumentation},
		{name: "docs path", url: "https://example.dev/docs/install/", want: TypeDocumentation},
		{name: "article JSON-LD", head: ld(`{"@type":"NewsArticle"}`), want: TypeArticle},
		{name: "dated path", url: "https://example.com/2024/05/01/story/", want: TypeArticle},
		{name: "sections of a landing page", body: strings.Repeat(`<section><h2>Fast builds</h2><div>Short claims about the product.</div></section>`, 6), want: TypeService},
		{name: "prose alone", want: TypeArticle, uncertain: true},
		{name: "nearly empty", head: ld(`{"@type":"Product"}`), body: "-", want: TypeOther, uncertain: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := prose + tt.body
			if tt.want == TypeOther {
				body = tt.body
			}
			if strings.HasPrefix(tt.body, "<section") || strings.HasPrefix(tt.body, `<div class="card"`) || strings.Contains(tt.body, "$") {
				body = tt.body
			}
			doc, err := html.Parse(strings.NewReader("<html><head>" + tt.head + "</head><body>" + body + "</body></html>"))
			if err != nil {
				t.Fatal(err)
			}
			var u *url.URL
			if tt.url != "" {
				u, _ = url.Parse(tt.url)
			}
			got := Classify(doc, u)
			if got.Type != tt.want || got.Uncertain != tt.uncertain {
				t.Errorf("Classify = %s (uncertain %t), want %s (uncertain %t)", got.Type, got.Uncertain, tt.want, tt.uncertain)
			}
		})
	}
}

func ld(json string) string {
	return `<script type="application/ld+json">` + json + `</script>`
}

// TestHasPrice checks what reads as an amount of money.
func TestHasPrice(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"$39.00": true, "€ 12": true, "12,50 €": true, "from £5": true, "¥1200": true,
		"US$": false, "$": false, "cost a lot": false, "4 €uro": true, "$ off": false,
	} {
		if got := hasPrice(s); got != want {
			t.Errorf("hasPrice(%q) = %t, want %t", s, got, want)
		}
	}
}

// TestShowNoscript checks that a thin page's noscript markup becomes
// part of the page, and that a full page's stays hidden.
func TestShowNoscript(t *testing.T) {
	t.Parallel()
	thread := "<noscript><h1>Thread</h1><p>" + strings.Repeat("A reply with words. ", 20) + "</p></noscript>"
	for _, tt := range []struct {
		name, body string
		shown      bool
	}{
		{name: "app shell", body: `<div id="app"></div>` + thread, shown: true},
		{name: "full page", body: "<p>" + strings.Repeat("Visible article text. ", 80) + "</p>" + thread, shown: false},
		{name: "tracking pixel", body: `<div id="app"></div><noscript><img src="/pixel.gif"></noscript>`, shown: false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := html.Parse(strings.NewReader("<html><body>" + tt.body + "</body></html>"))
			if err != nil {
				t.Fatal(err)
			}
			ShowNoscript(doc)
			if shown := htmlnode.First(doc, "h1") != nil; shown != tt.shown {
				t.Errorf("noscript shown %t, want %t", shown, tt.shown)
			}
		})
	}
}
