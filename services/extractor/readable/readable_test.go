package readable

import (
	"context"
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
	t.Parallel()
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
			present: []string{"Kept Heading", "The body report"},
			absent:  []string{"Share", "comment report", "related report", "Advertisement", "new window", "Previous", "Aside text", "Go", "t1", "Article footer"},
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
			name: "a wrapper named for the sidebar around the article is read",
			page: `<body><div class="menu">` + strings.Repeat(`<a href="/x">Section link</a> `, 60) + `</div>
<div class="box"><p>` + prose("box", 1) + `</p></div>
<div class="theiaStickySidebar"><div class="entry"><p>` + prose("sticky", 4) + `</p><p>` + prose("sticky two", 4) + `</p></div></div>
<footer>` + strings.Repeat(`<a href="/y">Footer link</a> `, 60) + `</footer></body>`,
			present: []string{"The sticky report", "The sticky two report"},
			absent:  []string{"box report", "Section link"},
		},
		{
			name: "a copy of the article in a dialog does not make its wrapper's name count",
			page: `<body><article class="post"><div class="sidebar-layout"><div class="wrap"><div class="sidebar-content"><p>` + prose("shared", 5) + `</p><p>` + prose("shared two", 5) + `</p></div>
<div class="republish" style="display:none" role="dialog" aria-modal="true"><p>Republish this story under a free licence:</p><p>` + prose("shared", 5) + `</p><p>` + prose("shared two", 5) + `</p><p>` + prose("credit line", 14) + `</p></div></div></div></article></body>`,
			present: []string{"The shared report", "The shared two report"},
			absent:  []string{"Republish", "credit line"},
		},
		{
			name:    "blog taxonomy classes do not name the post",
			page:    `<body><div class="post hentry category-native-advertising tag-comments"><p>` + prose("filed", 4) + `</p><p>` + prose("filed two", 4) + `</p></div></body>`,
			present: []string{"The filed report", "The filed two report"},
		},
		{
			name: "an article split over deep wrappers is joined",
			page: `<body><div id="post"><div class="chunk"><section><div class="wrap"><p>` + prose("first part", 6) + `</p><p>` + prose("first more", 6) + `</p></div></section></div>
<div class="quote"><blockquote>A pull quote.</blockquote></div>
<div class="chunk"><section><div class="wrap"><p>` + prose("second part", 4) + `</p><p>` + prose("second more", 4) + `</p></div></section></div></div>
<div class="more"><ul>` + strings.Repeat(`<li><a href="/t">A teaser headline that links away</a><p>`+prose("teaser", 1)+`</p></li>`, 3) + `</ul></div></body>`,
			present: []string{"The first part report", "The second part report", "The second more report"},
			absent:  []string{"teaser report"},
		},
		{
			name: "a list of other posts loses to the post with the headline",
			page: `<body><article class="post"><h1>The Headline</h1><p>` + prose("short post", 5) + `</p></article>
<article class="more"><h3>You may like</h3>` + strings.Repeat(`<article class="card"><p>`+prose("card", 3)+`</p></article>`, 6) + `</article></body>`,
			present: []string{"The Headline", "The short post report"},
			absent:  []string{"card report", "You may like"},
		},
		{
			name:    "an embedded post is quoted content",
			page:    `<body><article><p>` + prose("embed", 3) + `</p><div class="social-media-embed"><blockquote class="twitter-tweet"><p>What a day for the valley. pic.twitter.com/x</p>— A Person (@person) November 18, 2019</blockquote></div><p>` + prose("after", 2) + `</p></article></body>`,
			present: []string{"What a day for the valley", "The after report"},
		},
		{
			name:    "links inside a sentence stay whatever their names say",
			page:    `<body><article><p>The actress <a id="auto-tag_mary" href="/t/mary">Mary Steenburgen</a> wrote the song, and ` + prose("tagged", 3) + `</p></article></body>`,
			present: []string{"The actress Mary Steenburgen wrote the song"},
		},
		{
			name:    "a figure keeps its picture and loses its caption and credit",
			page:    `<body><article><p>` + prose("pictured", 3) + `</p><figure><img src="/a.jpg" alt="A river"><p>The river at dawn.</p><span>Photo: Someone</span></figure><p>` + prose("below", 2) + `</p></article></body>`,
			present: []string{"The pictured report", "The below report"},
			absent:  []string{"river at dawn", "Photo: Someone"},
		},
		{
			name:    "a header keeps the title and loses the kicker, dek and byline",
			page:    `<body><article><header><a class="kicker" href="/tech">Tech</a><h1>Rivers Rise</h1><h2 class="article-dek">Three rivers passed their flood marks over the weekend.</h2><p class="byline">By Jane Doe</p><time>Nov. 19, 2019</time></header><p>` + prose("headed", 4) + `</p></article></body>`,
			present: []string{"Rivers Rise", "The headed report"},
			absent:  []string{"Tech", "flood marks", "Jane Doe", "2019"},
		},
		{
			name: "labels of furniture go with it",
			page: `<body><article><p>` + prose("labelled", 3) + `</p><h4>More:</h4><ul class="links"><li><a href="/1">One story</a></li><li><a href="/2">Two story</a></li><li><a href="/3">Three story</a></li></ul>
<p>` + prose("labelled two", 3) + `</p><p>ADVERTISEMENT</p><div class="ad-slot"></div><p>` + prose("labelled three", 3) + `</p><p>Related posts:</p></article></body>`,
			present: []string{"The labelled report", "The labelled two report", "The labelled three report"},
			absent:  []string{"More:", "One story", "ADVERTISEMENT", "Related posts"},
		},
		{
			name: "names on every part of the article are the page's vocabulary",
			page: `<body><article class="report"><section class="report__section--ads"><p>` + prose("vocab one", 4) + `</p></section>
<section class="report__section--ads"><p>` + prose("vocab two", 4) + `</p></section><section class="report__section--ads"><p>` + prose("vocab three", 4) + `</p></section>
<div class="ad-slot"><p>Buy now</p></div></article></body>`,
			present: []string{"The vocab one report", "The vocab two report", "The vocab three report"},
			absent:  []string{"Buy now"},
		},
		{
			name: "on a short page a box named text does not beat the article",
			page: `<body><div class="top"><div class="ce_text">Lorem ipsum dolor sit amet, consectetuer adipiscing elit, sed diam nonummy nibh euismod tincidunt ut laoreet dolore magna aliquam erat volutpat.</div></div>
<div class="news"><div class="item"><p>` + strings.Repeat("The valley road was closed for the whole week while crews repaired the old bridge. ", 6) + `</p></div></div></body>`,
			present: []string{"The valley road was closed"},
			absent:  []string{"Lorem ipsum"},
		},
		{
			name: "a lead paragraph in a box of its own beside the text is joined",
			page: `<body><div class="wrap"><div class="lead">Three people have died during protests in the valley after clashes between marchers and police on Friday night.</div>
<div class="text"><p>` + prose("led", 4) + `</p><p>` + prose("led two", 4) + `</p></div></div><div class="rail"><p>Other things</p></div></body>`,
			present: []string{"Three people have died", "The led report", "The led two report"},
			absent:  []string{"Other things"},
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
			t.Parallel()
			content, _ := Article(context.Background(), parse(t, tt.page))
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
	t.Parallel()
	page := `<body><div id="wrap"><div class="para-block"><p>` + prose("first", 5) + `</p><p>` + prose("second", 5) + `</p></div>
<p>` + prose("sibling paragraph", 1) + `</p>
<div class="para-block"><p>` + prose("third", 5) + `</p></div>
<div class="menu"><a href="/a">a</a></div></div></body>`
	content, _ := Article(context.Background(), parse(t, page))
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
	t.Parallel()
	doc := parse(t, `<body><nav>Nav</nav><p>Para</p><script>s()</script><div hidden>Hid</div><iframe src="/x"></iframe><!-- c --></body>`)
	got := htmlnode.Text(Full(doc))
	if got != "Nav Para" {
		t.Errorf("got %q, want %q", got, "Nav Para")
	}
}

func TestNoBody(t *testing.T) {
	t.Parallel()
	doc := &html.Node{Type: html.DocumentNode}
	if a, _ := Article(context.Background(), doc); a != nil || Full(doc) != nil {
		t.Error("want nil without a body")
	}
}

// words returns the words eachWord gives.
func words(hint string) []string {
	var out []string
	eachWord(hint, func(w []byte) { out = append(out, string(w)) })
	return out
}

func TestWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want []string
	}{
		{"postComments_list", []string{"post", "comments", "list"}},
		{"social-share2x", []string{"social", "share", "x"}},
		{"ABC", []string{"abc"}},
		{"", nil},
		// Generated names say nothing: the "ad" of jXK9ad is no advert.
		{"jXK9ad", nil},
		{"zu5ue-D2fZ2", nil},
		{"main-qWD73c", []string{"main"}},
		{"ad300x250", []string{"ad", "x"}},
		{"h2title", []string{"h", "title"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			if got := words(tt.in); !slices.Equal(got, tt.want) {
				t.Errorf("words(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestHintOf(t *testing.T) {
	t.Parallel()
	tests := []struct {
		hint string
		want bool
	}{
		{"comments-area", true},
		{"relatedArticles", true},
		{"ad", true},
		{"top-ads", true},
		{"cookieConsent", true},
		{"post-share-bar", true},
		{"most_read", true},
		{"has-sidebar", false},
		{"no-comments", false},
		{"elementor-widget-text-editor", true},
		{"address", false},
		{"header-admin", false},
		{"article-body", false},
		{"download", false},
	}
	for _, tt := range tests {
		t.Run(tt.hint, func(t *testing.T) {
			t.Parallel()
			n := &html.Node{Type: html.ElementNode, Data: "div", Attr: []html.Attribute{{Key: "class", Val: tt.hint}}}
			if got := hintOf(n)&(hintUnlikely|hintFurniture|hintComments) != 0; got != tt.want {
				t.Errorf("hintOf(%q) furniture = %v, want %v", tt.hint, got, tt.want)
			}
		})
	}
}

func TestHintOfClasses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		class string
		want  hint
	}{
		{"entry-content", hintContent},
		{"article__byline", hintContent | hintMeta},
		{"sub-headline", hintMeta},
		{"post type-post category-advertising tag-comments", hintContent},
		{"comment-body", hintComments | hintContent},
		{"theiaStickySidebar", hintUnlikely},
	}
	for _, tt := range tests {
		t.Run(tt.class, func(t *testing.T) {
			t.Parallel()
			n := &html.Node{Type: html.ElementNode, Data: "div", Attr: []html.Attribute{{Key: "class", Val: tt.class}}}
			if got := hintOf(n); got != tt.want {
				t.Errorf("hintOf(%q) = %05b, want %05b", tt.class, got, tt.want)
			}
		})
	}
}

func TestTrim(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		page    string
		present []string
		absent  []string
	}{
		{
			name: "labels before the text go, a sentence stays",
			page: `<div><div class="top"><p>Personal Technology</p><p>Updated 1:39 am EST, November 20, 2019</p></div>
<p>Good morning! Here is the news.</p><p>` + prose("lead", 3) + `</p></div>`,
			present: []string{"Good morning!", "The lead report"},
			absent:  []string{"Personal Technology", "Updated"},
		},
		{
			name:    "an author line goes even beside the text",
			page:    `<div><p>By Jane Doe</p><p>` + prose("authored", 3) + `</p></div>`,
			present: []string{"The authored report"},
			absent:  []string{"Jane Doe"},
		},
		{
			name: "labels after the text go, the article's own short lines stay",
			page: `<div><div class="body"><p>` + prose("closing", 3) + `</p><p>Palm Bay 18 22 13 17</p><ul><li>First item</li><li>Second item</li></ul></div>
<div class="foot"><p>Filed under: Rivers</p><h3>Elsewhere</h3></div></div>`,
			present: []string{"The closing report", "Palm Bay 18 22 13 17", "First item", "Second item"},
			absent:  []string{"Filed under", "Elsewhere"},
		},
		{
			name:    "sign-offs after the text go",
			page:    `<div><p>` + prose("signed", 3) + `</p><p>He was 78.</p><p>Follow us on Twitter and Facebook for more stories like this one from the valley.</p><p>Reporting by Jane Doe; Editing by John Roe.</p></div>`,
			present: []string{"The signed report", "He was 78."},
			absent:  []string{"Follow us", "Reporting by"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc := parse(t, "<body>"+tt.page+"</body>")
			content := htmlnode.First(doc, "body").FirstChild
			trim(content, measure(content))
			text := htmlnode.Text(content)
			for _, s := range tt.present {
				if !strings.Contains(text, s) {
					t.Errorf("lacks %q: %q", s, text)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(text, s) {
					t.Errorf("still has %q: %q", s, text)
				}
			}
		})
	}
}

func TestHasDate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want bool
	}{
		{"Nov. 19, 2019", true},
		{"Updated 10:01 pm PST", true},
		{"05/10/2018 - Publicado por", true},
		{"Chapter 12345", false},
		{"Top 10 tips", false},
		{"Room 2101", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			if got := hasDate(tt.in); got != tt.want {
				t.Errorf("hasDate(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}
