package actions

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
	"google.golang.org/protobuf/proto"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/internal/golden"
	"distill.dev/services/extractor/internal/htmlnode"
	"distill.dev/services/extractor/internal/weburl"
)

// pageURL is where testdata/actions.html is served from: a CMS address
// unlike the section its <base href> names.
const pageURL = "https://www.harbour.example.gov/pages/4711"

func parse(t *testing.T, page string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// read reads the actions of page, served from pageURL, uncapped.
func read(t *testing.T, page string) *distillv1.Actions {
	t.Helper()
	return readFrom(t, parse(t, page), pageURL, -1)
}

// readFrom reads the actions of doc, served from rawURL, as extract does:
// relative references resolve against the page's <base href>.
func readFrom(t *testing.T, doc *html.Node, rawURL string, limit int) *distillv1.Actions {
	t.Helper()
	page, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return Read(doc, page, weburl.Base(doc, page), limit)
}

// TestGolden reads the action tree of a council page that has a bit of
// everything; the golden file is the reviewed tree.
func TestGolden(t *testing.T) {
	t.Parallel()
	a := read(t, fixture(t, "actions.html"))
	golden.Check(t, "actions.json", golden.ProtoJSON(t, a))

	if got, want := Count(a), len(a.GetLinks())+len(a.GetDownloads())+len(a.GetButtons())+len(a.GetForms()); got != want || got == 0 {
		t.Errorf("Count = %d, want %d entries", got, want)
	}
	all := golden.ProtoJSON(t, a)
	for _, absent := range []string{
		"javascript:", "mailto:", "tel:", "ftp:", "#main", "/pages/4711#downloads",
		"/trap", "from-template", "Never pressed", "Load more", "website", "reset_password",
		"legacy", "dialog", "Subscribe",
	} {
		if strings.Contains(all, absent) {
			t.Errorf("action tree has %q", absent)
		}
	}
}

func TestLinks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		page      string
		links     []string // "text -> href"
		downloads []string // "text -> href (filename)"
	}{
		{
			name:  "absolute against the page url",
			page:  `<a href="a">A</a> <a href="/b?x=1">B</a> <a href="https://other.example.org/c">C</a>`,
			links: []string{"A -> https://www.harbour.example.gov/pages/a", "B -> https://www.harbour.example.gov/b?x=1", "C -> https://other.example.org/c"},
		},
		{
			name:  "base href",
			page:  `<head><base href="https://cdn.example.net/docs/v2/"></head><a href="guide/">Guide</a> <a href="../v1/">Old</a>`,
			links: []string{"Guide -> https://cdn.example.net/docs/v2/guide/", "Old -> https://cdn.example.net/docs/v1/"},
		},
		{
			name: "non-web and in-page links left out",
			page: `<a href="javascript:void(0)">JS</a> <a href=" JavaScript:go()">JS2</a> <a href="mailto:a@example.com">Mail</a>
<a href="tel:123">Call</a> <a href="#top">Top</a> <a href="">Empty</a> <a>No href</a> <a href="data:text/html,hi">Data</a>
<a href="/pages/4711#part">Same page</a> <a href="/pages/4711">This page</a> <a href="/pages/other#part">Other page</a>`,
			links: []string{"This page -> https://www.harbour.example.gov/pages/4711", "Other page -> https://www.harbour.example.gov/pages/other#part"},
		},
		{
			name:  "deduplicated, first text wins, a later text fills an empty one",
			page:  `<a href="/a">First</a> <a href="/a">Second</a> <a href="/b"><img src="i.png"></a> <a href="/b">Bee</a>`,
			links: []string{"First -> https://www.harbour.example.gov/a", "Bee -> https://www.harbour.example.gov/b"},
		},
		{
			name: "text collapsed, labels for icons, nameless left out",
			page: `<a href="/a">  two
			words </a> <a href="/b"><img src="b.png" alt="Bee"></a> <a href="/c" aria-label="Close">×</a>
<a href="/d" title="Dee"><svg><text>x</text></svg></a> <a href="/e"><img src="e.png"></a> <a href="/f" aria-label="Ignored">Visible</a>`,
			links: []string{
				"two words -> https://www.harbour.example.gov/a", "Bee -> https://www.harbour.example.gov/b",
				"Close -> https://www.harbour.example.gov/c", "Dee -> https://www.harbour.example.gov/d",
				"Visible -> https://www.harbour.example.gov/f",
			},
		},
		{
			name: "hidden and inert links left out",
			page: `<div hidden><a href="/1">One</a></div> <a href="/2" style="display:none">Two</a> <nav aria-hidden="true"><a href="/3">Three</a></nav>
<template><a href="/4">Four</a></template> <a href="/5">Five</a>`,
			links: []string{"Five -> https://www.harbour.example.gov/5"},
		},
		{
			name: "downloads by extension and by attribute",
			page: `<a href="/r/report.PDF">Report</a> <a href="/r/data.tar.gz">Data</a> <a href="/r/page.html">Page</a>
<a href="/r/export?f=csv" download>Export</a> <a href="/r/x" download="../../etc/nice name.csv">Named</a>
<a href="/r/report.pdf?v=2">Report v2</a> <a href="/r/%C3%A9t%C3%A9.zip">Summer</a> <a href="/r/dir/" download>Dir</a>
<a href="/r/file.json">JSON</a>`,
			links: []string{"Page -> https://www.harbour.example.gov/r/page.html", "JSON -> https://www.harbour.example.gov/r/file.json"},
			downloads: []string{
				"Report -> https://www.harbour.example.gov/r/report.PDF (report.PDF)",
				"Data -> https://www.harbour.example.gov/r/data.tar.gz (data.tar.gz)",
				"Export -> https://www.harbour.example.gov/r/export?f=csv (export)",
				"Named -> https://www.harbour.example.gov/r/x (nice name.csv)",
				"Report v2 -> https://www.harbour.example.gov/r/report.pdf?v=2 (report.pdf)",
				"Summer -> https://www.harbour.example.gov/r/%C3%A9t%C3%A9.zip (été.zip)",
				"Dir -> https://www.harbour.example.gov/r/dir/ ()",
			},
		},
		{
			name:      "a nameless download is named by its file",
			page:      `<a href="/r/minutes-2024-03.pdf"><img src="pdf-icon.png"></a>`,
			downloads: []string{"minutes-2024-03.pdf -> https://www.harbour.example.gov/r/minutes-2024-03.pdf (minutes-2024-03.pdf)"},
		},
		{
			name:  "image map areas",
			page:  `<map name="m"><area href="/north" alt="North"><area href="/south.pdf" alt="South"></map>`,
			links: []string{"North -> https://www.harbour.example.gov/north"},
			downloads: []string{
				"South -> https://www.harbour.example.gov/south.pdf (south.pdf)",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := read(t, tt.page)
			var links, downloads []string
			for i, l := range a.GetLinks() {
				if want := fmt.Sprintf("link_%d", i); l.GetActionId() != want {
					t.Errorf("link %d has id %q, want %q", i, l.GetActionId(), want)
				}
				links = append(links, l.GetText()+" -> "+l.GetHref())
			}
			for i, d := range a.GetDownloads() {
				if want := fmt.Sprintf("download_%d", i); d.GetActionId() != want {
					t.Errorf("download %d has id %q, want %q", i, d.GetActionId(), want)
				}
				downloads = append(downloads, fmt.Sprintf("%s -> %s (%s)", d.GetText(), d.GetHref(), d.GetFilename()))
			}
			equalLists(t, "links", links, tt.links)
			equalLists(t, "downloads", downloads, tt.downloads)
		})
	}
}

func TestLinkTextCapped(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("word ", 100)
	a := read(t, `<a href="/long"><div>`+long+`</div><p>`+long+`</p></a>`)
	if len(a.GetLinks()) != 1 {
		t.Fatalf("links = %v", a.GetLinks())
	}
	text := a.GetLinks()[0].GetText()
	if n := utf8.RuneCountInString(text); n > maxActionText || !strings.HasSuffix(text, "word…") || !strings.HasPrefix(text, "word word") {
		t.Errorf("text has %d runes: %q", n, text)
	}
}

func TestButtons(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		page string
		want []string // "kind: text"
	}{
		{
			name: "kinds",
			page: `<button>Plain</button> <button type="button">Typed</button> <button type="submit">Go</button> <button type="reset">Clear</button>
<input type="button" value="Input"> <input type="submit"> <input type="reset" value="Again"> <input type="image" alt="Send" src="s.png">
<div role="button">Div</div> <span role=" BUTTON ">Span</span> <a role="button">Anchor</a> <a href="/x" role="button">Link</a>`,
			want: []string{
				"button: Plain", "button: Typed", "submit: Go", "reset: Clear",
				"button: Input", "submit: Submit", "reset: Again", "submit: Send",
				"role: Div", "role: Span", "role: Anchor",
			},
		},
		{
			name: "names of icon buttons",
			page: `<button aria-label="Close dialog">×</button> <button title="Menu"><svg></svg></button> <span id="l">Dark mode</span><button aria-labelledby="l">◐</button>
<button aria-label="Ignored">Visible words</button> <button></button> <input type="button">`,
			want: []string{"button: Close dialog", "button: Menu", "button: Dark mode", "button: Visible words"},
		},
		{
			name: "buttons of forms are not standalone",
			page: `<form id="f" action="/s"><button>In form</button><div role="button">Role in form</div></form>
<button form="f">Owned by form attribute</button> <button form="missing">Form attribute names no form</button>
<form action="javascript:x()"><button>Scripted form</button></form> <dialog><form method="dialog"><button>Close</button></form></dialog>`,
			want: []string{"button: Form attribute names no form"},
		},
		{
			name: "disabled, hidden and inert buttons left out",
			page: `<button disabled>Off</button> <fieldset disabled><button>Fenced</button></fieldset> <div role="button" aria-disabled="true">Aria off</div>
<button hidden>Hidden</button> <div style="visibility: hidden"><button>Invisible</button></div> <template><button>Inert</button></template> <button>On</button>`,
			want: []string{"button: On"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := read(t, tt.page)
			var got []string
			for i, b := range a.GetButtons() {
				if want := fmt.Sprintf("button_%d", i); b.GetActionId() != want {
					t.Errorf("button %d has id %q, want %q", i, b.GetActionId(), want)
				}
				got = append(got, b.GetKind()+": "+b.GetText())
			}
			equalLists(t, "buttons", got, tt.want)
		})
	}
}

// field builds an expected form field; value and label are set when not
// "-".
func field(name, kind, value, label string, required bool, options ...*distillv1.SelectOption) *distillv1.FormField {
	f := &distillv1.FormField{Name: name, Kind: kind, Required: required, Options: options}
	if value != "-" {
		f.Value = &value
	}
	if label != "-" {
		f.Label = &label
	}
	return f
}

func option(value, label string, selected bool) *distillv1.SelectOption {
	return &distillv1.SelectOption{Value: value, Label: label, Selected: selected}
}

func TestForms(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		page string
		url  string // the page's URL, pageURL when empty
		want []*distillv1.FormAction
	}{
		{
			name: "method and action",
			page: `<head><base href="https://www.harbour.example.gov/base/"></head>
<form><input name="a"></form> <form method="POST" action="send"></form> <form method="put" action="https://api.example.org/x#frag"></form>
<form method="dialog"></form> <form action="javascript:void(0)"></form> <form action="mailto:x@example.com"></form> <form action=" "></form>`,
			want: []*distillv1.FormAction{
				{ActionId: "form_0", Method: "GET", Action: pageURL, SubmitId: "form_0.submit", Fields: []*distillv1.FormField{field("a", "text", "-", "-", false)}},
				{ActionId: "form_1", Method: "POST", Action: "https://www.harbour.example.gov/base/send", SubmitId: "form_1.submit", Fields: []*distillv1.FormField{}},
				{ActionId: "form_2", Method: "GET", Action: "https://api.example.org/x#frag", SubmitId: "form_2.submit", Fields: []*distillv1.FormField{}},
				{ActionId: "form_3", Method: "GET", Action: pageURL, SubmitId: "form_3.submit", Fields: []*distillv1.FormField{}},
			},
		},
		{
			name: "a page that is no web page submits nowhere by default",
			url:  "file:///home/me/page.html",
			page: `<form><input name="a"></form><form action="https://example.org/s"></form>`,
			want: []*distillv1.FormAction{
				{ActionId: "form_0", Method: "GET", Action: "https://example.org/s", SubmitId: "form_0.submit", Fields: []*distillv1.FormField{}},
			},
		},
		{
			name: "the default button's formaction and formmethod",
			page: `<form action="/normal"><input name="q"><button name="go" value="1" formaction="/other" formmethod="post">Go</button><button formaction="/never">Later</button></form>`,
			want: []*distillv1.FormAction{{
				ActionId: "form_0", Method: "POST", Action: "https://www.harbour.example.gov/other", SubmitId: "form_0.submit",
				Fields: []*distillv1.FormField{field("q", "text", "-", "-", false), field("go", "submit", "1", "-", false)},
			}},
		},
		{
			name: "login with csrf token",
			page: `<form method="post" action="/session">
<input type="hidden" name="csrf" value="t0k3n"><input type="hidden" name="empty">
<label for="u">Email address</label><input id="u" type="email" name="user" required value="me@example.com">
<label>Password <input type="password" name="pass" required></label>
<input type="submit" value="Log in"></form>`,
			want: []*distillv1.FormAction{{
				ActionId: "form_0", Method: "POST", Action: "https://www.harbour.example.gov/session", SubmitId: "form_0.submit",
				Fields: []*distillv1.FormField{
					field("csrf", "hidden", "t0k3n", "-", false),
					field("empty", "hidden", "", "-", false),
					field("user", "email", "me@example.com", "Email address", true),
					field("pass", "password", "-", "Password", true),
				},
			}},
		},
		{
			name: "search with select, radio group and checkbox",
			page: `<form action="/search"><input type="search" name="q" placeholder="Search…">
<label>In <select name="in"><option value="all">All</option><optgroup label="Docs"><option value="guides" selected>Guides</option><option value="api" disabled>API</option></optgroup><option>  Blog  posts </option></select></label>
<fieldset><legend>Sort by</legend><label><input type="radio" name="sort" value="rel" checked> Relevance</label><label><input type="radio" name="sort" value="date"> Date</label><input type="radio" name="sort" aria-label="Unlabelled"></fieldset>
<label><input type="checkbox" name="exact"> Exact match</label></form>`,
			want: []*distillv1.FormAction{{
				ActionId: "form_0", Method: "GET", Action: "https://www.harbour.example.gov/search", SubmitId: "form_0.submit",
				Fields: []*distillv1.FormField{
					field("q", "search", "-", "Search…", false),
					field("in", "select", "guides", "In", false, option("all", "All", false), option("guides", "Guides", true), option("Blog posts", "Blog posts", false)),
					field("sort", "radio", "rel", "Sort by", false, option("rel", "Relevance", true), option("date", "Date", false), option("on", "Unlabelled", false)),
					field("exact", "checkbox", "-", "Exact match", false, option("on", "Exact match", false)),
				},
			}},
		},
		{
			name: "selects: default, last selected, multiple, list box",
			page: `<form action="/s">
<select name="first"><option disabled>Pick</option><option value="a">A</option><option value="b">B</option></select>
<select name="last"><option value="a" selected>A</option><option value="b" selected>B</option></select>
<select name="multi" multiple required><option value="a" selected>A</option><option value="b">B</option><option value="c" selected label="Sea">C</option></select>
<select name="box" size="3"><option value="a">A</option></select>
<select name="none"></select></form>`,
			want: []*distillv1.FormAction{{
				ActionId: "form_0", Method: "GET", Action: "https://www.harbour.example.gov/s", SubmitId: "form_0.submit",
				Fields: []*distillv1.FormField{
					field("first", "select", "a", "-", false, option("a", "A", true), option("b", "B", false)),
					field("last", "select", "b", "-", false, option("a", "A", false), option("b", "B", true)),
					field("multi", "select", "a", "-", true, option("a", "A", true), option("b", "B", false), option("c", "Sea", true)),
					field("box", "select", "-", "-", false, option("a", "A", false)),
					field("none", "select", "-", "-", false),
				},
			}},
		},
		{
			name: "radios: last checked wins, checkbox group, kinds",
			page: `<form action="/s">
<input type="radio" name="r" value="1" checked><input type="radio" name="r" value="2" checked>
<input type="checkbox" name="tag" value="x"><input type="checkbox" name="tag" value="y" checked><input type="checkbox" name="tag" value="z" checked>
<input name="plain"><input type="FOO" name="odd"><input type="Number" name="n" value="3"><input type="file" name="doc" value="ignored">
<textarea name="t">
line one
line two</textarea><textarea name="blank"></textarea></form>`,
			want: []*distillv1.FormAction{{
				ActionId: "form_0", Method: "GET", Action: "https://www.harbour.example.gov/s", SubmitId: "form_0.submit",
				Fields: []*distillv1.FormField{
					field("r", "radio", "2", "-", false, option("1", "", false), option("2", "", true)),
					field("tag", "checkbox", "y", "-", false, option("x", "", false), option("y", "", true), option("z", "", true)),
					field("plain", "text", "-", "-", false),
					field("odd", "text", "-", "-", false),
					field("n", "number", "3", "-", false),
					field("doc", "file", "-", "-", false),
					field("t", "textarea", "line one\nline two", "-", false),
					field("blank", "textarea", "", "-", false),
				},
			}},
		},
		{
			name: "unnamed, disabled and hidden controls left out, hidden inputs kept",
			page: `<form action="/s"><input value="no name"><input name="off" disabled>
<fieldset disabled><legend><input name="in_legend"></legend><input name="fenced"><input type="hidden" name="fenced_token" value="1"></fieldset>
<div hidden><input name="honeypot"><input type="hidden" name="token" value="abc"></div><input name="shown" style="display:none">
<template><input name="inert"></template><input name="kept"></form>`,
			want: []*distillv1.FormAction{{
				ActionId: "form_0", Method: "GET", Action: "https://www.harbour.example.gov/s", SubmitId: "form_0.submit",
				Fields: []*distillv1.FormField{
					field("in_legend", "text", "-", "-", false),
					field("token", "hidden", "abc", "-", false),
					field("kept", "text", "-", "-", false),
				},
			}},
		},
		{
			name: "controls associated with the form attribute",
			page: `<input name="before" form="f"><form id="f" action="/s"><input name="inside"><input name="elsewhere" form="g"></form>
<textarea name="after" form="f">x</textarea><input name="stray" form="nothing"><form id="g" action="/g"></form>`,
			want: []*distillv1.FormAction{
				{
					ActionId: "form_0", Method: "GET", Action: "https://www.harbour.example.gov/s", SubmitId: "form_0.submit",
					Fields: []*distillv1.FormField{
						field("before", "text", "-", "-", false),
						field("inside", "text", "-", "-", false),
						field("after", "textarea", "x", "-", false),
					},
				},
				{
					ActionId: "form_1", Method: "GET", Action: "https://www.harbour.example.gov/g", SubmitId: "form_1.submit",
					Fields: []*distillv1.FormField{field("elsewhere", "text", "-", "-", false)},
				},
			},
		},
		{
			name: "labels",
			page: `<form action="/s"><label for="a">By for</label><input id="a" name="a" placeholder="not this">
<label>Wrapping <select name="b"><option>Option text stays out</option></select></label>
<input name="c" aria-label="By aria"><span id="dl">By labelledby</span><input name="d" aria-labelledby="dl">
<input name="e" placeholder="By placeholder"><input name="f" title="By title">
<label for="g">  </label><input id="g" name="g" placeholder="Empty label falls through"></form>`,
			want: []*distillv1.FormAction{{
				ActionId: "form_0", Method: "GET", Action: "https://www.harbour.example.gov/s", SubmitId: "form_0.submit",
				Fields: []*distillv1.FormField{
					field("a", "text", "-", "By for", false),
					field("b", "select", "Option text stays out", "Wrapping", false, option("Option text stays out", "Option text stays out", true)),
					field("c", "text", "-", "By aria", false),
					field("d", "text", "-", "By labelledby", false),
					field("e", "text", "-", "By placeholder", false),
					field("f", "text", "-", "By title", false),
					field("g", "text", "-", "Empty label falls through", false),
				},
			}},
		},
		{
			name: "only the default button is a field",
			page: `<form method="post" action="/rate"><button type="button" name="js">Preview</button><button name="useful" value="yes">Yes</button><button name="useful" value="no">No</button><input type="reset" name="r"></form>
<form action="/s"><input type="submit" value="Unnamed"><input type="submit" name="second" value="Named but second"></form>
<form action="/t"><button name="off" disabled>Off</button><button name="on">On</button></form>`,
			want: []*distillv1.FormAction{
				{
					ActionId: "form_0", Method: "POST", Action: "https://www.harbour.example.gov/rate", SubmitId: "form_0.submit",
					Fields: []*distillv1.FormField{field("useful", "submit", "yes", "-", false)},
				},
				{ActionId: "form_1", Method: "GET", Action: "https://www.harbour.example.gov/s", SubmitId: "form_1.submit", Fields: []*distillv1.FormField{}},
				{ActionId: "form_2", Method: "GET", Action: "https://www.harbour.example.gov/t", SubmitId: "form_2.submit", Fields: []*distillv1.FormField{}},
			},
		},
		{
			name: "hidden forms left out",
			page: `<form hidden action="/a"><input name="x"></form><div style="display:none"><form action="/b"></form></div><form action="/c"></form>`,
			want: []*distillv1.FormAction{
				{ActionId: "form_0", Method: "GET", Action: "https://www.harbour.example.gov/c", SubmitId: "form_0.submit", Fields: []*distillv1.FormField{}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u := pageURL
			if tt.url != "" {
				u = tt.url
			}
			got := readFrom(t, parse(t, tt.page), u, -1).GetForms()
			if len(got) != len(tt.want) {
				t.Fatalf("got %d forms, want %d:\n%s", len(got), len(tt.want), golden.ProtoJSON(t, &distillv1.Actions{Forms: got}))
			}
			for i := range got {
				if !proto.Equal(got[i], tt.want[i]) {
					t.Errorf("form %d =\n%s\nwant\n%s", i, golden.ProtoJSON(t, got[i]), golden.ProtoJSON(t, tt.want[i]))
				}
			}
		})
	}
}

// TestLimit caps every category, the fields of each form and the options
// of each field; extract's TestMaxActions has how options.max_actions
// sets the limit.
func TestLimit(t *testing.T) {
	t.Parallel()
	var page strings.Builder
	for i := range 5 {
		fmt.Fprintf(&page, `<a href="/p%d">Page %d</a><a href="/f%d.pdf">File %d</a><button>Button %d</button>`, i, i, i, i, i)
	}
	page.WriteString(`<form action="/s"><input name="a"><input name="b"><input name="c"><input name="d">
<select name="s"><option>1</option><option>2</option><option selected>3</option><option>4</option></select></form>`)
	page.WriteString(`<form action="/t"><input type="radio" name="r" value="1"><input type="radio" name="r" value="2"><input type="radio" name="r" value="3" checked></form>`)
	for i := range 3 {
		fmt.Fprintf(&page, `<form action="/more%d"></form>`, i)
	}

	tests := []struct {
		name      string
		limit     int
		perList   int // entries in each category
		fields    int // fields of the first form
		options   int // options of the select
		wantCount int
	}{
		{name: "none", limit: -1, perList: 5, fields: 5, options: 4, wantCount: 20},
		{name: "three", limit: 3, perList: 3, fields: 3, options: 3, wantCount: 12},
		{name: "one", limit: 1, perList: 1, fields: 1, options: 1, wantCount: 4},
		{name: "above the page", limit: 100, perList: 5, fields: 5, options: 4, wantCount: 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := readFrom(t, parse(t, page.String()), pageURL, tt.limit)
			for cat, n := range map[string]int{"links": len(a.GetLinks()), "downloads": len(a.GetDownloads()), "buttons": len(a.GetButtons()), "forms": len(a.GetForms())} {
				if n != tt.perList {
					t.Errorf("%d %s, want %d", n, cat, tt.perList)
				}
			}
			if got := Count(a); got != tt.wantCount {
				t.Errorf("Count = %d, want %d", got, tt.wantCount)
			}
			// The cap keeps the first entries, so ids run from 0.
			if id := a.GetLinks()[tt.perList-1].GetActionId(); id != fmt.Sprintf("link_%d", tt.perList-1) {
				t.Errorf("last link id = %q", id)
			}
			fields := a.GetForms()[0].GetFields()
			if len(fields) != tt.fields {
				t.Fatalf("%d fields, want %d", len(fields), tt.fields)
			}
			if tt.fields == 5 {
				sel := fields[4]
				if len(sel.GetOptions()) != tt.options || sel.GetValue() != "3" {
					t.Errorf("select has %d options and value %q, want %d and 3", len(sel.GetOptions()), sel.GetValue(), tt.options)
				}
			}
			if len(a.GetForms()) > 1 {
				radio := a.GetForms()[1].GetFields()[0]
				if want := min(3, tt.options); len(radio.GetOptions()) != want || radio.GetValue() != "3" {
					t.Errorf("radio group has %d options and value %q, want %d and 3", len(radio.GetOptions()), radio.GetValue(), want)
				}
			}
		})
	}
}

// TestIDsStable reads the same page twice: the ids name the same actions,
// which is what lets an agent act on a snapshot.
func TestIDsStable(t *testing.T) {
	t.Parallel()
	page := fixture(t, "actions.html")
	first := read(t, page)
	second := read(t, page)
	if !proto.Equal(first, second) {
		t.Errorf("the same page gave two trees:\n%s\n%s", golden.ProtoJSON(t, first), golden.ProtoJSON(t, second))
	}
	for i, f := range first.GetForms() {
		if want := fmt.Sprintf("form_%d", i); f.GetActionId() != want || f.GetSubmitId() != want+".submit" {
			t.Errorf("form %d has ids %q, %q", i, f.GetActionId(), f.GetSubmitId())
		}
	}
}

// deepPage is a link, then a div nested 100,000 deep around another link:
// far deeper than the parser builds a tree (extract flattens a page it
// refuses for its depth), so that no walk of Read may recurse.
func deepPage(t *testing.T) *html.Node {
	doc := parse(t, `<a href="/top">Top</a><div></div>`)
	n := htmlnode.First(doc, "div")
	for range 100_000 {
		div := htmlnode.NewElement("div")
		n.AppendChild(div)
		n = div
	}
	a := htmlnode.NewElement("a")
	htmlnode.SetAttr(a, "href", "/deep")
	a.AppendChild(&html.Node{Type: html.TextNode, Data: "Deep"})
	n.AppendChild(a)
	return doc
}

// TestHostile reads pages built to be expensive: deep nesting, a huge
// wrapper that names every button inside it, and many controls.
func TestHostile(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("hostile pages take seconds")
	}
	var many strings.Builder
	many.WriteString(`<form action="/s">`)
	for i := range 20_000 {
		fmt.Fprintf(&many, `<input type="radio" name="r%d" value="a"><input type="radio" name="r%d" value="b">`, i%5000, i%5000)
	}
	many.WriteString(`</form>`)
	tests := []struct {
		name string
		doc  func(t *testing.T) *html.Node
		want func(a *distillv1.Actions) bool
	}{
		{
			name: "deep nesting",
			doc:  deepPage,
			want: func(a *distillv1.Actions) bool { return len(a.GetLinks()) > 0 && a.GetLinks()[0].GetText() == "Top" },
		},
		{
			name: "nested role buttons around a lot of text",
			doc: func(t *testing.T) *html.Node {
				return parse(t, strings.Repeat(`<div role="button">`, 400)+strings.Repeat("text ", 200_000))
			},
			want: func(a *distillv1.Actions) bool {
				return len(a.GetButtons()) == 400 && utf8.RuneCountInString(a.GetButtons()[0].GetText()) <= maxActionText
			},
		},
		{
			name: "many radio groups",
			doc:  func(t *testing.T) *html.Node { return parse(t, many.String()) },
			want: func(a *distillv1.Actions) bool {
				return len(a.GetForms()) == 1 && len(a.GetForms()[0].GetFields()) == 5000 && len(a.GetForms()[0].GetFields()[0].GetOptions()) == 8
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := readFrom(t, tt.doc(t), pageURL, -1)
			if !tt.want(a) {
				t.Errorf("unexpected tree: %d links, %d buttons, %d forms", len(a.GetLinks()), len(a.GetButtons()), len(a.GetForms()))
			}
		})
	}
}

func equalLists(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s =\n  %s\nwant\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
