package extract

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/andybalholm/cascadia"
	"golang.org/x/net/html"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

func TestCheckSelector(t *testing.T) {
	t.Parallel()
	ok := []string{
		"",
		"article",
		"main .post-body > p:first-child, h1, h2",
		"div:not(.ad):not([hidden])",
		`a[href^="https://"]:not([rel~="nofollow"])`,
		"section:has(h2.title) p",
		"li:nth-child(2n+1)",
		`p:contains("a (b) c")`,
		`article :not(aside) p:not(:has(img)), main li`,
		`[data-x="((((((((("] p`,
	}
	for _, sel := range ok {
		if err := CheckSelector(sel); err != nil {
			t.Errorf("CheckSelector(%q) = %v, want nil", sel, err)
		}
	}

	tests := []struct {
		name string
		sel  string
		want string
	}{
		{name: "nested has", sel: "div:has(p:has(span))", want: "nests :has() 2 deep, over the limit of 1"},
		{name: "the reported CPU burner", sel: ":has(:has(:has(:has(*))))", want: ":has() 4 deep"},
		{name: "deep not", sel: "p:not(:not(:not(:not(.a))))", want: "nests pseudo-classes 4 deep, over the limit of 3"},
		{name: "too long", sel: strings.Repeat("p ", 600), want: "1200 bytes long, over the limit of 1024"},
		{name: "too many parts", sel: strings.Repeat("a>", 70) + "a", want: "joins 71 compound selectors, over the limit of 64"},
		{name: "syntax", sel: "p[", want: `invalid selector "p["`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := CheckSelector(tt.sel)
			if failure.CodeOf(err) != failure.InvalidArgument || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("CheckSelector(%q) = %v, want InvalidArgument naming %q", tt.sel, err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") || len(err.Error()) > 300 {
				t.Errorf("error is not one short line: %q", err)
			}
		})
	}
}

// The extractor refuses a hostile selector itself, for callers that did
// not check it (the gRPC service's).
func TestExtractRefusesAHostileSelector(t *testing.T) {
	t.Parallel()
	_, err := newExtractor().Extract(context.Background(), htmlReq(articlePage, &distillv1.FetchOptions{Selector: "p:has(:has(a))"}))
	if failure.CodeOf(err) != failure.InvalidArgument || !strings.Contains(err.Error(), ":has()") {
		t.Errorf("err = %v, want InvalidArgument naming :has()", err)
	}
}

// deepPage nests n divs, each with a paragraph, so that a :has() tried on
// an element near the top searches nearly the whole page.
func deepPage(n int) *html.Node {
	var b strings.Builder
	b.WriteString("<html><body>")
	for i := range n {
		fmt.Fprintf(&b, "<div><p>paragraph %d</p>", i)
	}
	doc, err := parseHTML(context.Background(), whole([]byte(b.String())))
	if err != nil {
		panic(err)
	}
	return doc
}

// A selector within the bounds can still cost the page's size for each
// element it is tried on; the matching loop looks at its context between
// elements and stops with a typed error soon after it is cancelled.
func TestSelectorMatchingStopsWhenCancelled(t *testing.T) {
	t.Parallel()
	sel, err := compileSelector("div:has(.never)")
	if err != nil {
		t.Fatal(err)
	}
	doc := deepPage(5000)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const cancelAt = 100
	tried := 0
	counting := cascadia.Selector(func(n *html.Node) bool {
		tried++
		if tried == cancelAt {
			cancel()
		}
		return sel(n)
	})
	_, err = selectAll(ctx, doc, counting)
	if !errors.Is(err, context.Canceled) || failure.CodeOf(err) != failure.Canceled || !strings.Contains(err.Error(), "matching the selector") {
		t.Fatalf("err = %v, want Canceled while matching the selector", err)
	}
	if tried > cancelAt+tickEvery {
		t.Errorf("tried the selector on %d elements after cancelling at %d, want at most %d more", tried, cancelAt, tickEvery)
	}
}

// A deadline that passes during extraction is a Timeout, not a bare
// context error.
func TestExtractPastItsDeadlineIsATimeout(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	_, err := newExtractor().Extract(ctx, htmlReq(articlePage, nil))
	if !errors.Is(err, context.DeadlineExceeded) || failure.CodeOf(err) != failure.Timeout {
		t.Errorf("err = %v, want Timeout", err)
	}
}
