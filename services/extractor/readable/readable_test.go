package readable

import (
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

func parse(t *testing.T, page string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// prose returns n sentences of article-like text, distinct per seed.
func prose(seed string, n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString("The " + seed + " report, in its section " + strings.Repeat("i", i%5+1) + ", found that rivers, roads and bridges all need work. ")
	}
	return b.String()
}

func TestArticle(t *testing.T) {
	tests := []struct {
		name    string
		page    string
		present []string
		absent  []string
	}{
		{
			name: "article element over the page around it",
			page: `<body><div class="menu"><a href="/">Home</a> <a href="/a">A</a> <a href="/b">B</a></div>
<article><h1>Head</h1><p>` + prose("main", 4) + `</p></article>
<div class="other"><p>` + prose("footer note", 1) + `</p></div></body>`,
			present: []string{"Head", "The main report"},
			absent:  []string{"Home", "footer note"},
		},
		{
			name: "articleBody is more specific than article",
			page: `<body><article><h1>Head</h1><p class="kicker">Kicker text above the body, with words.</p>
<div itemprop="articleBody"><p>` + prose("body", 4) + `</p></div></article></body>`,
			present: []string{"The body report"},
			absent:  []string{"Kicker", "Head"},
		},
		{
			name: "a teaser article loses to far more text elsewhere",
			page: `<body><div class="rail"><article class="card"><p>` + prose("teaser", 3) + `</p></article></div>
<div class="story"><p>` + prose("real", 8) + `</p><p>` + prose("real more", 8) + `</p></div></body>`,
			present: []string{"The real report", "The real more report"},
			absent:  []string{"teaser"},
		},
		{
			name: "scorer picks the paragraphs' container in div soup",
			page: `<body><div id="top"><a href="/1">One</a> <a href="/2">Two</a> <a href="/3">Three</a></div>
<div id="wrap"><div id="text"><p>` + prose("soup", 3) + `</p><p>` + prose("soup two", 3) + `</p></div>
<div id="links"><a href="/x">` + strings.Repeat("link text ", 20) + `</a></div></div></body>`,
			present: []string{"The soup report", "The soup two report"},
			absent:  []string{"One", "link text"},
		},
		{
			name: "loose text between blocks counts",
			page: `<body><div class="nav"><p>Short nav text here</p></div>
<div class="col"><b>Date</b><br>` + prose("loose", 4) + `<br><div class="row">x</div></div></body>`,
			present: []string{"The loose report"},
			absent:  []string{"Short nav"},
		},
		{
			name: "furniture inside the article removed",
			page: `<body><article><header><h1>Kept Heading</h1></header><p>` + prose("body", 3) + `</p>
<div class="shareButtons"><a href="/s">Share</a></div>
<div id="disqus_thread"><p>` + prose("comment", 1) + `</p></div>
<section class="relatedPosts"><p>` + prose("related", 1) + `</p></section>
<div class="ad-slot">Advertisement</div>
<span class="sr-only">Opens in a new window</span>
<nav><a href="/prev">Previous</a></nav><aside>Aside text</aside>
<form><input name="q"><button>Go</button></form>
<ul class="tags"><li><a href="/t1">t1</a></li><li><a href="/t2">t2</a></li><li><a href="/t3">t3</a></li></ul>
<footer>Article footer</footer>
</article></body>`,
			present: []string{"Kept Heading", "The body report", "Article footer"},
			absent:  []string{"Share", "comment report", "related report", "Advertisement", "new window", "Previous", "Aside text", "Go", "t1"},
		},
		{
			name: "page header and footer removed from a body-level pick",
			page: `<body><header><p>Site tagline that is long enough to read as prose here.</p></header>
<p>` + prose("flat", 2) + `</p><p>` + prose("flat two", 2) + `</p>
<footer><p>Copyright notice that is long enough to read as prose here.</p></footer></body>`,
			present: []string{"The flat report", "The flat two report"},
			absent:  []string{"tagline", "Copyright"},
		},
		{
			name: "a wrapper named like furniture is kept",
			page: `<body><main><div class="l-sidebar-fixed l-article-body"><p>` + prose("wrapped", 4) + `</p>
<div class="sidebar-widget"><p>Widget text</p></div></div></main></body>`,
			present: []string{"The wrapped report"},
			absent:  []string{"Widget text"},
		},
		{
			name: "an ASP.NET form around the page is kept",
			page: `<body><form id="aspnetForm" action="/default.aspx"><div class="menu"><a href="/">Home</a></div>
<div class="story"><p>` + prose("form", 4) + `</p></div></form></body>`,
			present: []string{"The form report"},
		},
		{
			name: "hidden elements removed",
			page: `<body><article><p>` + prose("visible", 3) + `</p><p hidden>Hidden attr</p>
<p style="display: none">Display none</p><p style="VISIBILITY:hidden">Invisible</p>
<span aria-hidden="true">Icon label</span><template><p>Template</p></template>
<noscript>Noscript</noscript><script>var s = 1;</script><style>p{}</style></article></body>`,
			present: []string{"The visible report"},
			absent:  []string{"Hidden attr", "Display none", "Invisible", "Icon label", "Template", "Noscript", "var s", "p{}"},
		},
		{
			name: "aria-hidden on the whole page is ignored",
			page: `<body><div id="page" aria-hidden="true"><article><p>` + prose("modal", 4) + `</p></article></div>
<div role="dialog">Cookie dialog</div></body>`,
			present: []string{"The modal report"},
			absent:  []string{"Cookie dialog"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			content := Article(parse(t, tt.page))
			if content == nil {
				t.Fatal("no content")
			}
			text := htmlnode.Text(content)
			for _, s := range tt.present {
				if !strings.Contains(text, s) {
					t.Errorf("content lacks %q: %q", s, text)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(text, s) {
					t.Errorf("content still has %q: %q", s, text)
				}
			}
		})
	}
}

func TestArticleMergesSiblings(t *testing.T) {
	page := `<body><div id="wrap"><div class="para-block"><p>` + prose("first", 5) + `</p><p>` + prose("second", 5) + `</p></div>
<p>` + prose("sibling paragraph", 1) + `</p>
<div class="para-block"><p>` + prose("third", 5) + `</p></div>
<div class="menu"><a href="/a">a</a></div></div></body>`
	content := Article(parse(t, page))
	text := htmlnode.Text(content)
	for _, s := range []string{"The first report", "The sibling paragraph report", "The third report"} {
		if !strings.Contains(text, s) {
			t.Errorf("content lacks %q", s)
		}
	}
	if strings.Index(text, "first") > strings.Index(text, "third") {
		t.Error("siblings out of order")
	}
}

func TestFull(t *testing.T) {
	doc := parse(t, `<body><nav>Nav</nav><p>Para</p><script>s()</script><div hidden>Hid</div><iframe src="/x"></iframe><!-- c --></body>`)
	got := htmlnode.Text(Full(doc))
	if got != "Nav Para" {
		t.Errorf("got %q, want %q", got, "Nav Para")
	}
}

func TestNoBody(t *testing.T) {
	doc := &html.Node{Type: html.DocumentNode}
	if Article(doc) != nil || Full(doc) != nil {
		t.Error("want nil without a body")
	}
}

func TestWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"postComments_list", []string{"post", "comments", "list"}},
		{"social-share2x", []string{"social", "share", "x"}},
		{"ABC", []string{"abc"}},
		{"", nil},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := words(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("words(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestHintIsFurniture(t *testing.T) {
	tests := []struct {
		hint string
		want bool
	}{
		{"comments-area", true},
		{"relatedArticles", true},
		{"ad", true},
		{"top-ads", true},
		{"cookieConsent", true},
		{"address", false},
		{"header-admin", false},
		{"article-body", false},
		{"download", false},
	}
	for _, tt := range tests {
		t.Run(tt.hint, func(t *testing.T) {
			if got := hintIsFurniture(tt.hint); got != tt.want {
				t.Errorf("hintIsFurniture(%q) = %v, want %v", tt.hint, got, tt.want)
			}
		})
	}
}
