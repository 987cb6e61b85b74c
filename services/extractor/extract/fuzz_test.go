package extract

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/tokens"
)

// FuzzExtract feeds arbitrary bytes through every profile, format and
// option. Whatever the page, extraction must not panic or fail for a
// reason other than its content type, and what it returns must be valid
// UTF-8, within the token budget, marked when cut, with fences closed and
// with only absolute http(s) URLs in links and actions.
//
//	go test -fuzz=FuzzExtract -fuzztime=3m ./services/extractor/extract/
func FuzzExtract(f *testing.F) {
	// The seeds are the fixture pages of extract and of the packages it
	// calls that have their own.
	var files []string
	for _, dir := range []string{"testdata", "../actions/testdata", "../tables/testdata"} {
		found, err := filepath.Glob(filepath.Join(dir, "*.html"))
		if err != nil {
			f.Fatal(err)
		}
		files = append(files, found...)
	}
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "", uint16(120), uint8(0), uint8(0xff))
		f.Add(b, "text/html; charset=windows-1251", uint16(7), uint8(1), uint8(0x0f))
	}
	for _, snippet := range []string{
		"",
		"<p>Hello world</p>",
		"<article><h1>T</h1><pre><code>```\nx\n```</code></pre><p>after</p></article>",
		"<pre><code>" + strings.Repeat("line of code\n", 50) + "</code></pre>",
		"<table><tr><th>a</th><th>b</th></tr><tr><td colspan=9999>x</td></tr></table>",
		`<base href="javascript:alert(1)"><a href="//evil.example/x">x</a><a href="data:text/html,hi">d</a>`,
		`<form action="javascript:void(0)"><input name=q><button>Go</button></form><a href="file:///etc/passwd" download>f</a>`,
		`<a href="http://[::1]:80/">ip</a><a href="https://例え.jp/パス">idn</a><a href="http://a b/">space</a>`,
		"<meta charset=\"shift_jis\"><p>\x93\xfa\x96\x7b</p>",
		"\xff\xfe<\x00p\x00>\x00h\x00i\x00",
		"<p>caf\xe9 \xc3\xa9 \xed\xa0\x80</p>",
		strings.Repeat("<div>", 600) + "deep" + strings.Repeat("</div>", 600),
		"<svg><foreignObject><math><mi><table><select><option>x</select></table></mi></math></foreignObject></svg>",
		"<ul><li>one<li>two<ol><li>three</ol></ul><blockquote><p>q</blockquote><h2>#</h2>",
		"<p>日本語の文章を書きます。" + strings.Repeat("長い", 200) + "</p>",
		"<noscript><p>Please enable JavaScript</p></noscript><div id=app></div>",
	} {
		f.Add([]byte(snippet), "", uint16(20), uint8(2), uint8(0xff))
		f.Add([]byte(snippet), "text/plain", uint16(3), uint8(0), uint8(0x33))
	}

	e := newExtractor()
	f.Fuzz(func(t *testing.T, page []byte, contentType string, budget uint16, profile, flags uint8) {
		t.Parallel()
		opts := &distillv1.FetchOptions{
			Profile:        distillv1.Profile(profile % 4),
			Format:         distillv1.Format(flags % 4),
			Stats:          flags&0x04 != 0,
			Diagnostics:    true,
			ExtractLinks:   flags&0x08 != 0,
			ExtractTables:  flags&0x10 != 0,
			LinksFull:      flags&0x20 != 0,
			ExtractActions: flags&0x40 != 0,
		}
		if flags&0x80 != 0 {
			opts.Selector = "p, li"
		}
		if budget > 0 {
			opts.MaxOutputTokens = proto.Int64(int64(budget))
		}
		resp, err := e.Extract(context.Background(), fuzzRequest(page, contentType, opts))
		if err != nil {
			mt, _ := mediaType(contentType)
			if kindOf(mt) == kindUnsupported {
				return
			}
			t.Fatalf("Extract: %v", err)
		}
		d := resp.GetDistilled()
		for name, s := range map[string]string{
			"markdown": d.GetMarkdown(), "text": d.GetText(), "title": d.GetTitle(),
			"byline": d.GetByline(), "excerpt": d.GetExcerpt(),
		} {
			if !utf8.ValidString(s) {
				t.Errorf("%s is not valid UTF-8: %q", name, s)
			}
		}
		if budget > 0 {
			checkBudget(t, e, d, page, contentType, opts, int64(budget))
		}
		for _, l := range d.GetLinks().GetItems() {
			checkHTTP(t, "link", l.GetHref())
			if !utf8.ValidString(l.GetText()) {
				t.Errorf("link text is not valid UTF-8: %q", l.GetText())
			}
		}
		for _, tbl := range d.GetTables().GetItems() {
			for _, row := range tbl.GetRows() {
				for _, c := range row.GetCells() {
					if !utf8.ValidString(c) {
						t.Errorf("cell is not valid UTF-8: %q", c)
					}
				}
			}
		}
		a := d.GetActions()
		for _, l := range a.GetLinks() {
			checkHTTP(t, "action link", l.GetHref())
		}
		for _, l := range a.GetDownloads() {
			checkHTTP(t, "download", l.GetHref())
		}
		for _, form := range a.GetForms() {
			checkHTTP(t, "form action", form.GetAction())
		}
	})
}

func fuzzRequest(page []byte, contentType string, opts *distillv1.FetchOptions) *internalv1.ExtractRequest {
	return &internalv1.ExtractRequest{
		Html: page, Url: "https://fuzz.example.com/dir/page.html", ContentType: contentType, Status: 200, Options: opts,
	}
}

// checkBudget compares d, extracted under budget, with the page extracted
// without one: each output is cut, and marked, exactly when it is over the
// budget.
func checkBudget(t *testing.T, e *Extractor, d *distillv1.Distilled, page []byte, contentType string, opts *distillv1.FetchOptions, budget int64) {
	t.Helper()
	unlimited := proto.CloneOf(opts)
	unlimited.MaxOutputTokens = nil
	resp, err := e.Extract(context.Background(), fuzzRequest(page, contentType, unlimited))
	if err != nil {
		t.Fatalf("Extract without a budget: %v", err)
	}
	full := resp.GetDistilled()
	wantCut := false
	for _, out := range []struct {
		full, got string
		md        bool
	}{{full.GetMarkdown(), d.GetMarkdown(), true}, {full.GetText(), d.GetText(), false}} {
		if tokens.Count(out.full) <= budget {
			if out.got != out.full {
				t.Fatalf("output under the budget changed:\n%q\nwant\n%q", out.got, out.full)
			}
			continue
		}
		wantCut = true
		checkTruncated(t, out.full, out.got, budget, out.md)
	}
	if got := d.GetDiagnostics().GetTruncated(); got != wantCut {
		t.Errorf("truncated = %v, want %v", got, wantCut)
	}
}

// checkHTTP fails unless raw is an absolute http(s) URL with a host.
func checkHTTP(t *testing.T, what, raw string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		t.Errorf("%s href %q is not an absolute http(s) URL", what, raw)
	}
	if !utf8.ValidString(raw) {
		t.Errorf("%s href %q is not valid UTF-8", what, raw)
	}
}
