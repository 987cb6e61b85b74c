package pick

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"google.golang.org/protobuf/proto"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// fixtureBase is where the fixture pages pretend to come from.
var fixtureBase, _ = url.Parse("https://shop.example/guides/")

func parseFixture(t *testing.T, name string) *html.Node {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := html.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func pickFixture(t *testing.T, name string, opts *distillv1.FetchOptions) *distillv1.Picked {
	t.Helper()
	p, err := Compile(opts)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	got, err := p.Run(context.Background(), parseFixture(t, name), fixtureBase)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return got
}

// brief writes a result the way a reader checks it: the values, the
// records as name=value (a missing value as name=null), the elements as
// "selector | text", then the similar selector and the count left out.
func brief(p *distillv1.Picked) []string {
	var out []string
	out = append(out, p.GetValues()...)
	for _, r := range p.GetRecords() {
		var fs []string
		for _, f := range r.GetFields() {
			v := "null"
			if f.Value != nil {
				v = f.GetValue()
			}
			fs = append(fs, f.GetName()+"="+v)
		}
		out = append(out, strings.Join(fs, " "))
	}
	for _, e := range p.GetElements() {
		out = append(out, e.GetSelector()+" | "+e.GetText())
	}
	switch s := p.GetScalar().(type) {
	case *distillv1.Picked_Number:
		out = append(out, fmt.Sprintf("number %v", s.Number))
	case *distillv1.Picked_String_:
		out = append(out, fmt.Sprintf("string %q", s.String_))
	case *distillv1.Picked_Boolean:
		out = append(out, fmt.Sprintf("boolean %v", s.Boolean))
	}
	if p.Selector != nil {
		out = append(out, "selector: "+p.GetSelector())
	}
	if p.GetOmitted() > 0 {
		out = append(out, fmt.Sprintf("omitted: %d", p.GetOmitted()))
	}
	return out
}

func fields(kv ...string) []*distillv1.PickField {
	var out []*distillv1.PickField
	for _, s := range kv {
		name, sel, _ := strings.Cut(s, "=")
		out = append(out, &distillv1.PickField{Name: name, Selector: sel})
	}
	return out
}

type pickCase struct {
	name string
	page string
	opts *distillv1.FetchOptions
	kind distillv1.PickedKind
	want []string
}

func runCases(t *testing.T, cases []pickCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := pickFixture(t, tt.page, tt.opts)
			if got.GetKind() != tt.kind {
				t.Errorf("kind %v, want %v", got.GetKind(), tt.kind)
			}
			if b := brief(got); !slices.Equal(b, tt.want) {
				t.Errorf("picked:\n  %s\nwant:\n  %s", strings.Join(b, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

func TestSelect(t *testing.T) {
	t.Parallel()
	values, records := distillv1.PickedKind_PICKED_KIND_VALUES, distillv1.PickedKind_PICKED_KIND_RECORDS
	runCases(t, []pickCase{
		{name: "text of each match", page: "grid.html", opts: &distillv1.FetchOptions{Select: ".price_color"}, kind: values,
			// The hidden one too: a selector picks what it names.
			want: []string{"£51.77", "£23.10", "£57.25", "£9.99", "£0.00"}},
		{name: "links come back absolute", page: "grid.html", opts: &distillv1.FetchOptions{Select: "h3 a::attr(href)"}, kind: values,
			want: []string{"https://shop.example/guides/tide-pools", "https://shop.example/guides/kelp", "https://shop.example/guides/guides/anemones", "https://shop.example/guides/shore-birds"}},
		{name: "other attributes as written", page: "grid.html", opts: &distillv1.FetchOptions{Select: "img::attr(alt)"}, kind: values,
			want: []string{"Tide Pools of the North", "Kelp Forests", "Anemones", "Shore Birds"}},
		{name: "a match without the attribute has no value", page: "grid.html", opts: &distillv1.FetchOptions{Select: "p::attr(class)"}, kind: values,
			want: []string{"price_color", "availability instock", "price_color", "availability instock", "price_color", "availability", "price_color", "availability instock", "price_color"}},
		{name: "own text keeps the code's lines", page: "docs.html", opts: &distillv1.FetchOptions{Select: "pre code::text"}, kind: values,
			want: []string{"go install example.com/tidectl@latest\ntidectl version"}},
		{name: "own text leaves the children's out", page: "grid.html", opts: &distillv1.FetchOptions{Select: "li:nth-of-type(3) .availability::text"}, kind: values,
			want: []string{"Out of"}},
		{name: "html", page: "docs.html", opts: &distillv1.FetchOptions{Select: ".note::html"}, kind: values,
			want: []string{`<div class="note"><p>Tide tables are <em>predictions</em>, not measurements.</p></div>`}},
		{name: "records take the first value or null", page: "grid.html",
			opts: &distillv1.FetchOptions{Select: "article.product_pod", Fields: fields("title=h3 a::attr(title)", "price=.price_color", "url=a::attr(href)", "sale=.sale")}, kind: records,
			want: []string{
				"title=Tide Pools of the North price=£51.77 url=https://shop.example/guides/tide-pools sale=null",
				"title=Kelp Forests price=£23.10 url=https://shop.example/guides/kelp sale=null",
				"title=Anemones, a Life in the Shallows price=£57.25 url=https://shop.example/guides/guides/anemones sale=null",
				"title=Shore Birds price=£9.99 url=https://shop.example/guides/shore-birds sale=null",
			}},
		{name: "a bare pseudo-element field takes from the match", page: "wiki.html",
			opts: &distillv1.FetchOptions{Select: "ul:nth-of-type(2) a", Fields: fields("name=::text", "href=::attr(href)")}, kind: records,
			want: []string{"name=Tide href=https://shop.example/wiki/Tide", "name=Rocky shore href=https://shop.example/wiki/Rocky_shore"}},
		{name: "table cells", page: "docs.html", opts: &distillv1.FetchOptions{Select: "table.flags tbody tr", Fields: fields("flag=td:nth-child(1)", "default=td:nth-child(2)")}, kind: records,
			want: []string{"flag=--station default=none", "flag=--days default=7", "flag=--units default=metric"}},
		{name: "max_matches counts the rest", page: "wiki.html", opts: &distillv1.FetchOptions{Select: "#bodyContent a::attr(href)", MaxMatches: proto.Int32(3)}, kind: values,
			want: []string{"https://shop.example/wiki/Seawater", "https://shop.example/wiki/Intertidal_zone", "https://shop.example/wiki/Anemone", "omitted: 7"}},
		{name: "no match", page: "wiki.html", opts: &distillv1.FetchOptions{Select: "table"}, kind: values, want: nil},
	})
}

func TestXPath(t *testing.T) {
	t.Parallel()
	values, records, scalar := distillv1.PickedKind_PICKED_KIND_VALUES, distillv1.PickedKind_PICKED_KIND_RECORDS, distillv1.PickedKind_PICKED_KIND_SCALAR
	runCases(t, []pickCase{
		{name: "attribute", page: "grid.html", opts: &distillv1.FetchOptions{Xpath: "//li[@class='next']/a/@href"}, kind: values,
			want: []string{"https://shop.example/guides/?page=2"}},
		{name: "elements give their visible text", page: "grid.html", opts: &distillv1.FetchOptions{Xpath: "//p[contains(@class, 'availability')]"}, kind: values,
			want: []string{"In stock", "In stock", "Out of stock", "In stock"}},
		{name: "text nodes, without the blank ones", page: "docs.html", opts: &distillv1.FetchOptions{Xpath: "//table[1]//td/text()"}, kind: values,
			want: []string{"none", "Station ID to predict for", "7", "How many days ahead", "metric", "metric or imperial"}},
		{name: "count", page: "grid.html", opts: &distillv1.FetchOptions{Xpath: "count(//article)"}, kind: scalar, want: []string{"number 4"}},
		{name: "string", page: "docs.html", opts: &distillv1.FetchOptions{Xpath: "string(//h1)"}, kind: scalar, want: []string{`string "tidectl reference"`}},
		{name: "boolean", page: "docs.html", opts: &distillv1.FetchOptions{Xpath: "count(//table) > 1"}, kind: scalar, want: []string{"boolean true"}},
		{name: "records from the match", page: "grid.html",
			opts: &distillv1.FetchOptions{Xpath: "//article", Fields: fields("title=.//h3/a/@title", "price=.//p[@class='price_color']", "lines=count(.//p)", "sale=.//em")}, kind: records,
			want: []string{
				"title=Tide Pools of the North price=£51.77 lines=2 sale=null",
				"title=Kelp Forests price=£23.10 lines=2 sale=null",
				"title=Anemones, a Life in the Shallows price=£57.25 lines=2 sale=null",
				"title=Shore Birds price=£9.99 lines=2 sale=null",
			}},
		{name: "max_matches", page: "wiki.html", opts: &distillv1.FetchOptions{Xpath: "//li/a", MaxMatches: proto.Int32(2)}, kind: values,
			want: []string{"Spray zone", "High tide zone", "omitted: 3"}},
	})
}

func TestFind(t *testing.T) {
	t.Parallel()
	elements := distillv1.PickedKind_PICKED_KIND_ELEMENTS
	runCases(t, []pickCase{
		{name: "any case, the deepest element", page: "grid.html", opts: &distillv1.FetchOptions{FindText: "kelp FORESTS"}, kind: elements,
			want: []string{"#catalogue > ol > li:nth-of-type(2) > article > h3 > a | Kelp Forests"}},
		{name: "text split by inline tags", page: "grid.html", opts: &distillv1.FetchOptions{FindText: "out of  stock"}, kind: elements,
			want: []string{"#catalogue > ol > li:nth-of-type(3) > article > p:nth-of-type(2) | Out of stock"}},
		{name: "regex", page: "grid.html", opts: &distillv1.FetchOptions{FindRegex: `^£5\d\.\d\d$`}, kind: elements,
			want: []string{
				"#catalogue > ol > li:nth-of-type(1) > article > p:nth-of-type(1) | £51.77",
				"#catalogue > ol > li:nth-of-type(3) > article > p:nth-of-type(1) | £57.25",
			}},
		{name: "hidden text and scripts are not found", page: "grid.html", opts: &distillv1.FetchOptions{FindText: "£0.00"}, kind: elements, want: nil},
		{name: "exact", page: "docs.html", opts: &distillv1.FetchOptions{FindText: "7", Exact: true}, kind: elements,
			want: []string{"html > body > div:nth-of-type(2) > table:nth-of-type(1) > tbody > tr:nth-of-type(2) > td:nth-of-type(2) | 7"}},
		{name: "case sensitive", page: "wiki.html", opts: &distillv1.FetchOptions{FindText: "TIDE", CaseSensitive: true}, kind: elements,
			want: []string{"#bodyContent > p:nth-of-type(4) | Second paragraph with a shared id: the TIDE turns."}},
		{name: "an id on two elements is no anchor", page: "wiki.html", opts: &distillv1.FetchOptions{FindText: "first paragraph"}, kind: elements,
			want: []string{"#bodyContent > p:nth-of-type(3) | First paragraph with a shared id."}},
		{name: "deep, across inline tags", page: "wiki.html", opts: &distillv1.FetchOptions{FindText: "high water mark"}, kind: elements,
			want: []string{"#bodyContent > div > div > section > div > p | Pools near the high water mark are warmer."}},
		{name: "every deepest match", page: "wiki.html", opts: &distillv1.FetchOptions{FindText: "tide", MaxMatches: proto.Int32(3)}, kind: elements,
			want: []string{
				"#bodyContent > p:nth-of-type(1) > b:nth-of-type(2) | tide pool",
				"#bodyContent > ul:nth-of-type(1) > li:nth-of-type(2) > a | High tide zone",
				"#bodyContent > ul:nth-of-type(1) > li:nth-of-type(3) > a | Low tide zone",
				"omitted: 2",
			}},
	})
}

func TestSimilar(t *testing.T) {
	t.Parallel()
	elements, records := distillv1.PickedKind_PICKED_KIND_ELEMENTS, distillv1.PickedKind_PICKED_KIND_RECORDS
	gridTitles := []string{
		"#catalogue > ol > li:nth-of-type(1) > article > h3 > a | Tide Pools of the…",
		"#catalogue > ol > li:nth-of-type(2) > article > h3 > a | Kelp Forests",
		"#catalogue > ol > li:nth-of-type(3) > article > h3 > a | Anemones, a Life…",
		"#catalogue > ol > li:nth-of-type(4) > article > h3 > a | Shore Birds",
		"selector: h3 > a",
	}
	runCases(t, []pickCase{
		{name: "from found text: the other cards' titles", page: "grid.html", opts: &distillv1.FetchOptions{FindText: "Kelp Forests", Similar: true}, kind: elements, want: gridTitles},
		{name: "from a selector's attribute: its element", page: "grid.html", opts: &distillv1.FetchOptions{Select: "h3 a::attr(href)", Similar: true}, kind: elements, want: gridTitles},
		{name: "from an XPath attribute: its element", page: "grid.html", opts: &distillv1.FetchOptions{Xpath: "//h3/a/@title", Similar: true}, kind: elements, want: gridTitles},
		{name: "the item itself, as records", page: "grid.html",
			opts: &distillv1.FetchOptions{Select: "article.product_pod", Similar: true, Fields: fields("title=h3 a::attr(title)", "price=.price_color")}, kind: records,
			want: []string{
				"title=Tide Pools of the North price=£51.77",
				"title=Kelp Forests price=£23.10",
				"title=Anemones, a Life in the Shallows price=£57.25",
				"title=Shore Birds price=£9.99",
				"selector: article.product_pod",
			}},
		{name: "a cell: the same column of every row", page: "docs.html", opts: &distillv1.FetchOptions{FindText: "how many days ahead", Similar: true}, kind: elements,
			want: []string{
				"html > body > div:nth-of-type(2) > table:nth-of-type(1) > tbody > tr:nth-of-type(1) > td:nth-of-type(3) | Station ID to predict for",
				"html > body > div:nth-of-type(2) > table:nth-of-type(1) > tbody > tr:nth-of-type(2) > td:nth-of-type(3) | How many days ahead",
				"html > body > div:nth-of-type(2) > table:nth-of-type(1) > tbody > tr:nth-of-type(3) > td:nth-of-type(3) | metric or imperial",
				// The exit codes table has two columns.
				"selector: td:nth-child(3)",
			}},
		// The two lists are alike too, and together hold more.
		{name: "the items of alike lists", page: "wiki.html", opts: &distillv1.FetchOptions{FindText: "rocky shore", Similar: true}, kind: elements,
			want: []string{
				"#bodyContent > ul:nth-of-type(1) > li:nth-of-type(1) > a | Spray zone",
				"#bodyContent > ul:nth-of-type(1) > li:nth-of-type(2) > a | High tide zone",
				"#bodyContent > ul:nth-of-type(1) > li:nth-of-type(3) > a | Low tide zone",
				"#bodyContent > ul:nth-of-type(2) > li:nth-of-type(1) > a | Tide",
				"#bodyContent > ul:nth-of-type(2) > li:nth-of-type(2) > a | Rocky shore",
				"selector: li > a",
			}},
		// The sidebar's list has the same structure: the list's class, then
		// its path, tell them apart.
		{name: "a list told apart by its class", page: "docs.html", opts: &distillv1.FetchOptions{FindText: "faq", Similar: true}, kind: elements,
			want: []string{
				"html > body > div:nth-of-type(2) > ul:nth-of-type(1) > li:nth-of-type(1) > a | FAQ",
				"html > body > div:nth-of-type(2) > ul:nth-of-type(1) > li:nth-of-type(2) > a | Changelog",
				"selector: ul.see-also > li > a",
			}},
		{name: "a list told apart by its path", page: "docs.html", opts: &distillv1.FetchOptions{FindText: "step a", Similar: true}, kind: elements,
			want: []string{
				"html > body > div:nth-of-type(2) > ul:nth-of-type(2) > li:nth-of-type(1) > a | Step A",
				"html > body > div:nth-of-type(2) > ul:nth-of-type(2) > li:nth-of-type(2) > a | Step B",
				"selector: html > body > div:nth-of-type(2) > ul:nth-of-type(2) > li > a",
			}},
		{name: "nothing found: nothing like it", page: "wiki.html", opts: &distillv1.FetchOptions{FindText: "no such words", Similar: true}, kind: elements, want: nil},
	})
}
