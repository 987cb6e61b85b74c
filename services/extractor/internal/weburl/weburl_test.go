package weburl

import (
	"net/url"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func TestResolve(t *testing.T) {
	t.Parallel()
	base, _ := url.Parse("https://example.com/a/b/page.html?q=1")
	web := []string{"http", "https"}
	tests := []struct {
		name    string
		ref     string
		schemes []string
		want    string
		ok      bool
	}{
		{"relative", "c.html", web, "https://example.com/a/b/c.html", true},
		{"parent", "../c", web, "https://example.com/a/c", true},
		{"root", "/x", web, "https://example.com/x", true},
		{"scheme-relative", "//cdn.example.net/i.png", web, "https://cdn.example.net/i.png", true},
		{"fragment", "#top", web, "https://example.com/a/b/page.html?q=1#top", true},
		{"whitespace and newlines dropped", "  /p\nath\t ", web, "https://example.com/path", true},
		{"empty", "  ", web, "", false},
		{"javascript refused", "javascript:alert(1)", web, "", false},
		{"mailto refused for web", "mailto:a@example.com", web, "", false},
		{"mailto allowed", "mailto:a@example.com", []string{"mailto"}, "mailto:a@example.com", true},
		{"scheme case-insensitive", "HTTPS://Example.com/", web, "https://Example.com/", true},
		{"http without host", "http:///x", web, "", false},
		{"unparseable", "http://[::1", web, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := Resolve(base, tt.ref, tt.schemes...)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Resolve(%q) = %q, %v; want %q, %v", tt.ref, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestResolveWithoutBase(t *testing.T) {
	t.Parallel()
	if _, ok := Resolve(nil, "/relative", "https"); ok {
		t.Error("relative URL accepted without a base")
	}
	if got, ok := Resolve(nil, "https://example.com/", "https"); !ok || got != "https://example.com/" {
		t.Errorf("got %q, %v", got, ok)
	}
}

func TestBase(t *testing.T) {
	t.Parallel()
	page, _ := url.Parse("https://news.example.com/world/2024/story.html")
	tests := []struct {
		name string
		head string
		want string
	}{
		{"no base", ``, page.String()},
		{"relative base", `<base href="/docs/v2/">`, "https://news.example.com/docs/v2/"},
		{"absolute base", `<base href=" https://cdn.example.org/x/ ">`, "https://cdn.example.org/x/"},
		{"the first base counts", `<base href="/a/"><base href="/b/">`, "https://news.example.com/a/"},
		{"file base", `<base href="file:///srv/site/">`, "file:///srv/site/"},
		{"javascript base ignored", `<base href="javascript:alert(1)">`, page.String()},
		{"http base without a host ignored", `<base href="http:///x">`, page.String()},
		{"base without href ignored", `<base target="_blank">`, page.String()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc, err := html.Parse(strings.NewReader("<head>" + tt.head + "</head><a href=x>x</a>"))
			if err != nil {
				t.Fatal(err)
			}
			if got := Base(doc, page).String(); got != tt.want {
				t.Errorf("Base = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSamePage(t *testing.T) {
	t.Parallel()
	page, _ := url.Parse("https://example.com/a/story.html")
	elsewhere, _ := url.Parse("https://example.com/b/")
	tests := []struct {
		name string
		base *url.URL
		raw  string
		want bool
	}{
		{name: "bare fragment", base: page, raw: "#intro", want: true},
		{name: "empty fragment", base: page, raw: "#", want: true},
		{name: "own url with fragment", base: page, raw: "https://example.com/a/story.html#x", want: true},
		{name: "relative own url with fragment", base: page, raw: "story.html#x", want: true},
		{name: "own url without fragment", base: page, raw: "story.html", want: false},
		{name: "other page with fragment", base: page, raw: "other.html#x", want: false},
		{name: "other query with fragment", base: page, raw: "story.html?p=2#x", want: false},
		{name: "fragment under a base elsewhere leaves the page", base: elsewhere, raw: "#x", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resolved, _ := Resolve(tt.base, tt.raw, "http", "https")
			if got := SamePage(tt.raw, resolved, page); got != tt.want {
				t.Errorf("SamePage(%q, %q) = %v, want %v", tt.raw, resolved, got, tt.want)
			}
		})
	}
}
