package pick

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"
	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// Every selector find and similar return picks its element alone, run
// here by cascadia as a user's --select would run it.
func TestFoundSelectorsPickTheElementAlone(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		page string
		opts *distillv1.FetchOptions
	}{
		{"grid.html", &distillv1.FetchOptions{FindRegex: `.`}},
		{"docs.html", &distillv1.FetchOptions{FindRegex: `.`}},
		{"wiki.html", &distillv1.FetchOptions{FindRegex: `.`}},
		{"grid.html", &distillv1.FetchOptions{FindText: "stock", Similar: true}},
		{"docs.html", &distillv1.FetchOptions{FindText: "metric", Similar: true}},
		{"wiki.html", &distillv1.FetchOptions{FindText: "paragraph", Similar: true}},
	} {
		t.Run(tt.page+" "+tt.opts.GetFindText()+tt.opts.GetFindRegex(), func(t *testing.T) {
			t.Parallel()
			got := pickFixture(t, tt.page, tt.opts)
			if len(got.GetElements()) == 0 {
				t.Fatal("found nothing")
			}
			doc := parseFixture(t, tt.page)
			for _, e := range got.GetElements() {
				s, err := cascadia.Compile(e.GetSelector())
				if err != nil {
					t.Errorf("%q does not compile: %v", e.GetSelector(), err)
					continue
				}
				hits := cascadia.QueryAll(doc, s)
				if len(hits) != 1 || visibleText(hits[0]) != e.GetText() {
					t.Errorf("%q picks %d elements, want only the one reading %q", e.GetSelector(), len(hits), e.GetText())
				}
			}
			if sel := got.GetSelector(); sel != "" {
				s, err := cascadia.Compile(sel)
				if err != nil {
					t.Fatalf("similar selector %q does not compile: %v", sel, err)
				}
				if n := len(cascadia.QueryAll(doc, s)); n != len(got.GetElements()) {
					t.Errorf("similar selector %q picks %d elements, want the %d matches", sel, n, len(got.GetElements()))
				}
			}
		})
	}
}

// A page nested deeper than any path is short, with no id: the path from
// the root still picks the element alone.
func TestFindOnADeepPage(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("<html><body>")
	for range 150 {
		b.WriteString("<div><span>x</span>")
	}
	b.WriteString("<p>needle</p>")
	for range 150 {
		b.WriteString("</div>")
	}
	b.WriteString("<p>needle</p></body></html>")
	doc, err := html.Parse(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(&distillv1.FetchOptions{FindText: "needle", Exact: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Run(context.Background(), doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.GetElements()) != 2 {
		t.Fatalf("found %d, want 2", len(got.GetElements()))
	}
	for _, e := range got.GetElements() {
		hits := cascadia.QueryAll(doc, cascadia.MustCompile(e.GetSelector()))
		if len(hits) != 1 {
			t.Errorf("%.60q... picks %d elements, want 1", e.GetSelector(), len(hits))
		}
	}
}

// Bad options are refused before anything is fetched, with one line that
// names the option and the problem.
func TestCheckRefusesBadOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		opts *distillv1.FetchOptions
		want string
	}{
		{"css syntax", &distillv1.FetchOptions{Select: "a["}, `--select: invalid selector "a["`},
		{"css over the :has bound", &distillv1.FetchOptions{Select: "div:has(p:has(a))"}, "--select: invalid selector"},
		{"unknown pseudo-element", &distillv1.FetchOptions{Select: "a::before"}, "the only pseudo-elements are a trailing ::attr(NAME), ::text or ::html"},
		{"pseudo-element alone", &distillv1.FetchOptions{Select: "::text"}, "picks no elements"},
		{"xpath syntax", &distillv1.FetchOptions{Xpath: "//a[@href"}, `--xpath: invalid XPath "//a[@href"`},
		{"xpath unknown function", &distillv1.FetchOptions{Xpath: "frobnicate(//a)"}, "--xpath: invalid XPath"},
		{"xpath too long", &distillv1.FetchOptions{Xpath: "//a" + strings.Repeat("[1]", 400)}, "over the limit of 1024"},
		{"xpath nests predicates", &distillv1.FetchOptions{Xpath: "//a[b[c[d[e]]]]"}, "nests predicates 4 deep, over the limit of 3"},
		{"xpath too many steps", &distillv1.FetchOptions{Xpath: strings.Repeat("/a", 65)}, "65 location steps, over the limit of 64"},
		{"bad regex", &distillv1.FetchOptions{FindRegex: "(a"}, "--find-regex: invalid regular expression"},
		{"blank text", &distillv1.FetchOptions{FindText: "  "}, "--find-text is only whitespace"},
		{"two pickers", &distillv1.FetchOptions{Select: "a", Xpath: "//a"}, "one picker at a time, got --select and --xpath"},
		{"similar alone", &distillv1.FetchOptions{Similar: true}, "--similar needs a picker"},
		{"fields alone", &distillv1.FetchOptions{Fields: fields("a=b")}, "--field needs a picker"},
		{"fields on found text", &distillv1.FetchOptions{FindText: "a", Fields: fields("a=b")}, "--field needs --select, --xpath or --similar"},
		{"exact on a selector", &distillv1.FetchOptions{Select: "a", Exact: true}, "--exact and --case-sensitive apply to --find-text and --find-regex only"},
		{"field without a name", &distillv1.FetchOptions{Select: "a", Fields: fields("=b")}, "a field has no name"},
		{"field twice", &distillv1.FetchOptions{Select: "a", Fields: fields("a=b", "a=c")}, `"a" is given twice`},
		{"field without a selector", &distillv1.FetchOptions{Select: "a", Fields: fields("a=")}, `"a" has no selector`},
		{"bad css field", &distillv1.FetchOptions{Select: "a", Fields: fields("t=p:has(:has(a))")}, "--field t: invalid selector"},
		{"bad xpath field", &distillv1.FetchOptions{Xpath: "//a", Fields: fields("t=.//[")}, "--field t: invalid XPath"},
		// With similar, fields are CSS.
		{"xpath field under similar", &distillv1.FetchOptions{Xpath: "//a", Similar: true, Fields: fields("t=.//b")}, "--field t: invalid selector"},
		{"negative max", &distillv1.FetchOptions{Select: "a", MaxMatches: proto.Int32(-1)}, "--max-matches must be 0 (no cap) or more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := Check(tt.opts)
			if failure.CodeOf(err) != failure.InvalidArgument || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Check = %v, want InvalidArgument saying %q", err, tt.want)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || len(msg) > 300 {
				t.Errorf("not one short line: %q", msg)
			}
		})
	}
	if err := Check(&distillv1.FetchOptions{Selector: "article", Format: distillv1.Format_FORMAT_JSON}); err != nil {
		t.Errorf("no picking asked: %v", err)
	}
}

// wide is a page of n list items, each with a link.
func wide(n int) *html.Node {
	var b strings.Builder
	b.WriteString("<html><body><ul>")
	for i := range n {
		fmt.Fprintf(&b, `<li class="i"><a href="/%d">item %d</a></li>`, i, i)
	}
	b.WriteString("</ul></body></html>")
	doc, err := html.Parse(strings.NewReader(b.String()))
	if err != nil {
		panic(err)
	}
	return doc
}

// An expression within the shape bounds can still cost the page's size
// squared; the move budget turns it into an error instead of a hang.
func TestXPathOverItsBudget(t *testing.T) {
	t.Parallel()
	p, err := Compile(&distillv1.FetchOptions{Xpath: "//a[count(//a) > count(//li)]"})
	if err != nil {
		t.Fatal(err)
	}
	// A budget of MaxXPathMoves takes seconds to spend under the race
	// detector: the test spends a smaller one on a smaller page.
	p.moves = 200_000
	_, err = p.Run(context.Background(), wide(1000), nil)
	if failure.CodeOf(err) != failure.InvalidArgument || !strings.Contains(err.Error(), "moves on this page") {
		t.Fatalf("err = %v, want InvalidArgument over the move budget", err)
	}
	// The same expression on a small page is fine.
	got, err := p.Run(context.Background(), wide(10), nil)
	if err != nil || len(got.GetValues()) != 0 {
		t.Errorf("small page: %v, %v", got, err)
	}
}

// Every picker stops soon after its context ends, with the typed error.
func TestPickersStopWhenCancelled(t *testing.T) {
	t.Parallel()
	doc := wide(5000)
	for _, opts := range []*distillv1.FetchOptions{
		{Select: "li:has(a[href$='7']) a"},
		{Xpath: "//li[a[contains(@href, '7')]]"},
		{FindText: "item"},
		{Select: "li a", Similar: true},
	} {
		t.Run(fmt.Sprint(opts), func(t *testing.T) {
			t.Parallel()
			p, err := Compile(opts)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err = p.Run(ctx, doc, nil)
			if !errors.Is(err, context.Canceled) || failure.CodeOf(err) != failure.Canceled {
				t.Fatalf("err = %v, want Canceled", err)
			}
		})
	}
}

// A page of thousands of alike items: every one found, each selector
// still picking its element alone, past the budget for running them
// against the others too.
func TestFindOnAWidePage(t *testing.T) {
	t.Parallel()
	doc := wide(2000)
	p, err := Compile(&distillv1.FetchOptions{FindRegex: `^item \d+$`})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Run(context.Background(), doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	els := got.GetElements()
	if len(els) != 2000 {
		t.Fatalf("found %d, want 2000", len(els))
	}
	for _, i := range []int{0, 999, 1999} {
		hits := cascadia.QueryAll(doc, cascadia.MustCompile(els[i].GetSelector()))
		if want := fmt.Sprintf("item %d", i); len(hits) != 1 || visibleText(hits[0]) != want || els[i].GetText() != want {
			t.Errorf("%q picks %d elements, want only %q", els[i].GetSelector(), len(hits), want)
		}
	}
}

// A similar selector keeps the classes it needs and a step's first, and
// drops the rest.
func TestSimilarSelectorDropsClassesItCanDoWithout(t *testing.T) {
	t.Parallel()
	doc, err := html.Parse(strings.NewReader(`<html><body>
<nav><ul class="menu nav-menu shadow"><li class="item lvl0 css-x">Home</li><li class="item lvl0 css-x">Guides</li><li class="item lvl0 css-x">Cart</li></ul></nav>
<footer><ul class="links"><li class="item css-y">About</li><li class="item css-y">Jobs</li></ul></footer>
</body></html>`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(&distillv1.FetchOptions{FindText: "guides", Similar: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Run(context.Background(), doc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.GetSelector() != "li.item.lvl0" || len(got.GetElements()) != 3 {
		t.Errorf("similar = %q with %d matches, want li.item.lvl0 and the three menu items", got.GetSelector(), len(got.GetElements()))
	}
}
