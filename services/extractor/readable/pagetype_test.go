package readable

import (
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/net/html"

	"distill.dev/services/extractor/internal/htmlnode"
)

// TestClassifyDeclared checks what decides a page's type alone, whatever
// the model would say: structured data declaring a forum post or a Q&A
// page, a forum engine's script, and too little text for any type.
func TestClassifyDeclared(t *testing.T) {
	t.Parallel()
	prose := "<p>" + strings.Repeat("Plain words make up this paragraph of running text, long enough to read as prose. ", 4) + "</p>"
	tests := []struct {
		name, head, body, url string
		want                  PageType
		uncertain             bool
	}{
		{name: "forum posting JSON-LD", head: ld(`{"@type":"DiscussionForumPosting"}`), body: prose, want: TypeForum},
		{name: "Q&A page in a graph", head: ld(`{"@graph":[{"@type":"WebSite"},{"@type":"QAPage"}]}`), body: prose, want: TypeForum},
		{name: "forum engine script", url: "https://example.net/viewtopic.php?t=12", body: prose, want: TypeForum},
		{name: "nearly empty", head: ld(`{"@type":"Product"}`), body: "-", want: TypeOther, uncertain: true},
		{name: "an error page's line", head: ld(`{"@type":"DiscussionForumPosting"}`), body: "<p>Not found.</p>", want: TypeOther, uncertain: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc, err := html.Parse(strings.NewReader("<html><head>" + tt.head + "</head><body>" + tt.body + "</body></html>"))
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

// TestClassifyPages checks the model's decisions on our own pages of each
// kind: a news story, a journal's index of dated posts, a landing page of
// sections, two documentation pages, and the pages the extractor's own
// page-type tests draw.
func TestClassifyPages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		page, url string
		want      PageType
	}{
		{"pagetype/article.html", "https://valleycourier.example.com/news/2025/04/14/town-votes-to-reopen-the-river-ferry/", TypeArticle},
		{"pagetype/listing.html", "https://fieldside.example.com/journal/", TypeListing},
		{"pagetype/landing.html", "https://ledgerline.example.com/", TypeService},
		{"docs/sidebar.html", "https://fetchkit.example.dev/docs/guides/retries/", TypeDocumentation},
		{"docs/manual.html", "https://tally.example.org/manual/3.1/storage/compacting.html", TypeDocumentation},
	}
	for _, tt := range tests {
		t.Run(tt.page, func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(filepath.Join("testdata", tt.page))
			if err != nil {
				t.Fatal(err)
			}
			doc, err := html.Parse(strings.NewReader(string(b)))
			if err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			ShowNoscript(doc)
			if got := Classify(doc, u); got.Type != tt.want {
				t.Errorf("Classify = %s (uncertain %t), want %s", got.Type, got.Uncertain, tt.want)
			}
		})
	}
}

// TestModel checks that the embedded model reads the inputs Features
// gives, in their order, and that its decisions are well formed.
func TestModel(t *testing.T) {
	t.Parallel()
	names := FeatureNames()
	if !slices.Equal(typeModel.Features, names) {
		t.Fatalf("the model was trained on %v,\nFeatures gives %v: retrain it (make train-pagetype)", typeModel.Features, names)
	}
	if len(typeModel.Mean) != len(names) || len(typeModel.Scale) != len(names) {
		t.Fatalf("%d means and %d scales for %d inputs", len(typeModel.Mean), len(typeModel.Scale), len(names))
	}
	if len(typeModel.Weights) != len(typeModel.Classes) || len(typeModel.Utility) != len(typeModel.Classes) {
		t.Fatalf("%d weight rows and %d utility rows for %d classes", len(typeModel.Weights), len(typeModel.Utility), len(typeModel.Classes))
	}
	for c := range typeModel.Classes {
		if len(typeModel.Weights[c]) != len(names)+1 || len(typeModel.Utility[c]) != len(draws) {
			t.Fatalf("class %s: %d weights, %d utilities", typeModel.Classes[c], len(typeModel.Weights[c]), len(typeModel.Utility[c]))
		}
	}
	doc, err := html.Parse(strings.NewReader("<p>" + strings.Repeat("Words of a page. ", 40) + "</p>"))
	if err != nil {
		t.Fatal(err)
	}
	x := Features(doc, nil)
	if len(x) != len(names) {
		t.Fatalf("Features gave %d values for %d names", len(x), len(names))
	}
	p := typeModel.Probabilities(x)
	sum := 0.0
	for _, v := range p {
		if v < 0 || v > 1 || math.IsNaN(v) {
			t.Fatalf("probabilities %v", p)
		}
		sum += v
	}
	if math.Abs(sum-1) > 1e-9 {
		t.Errorf("probabilities sum to %v", sum)
	}
}

// TestDecide checks the choice of draw on a model with two classes whose
// draws score as given.
func TestDecide(t *testing.T) {
	t.Parallel()
	// Utility rows: article, article?, forum, product, collection, documentation.
	m := &Model{
		Classes: []PageType{TypeArticle, TypeListing},
		Utility: [][]float64{
			{0.94, 0.95, 0.90, 0.90, 0.90, 0.90},
			{0.40, 0.70, 0.70, 0.70, 0.72, 0.70},
		},
	}
	for _, tt := range []struct {
		p           []float64
		classify    Page
		decide      Page
		whyClassify string
	}{
		{[]float64{0.9, 0.1}, Page{Type: TypeArticle, Uncertain: true}, Page{Type: TypeArticle, Uncertain: true}, "the hedged draw promises more"},
		{[]float64{0.1, 0.9}, Page{Type: TypeListing}, Page{Type: TypeListing}, "the list's wide draw promises most"},
		{[]float64{0.45, 0.55}, Page{Type: TypeListing, Uncertain: true}, Page{Type: TypeListing, Uncertain: true}, "a near tie: hedging promises more than the list's draw"},
	} {
		if got := m.Classify(tt.p); got != tt.classify {
			t.Errorf("Classify(%v) = %+v, want %+v: %s", tt.p, got, tt.classify, tt.whyClassify)
		}
		if got := m.Decide(tt.p); got != tt.decide {
			t.Errorf("Decide(%v) = %+v, want %+v", tt.p, got, tt.decide)
		}
	}
}

// TestDecideWeighsTheDraws checks Decide on a model with this corpus's
// classes and draws scoring about as they do on it.
func TestDecideWeighsTheDraws(t *testing.T) {
	t.Parallel()
	// Utility columns: article, article?, forum, product, collection, documentation.
	m := &Model{
		Classes: []PageType{TypeArticle, TypeForum, TypeProduct, TypeCollection, TypeDocumentation, TypeService},
		Utility: [][]float64{
			{0.948, 0.950, 0.918, 0.927, 0.927, 0.926},
			{0.624, 0.648, 0.741, 0.655, 0.655, 0.645},
			{0.595, 0.624, 0.625, 0.639, 0.627, 0.617},
			{0.509, 0.620, 0.687, 0.687, 0.687, 0.683},
			{0.911, 0.920, 0.926, 0.926, 0.926, 0.936},
			{0.699, 0.789, 0.830, 0.814, 0.814, 0.817},
		},
		ArticleOdds: 1.5,
	}
	for _, tt := range []struct {
		p    []float64
		want Page
		why  string
	}{
		{[]float64{0.42, 0.48, 0, 0.01, 0.06, 0.03}, Page{Type: TypeForum}, "a thread the model is torn on keeps its replies"},
		{[]float64{0.30, 0.25, 0, 0.05, 0.05, 0.35}, Page{Type: TypeService}, "the thread's draw is not for a page likelier to be something else"},
		{[]float64{0.10, 0, 0.20, 0.45, 0.25, 0.0}, Page{Type: TypeCollection}, "a wide draw reports the likeliest type drawn wide"},
		{[]float64{0.05, 0, 0.10, 0.05, 0.30, 0.50}, Page{Type: TypeService}, "a manual's draw is not for a page likelier to be a service"},
		{[]float64{0.05, 0, 0, 0.05, 0.80, 0.10}, Page{Type: TypeDocumentation}, "a manual"},
	} {
		if got := m.Decide(tt.p); got != tt.want {
			t.Errorf("Decide(%v) = %+v, want %+v: %s", tt.p, got, tt.want, tt.why)
		}
	}
	// Classify's thumb on an article's scale reads the torn thread as an
	// article; the reader reads it as a thread, and a page likelier to be
	// an article as Classify does.
	torn := []float64{0.42, 0.48, 0, 0.01, 0.06, 0.03}
	if got := m.Classify(torn); got.Type != TypeArticle {
		t.Errorf("Classify of the torn thread = %+v; the case no longer shows what read mends", got)
	}
	if got := m.read(torn); got != (Page{Type: TypeForum}) {
		t.Errorf("read of the torn thread = %+v, want a thread", got)
	}
	if p := []float64{0.50, 0.40, 0, 0.01, 0.06, 0.03}; m.read(p) != m.Classify(p) {
		t.Errorf("read(%v) = %+v, Classify %+v", p, m.read(p), m.Classify(p))
	}
}

// TestNamesDate checks what reads as a date on a card.
func TestNamesDate(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"14 April 2025": true, "Mar 3, 2024": true, "posted 2024-05-01": true, "1.5.2024": true,
		"12/31/1999 at noon": true, "version 1.2.3": false, "may we help": false, "12 items": false,
		"Decimals 3.14.15": false, "Mayday 5": false, "September 9, 2001": true, "Sept. 9": true, "": false,
	} {
		if got := namesDate(s); got != want {
			t.Errorf("namesDate(%q) = %t, want %t", s, got, want)
		}
	}
}

// TestCardsIn checks the lists of cards the classifier counts, and what
// it notes of them.
func TestCardsIn(t *testing.T) {
	t.Parallel()
	card := func(extra string) string {
		return `<div class="c"><h3><a href="/x">A title</a></h3><p>` + extra + `</p></div>`
	}
	for _, tt := range []struct {
		name, body    string
		ok            bool
		dated, priced bool
		run           int
	}{
		{"plain", strings.Repeat(card("words"), 7), true, false, false, 7},
		{"dated", strings.Repeat(card("3 May 2024"), 6), true, true, false, 6},
		{"priced", strings.Repeat(card("$12.00"), 6), true, false, true, 6},
		{"too few", strings.Repeat(card("words"), 5), false, false, false, 0},
		{"no links", strings.Repeat(`<div class="c"><h3>A title</h3></div>`, 8), false, false, false, 0},
		{"mixed classes", strings.Repeat(card("words")+`<div class="d"><a href="/">x</a><img src="a.png"></div>`, 4), false, false, false, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := html.Parse(strings.NewReader(`<body><div id="list">` + tt.body + `</div></body>`))
			if err != nil {
				t.Fatal(err)
			}
			var list *html.Node
			for _, n := range htmlnode.Elements(doc, "div") {
				if htmlnode.Attr(n, "id") == "list" {
					list = n
				}
			}
			got, ok := cardsIn(list)
			if ok != tt.ok || got.dated != tt.dated || got.priced != tt.priced || got.run != tt.run {
				t.Errorf("cardsIn = %+v, %t; want run %d dated %t priced %t, %t", got, ok, tt.run, tt.dated, tt.priced, tt.ok)
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

func TestNonSpaceCountsAsUnicodeDoes(t *testing.T) {
	for _, s := range []string{"", " a b\tc\n", "\u00a0x\u0085y\u2003z", "naïve café", "\xff\xfe ok", "中文，字、", "\v\f\r"} {
		want := 0
		for _, r := range s {
			if !unicode.IsSpace(r) {
				want++
			}
		}
		if got := nonSpace(s); got != want {
			t.Errorf("nonSpace(%q) = %d, want %d", s, got, want)
		}
	}
}
