package extract

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/tokens"
)

const pageURLForTests = "https://news.example.com/world/2024/story.html"

func htmlReq(body string, opts *distillv1.FetchOptions) *internalv1.ExtractRequest {
	return &internalv1.ExtractRequest{Html: []byte(body), Url: pageURLForTests, Status: 200, Options: opts}
}

// articlePage is a page with a clear article and page furniture around it.
const articlePage = `<html><head><title>Ignored | News</title></head><body>
<nav><a href="/">Home</a><a href="/world/">World</a></nav>
<article>
<h1>Rivers Rise Across the Valley</h1>
<p>Heavy rain over the weekend pushed three rivers past their flood marks, and officials opened the emergency reservoirs for the first time since 2019.</p>
<p>Residents of the lower valley were asked to move vehicles to higher ground, and schools in two districts will stay closed until Wednesday at the earliest.</p>
<p>Forecasters expect the rain to ease by Tuesday night, though the rivers will keep rising for a day after that as water drains from the hills.</p>
<table><tr><th>River</th><th>Level</th></tr><tr><td>Avon</td><td>4.2 m</td></tr></table>
<p>See the <a href="/maps/flood">flood map</a> and the <a href="https://gov.example.org/alerts">official alerts</a>; <a href="/maps/flood">the map again</a>; <a href="javascript:share()">share</a>.</p>
</article>
<aside><a href="/popular">Popular</a><table><tr><td>ad</td></tr></table></aside>
<footer><a href="/about">About us</a></footer>
<script src="/app.js"></script>
</body></html>`

func TestTitleBylineExcerpt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		html        string
		wantTitle   string
		wantByline  *string
		wantExcerpt *string
	}{
		{
			name:      "og:title wins over title",
			html:      `<head><meta property="og:title" content="The Real Headline"><title>Other | Site</title></head><p>x</p>`,
			wantTitle: "The Real Headline",
		},
		{
			name:      "site suffix dropped when h1 matches",
			html:      `<head><title>Rivers Rise Again | Valley News</title></head><body><h1>Rivers Rise Again</h1></body>`,
			wantTitle: "Rivers Rise Again",
		},
		{
			name:      "site prefix dropped when h1 matches",
			html:      `<head><title>Valley News - Rivers Rise Again</title></head><body><h1>Rivers Rise Again</h1></body>`,
			wantTitle: "Rivers Rise Again",
		},
		{
			name:      "suffix dropped when it is the site name",
			html:      `<head><title>Rivers Rise Again — Valley News</title><meta property="og:site_name" content="Valley News"></head><p>x</p>`,
			wantTitle: "Rivers Rise Again",
		},
		{
			name:      "separator kept without evidence",
			html:      `<head><title>Go - The Language</title></head><p>x</p>`,
			wantTitle: "Go - The Language",
		},
		{
			name:      "first h1 without title",
			html:      `<body><h1>  Only   Heading </h1><h1>Second</h1></body>`,
			wantTitle: "Only Heading",
		},
		{
			name:       "meta author",
			html:       `<head><title>T</title><meta name="author" content="Ada Lovelace"></head>`,
			wantTitle:  "T",
			wantByline: proto.String("Ada Lovelace"),
		},
		{
			name:       "article:author URL skipped for rel=author",
			html:       `<head><title>T</title><meta property="article:author" content="https://facebook.com/ada"></head><body><a rel="author" href="/ada">By Ada Lovelace</a></body>`,
			wantTitle:  "T",
			wantByline: proto.String("Ada Lovelace"),
		},
		{
			name:       "itemprop author name",
			html:       `<title>T</title><div itemprop="author" itemscope><span itemprop="name">Grace Hopper</span>, Navy</div>`,
			wantTitle:  "T",
			wantByline: proto.String("Grace Hopper"),
		},
		{
			name:       "byline class",
			html:       `<title>T</title><p class="byline">by Alan Turing</p>`,
			wantTitle:  "T",
			wantByline: proto.String("Alan Turing"),
		},
		{
			name:       "json-ld author list in a graph",
			html:       `<title>T</title><script type="application/ld+json">{"@graph":[{"@type":"WebSite","name":"S"},{"@type":"NewsArticle","author":[{"name":"A One"},{"name":"B Two"}]}]}</script>`,
			wantTitle:  "T",
			wantByline: proto.String("A One, B Two"),
		},
		{
			name:        "meta description",
			html:        `<head><title>T</title><meta name="description" content=" A  short summary. "><meta property="og:description" content="Other"></head>`,
			wantTitle:   "T",
			wantExcerpt: proto.String("A short summary."),
		},
		{
			name:        "og description fallback",
			html:        `<head><title>T</title><meta property="og:description" content="OG summary"></head>`,
			wantTitle:   "T",
			wantExcerpt: proto.String("OG summary"),
		},
		{
			name:        "twitter description fallback",
			html:        `<head><title>T</title><meta name="twitter:description" content="Tweet summary"></head>`,
			wantTitle:   "T",
			wantExcerpt: proto.String("Tweet summary"),
		},
		{
			name:      "nothing found leaves optionals unset",
			html:      `<p>bare</p>`,
			wantTitle: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := run(t, htmlReq(tt.html, nil))
			if d.GetTitle() != tt.wantTitle {
				t.Errorf("title = %q, want %q", d.GetTitle(), tt.wantTitle)
			}
			if !equalOptional(d.Byline, tt.wantByline) {
				t.Errorf("byline = %v, want %v", show(d.Byline), show(tt.wantByline))
			}
			if !equalOptional(d.Excerpt, tt.wantExcerpt) {
				t.Errorf("excerpt = %v, want %v", show(d.Excerpt), show(tt.wantExcerpt))
			}
		})
	}
}

func equalOptional(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func show(s *string) string {
	if s == nil {
		return "unset"
	}
	return "\"" + *s + "\""
}

func TestProfiles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		opts        *distillv1.FetchOptions
		wantProfile string
		present     []string
		absent      []string
	}{
		{
			name:        "article by default",
			wantProfile: "article",
			present:     []string{"# Rivers Rise Across the Valley", "| River | Level |"},
			absent:      []string{"Home", "Popular", "About us"},
		},
		{
			name:        "full keeps furniture but not scripts",
			opts:        &distillv1.FetchOptions{Profile: distillv1.Profile_PROFILE_FULL},
			wantProfile: "full",
			present:     []string{"[Home](https://news.example.com/)", "Rivers Rise", "Popular", "About us"},
			absent:      []string{"app.js"},
		},
		{
			name:        "metadata",
			opts:        &distillv1.FetchOptions{Profile: distillv1.Profile_PROFILE_METADATA},
			wantProfile: "metadata",
			present:     []string{"# Ignored", "Heavy rain over the weekend", "Residents of the lower valley"},
			absent:      []string{"Forecasters expect", "| River |", "Home"},
		},
		{
			name:        "selector joins matches and ignores the profile",
			opts:        &distillv1.FetchOptions{Selector: "nav a, footer", Profile: distillv1.Profile_PROFILE_METADATA},
			wantProfile: "selector",
			present:     []string{"[Home](https://news.example.com/)", "[World](https://news.example.com/world/)", "[About us](https://news.example.com/about)"},
			absent:      []string{"Rivers"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			opts := tt.opts
			if opts == nil {
				opts = &distillv1.FetchOptions{}
			}
			opts.Diagnostics = true
			d := run(t, htmlReq(articlePage, opts))
			if got := d.GetDiagnostics().GetProfile(); got != tt.wantProfile {
				t.Errorf("profile = %q, want %q", got, tt.wantProfile)
			}
			for _, s := range tt.present {
				if !strings.Contains(d.GetMarkdown(), s) {
					t.Errorf("markdown lacks %q:\n%s", s, d.GetMarkdown())
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(d.GetMarkdown(), s) {
					t.Errorf("markdown still has %q:\n%s", s, d.GetMarkdown())
				}
			}
		})
	}
}

func TestMetadataProfileFacts(t *testing.T) {
	t.Parallel()
	page := `<html lang="fr"><head><title>Le Titre</title>
<meta name="author" content="Jeanne Martin">
<meta property="article:published_time" content="2024-05-01">
<meta property="og:site_name" content="Le Site">
<meta property="og:image" content="/img/lead.jpg">
<meta name="description" content="Un résumé.">
</head><body><article><p>Premier paragraphe assez long pour compter comme de la prose, avec des virgules, et du sens.</p></article></body></html>`
	d := run(t, htmlReq(page, &distillv1.FetchOptions{Profile: distillv1.Profile_PROFILE_METADATA}))
	want := "# Le Titre\n\n" +
		"- Author: Jeanne Martin\n" +
		"- Published: 2024-05-01\n" +
		"- Site: Le Site\n" +
		"- Language: fr\n" +
		"- Image: https://news.example.com/img/lead.jpg\n\n" +
		"> Un résumé.\n\n" +
		"Premier paragraphe assez long pour compter comme de la prose, avec des virgules, et du sens."
	if d.GetMarkdown() != want {
		t.Errorf("markdown =\n%s\nwant\n%s", d.GetMarkdown(), want)
	}
}

func TestSelector(t *testing.T) {
	t.Parallel()
	page := `<div class="card"><p>One</p><div class="card"><p>Nested</p></div></div><div class="card"><p>Two</p><script>x()</script><p hidden>secret</p></div>`
	tests := []struct {
		name     string
		selector string
		want     string
		wantErr  string
	}{
		{name: "matches joined, nested match not repeated", selector: ".card", want: "One\n\nNested\n\nTwo"},
		{name: "no match is empty", selector: "table.none", want: ""},
		{name: "invalid selector", selector: "p[", wantErr: `invalid selector "p[": `},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, err := newExtractor().Extract(context.Background(), htmlReq(page, &distillv1.FetchOptions{Selector: tt.selector}))
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want prefix %q", err, tt.wantErr)
				}
				if got := failure.CodeOf(err); got != failure.InvalidArgument {
					t.Errorf("code = %v, want InvalidArgument", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.GetDistilled().GetMarkdown(); got != tt.want {
				t.Errorf("markdown = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFormatText(t *testing.T) {
	t.Parallel()
	page := `<article><h1>Heading One</h1><p>First <a href="/x">linked</a> paragraph with <strong>bold</strong> words in it for length.</p>
<ul><li>alpha</li><li>beta</li></ul><h2>Second</h2><p>Closing paragraph that is long enough to be content on this page.</p></article>`

	t.Run("text format fills text and markdown", func(t *testing.T) {
		t.Parallel()
		d := run(t, htmlReq(page, &distillv1.FetchOptions{Format: distillv1.Format_FORMAT_TEXT}))
		want := "Heading One\n\nFirst linked paragraph with bold words in it for length.\n\n- alpha\n- beta\n\nSecond\n\nClosing paragraph that is long enough to be content on this page."
		if d.GetText() != want {
			t.Errorf("text =\n%q\nwant\n%q", d.GetText(), want)
		}
		if !strings.Contains(d.GetMarkdown(), "# Heading One") || !strings.Contains(d.GetMarkdown(), "[linked](https://news.example.com/x)") {
			t.Errorf("markdown not filled: %q", d.GetMarkdown())
		}
	})
	t.Run("markdown format leaves text empty", func(t *testing.T) {
		t.Parallel()
		d := run(t, htmlReq(page, nil))
		if d.GetText() != "" {
			t.Errorf("text = %q, want empty", d.GetText())
		}
	})
}

func TestStats(t *testing.T) {
	t.Parallel()
	const page = "<p>Hello world</p>"
	d := run(t, htmlReq(page, &distillv1.FetchOptions{Stats: true}))
	// Raw: "<p" ">Hello" " world" "</" "p" ">" is 6 tokens of o200k_base;
	// output "Hello world" is 2.
	want := &distillv1.Stats{RawBytes: 18, RawTokens: 6, OutputTokens: 2, SavedTokens: 4, SavedRatio: 0.6667}
	if !proto.Equal(d.GetStats(), want) {
		t.Errorf("stats = %v, want %v", d.GetStats(), want)
	}
	if d.GetMarkdown() != "Hello world" {
		t.Errorf("markdown = %q", d.GetMarkdown())
	}

	t.Run("absent unless asked", func(t *testing.T) {
		t.Parallel()
		if d := run(t, htmlReq(page, nil)); d.GetStats() != nil {
			t.Errorf("stats = %v, want nil", d.GetStats())
		}
	})
	t.Run("ratio rounded to four decimals", func(t *testing.T) {
		t.Parallel()
		d := run(t, htmlReq(articlePage, &distillv1.FetchOptions{Stats: true}))
		s := d.GetStats()
		if s.GetRawTokens() != tokens.Count(articlePage) || s.GetOutputTokens() != tokens.Count(d.GetMarkdown()) {
			t.Fatalf("stats = %v", s)
		}
		if s.GetSavedTokens() != s.GetRawTokens()-s.GetOutputTokens() {
			t.Errorf("saved = %d", s.GetSavedTokens())
		}
		if want := ratio(s.GetSavedTokens(), s.GetRawTokens()); s.GetSavedRatio() != want || s.GetSavedRatio()*10000 != float64(int64(s.GetSavedRatio()*10000)) {
			t.Errorf("saved_ratio = %v", s.GetSavedRatio())
		}
	})
}

func TestDiagnostics(t *testing.T) {
	t.Parallel()
	const challenge = `<html><head><title>Just a moment...</title></head><body><div id="cf-challenge-running"></div><p>Checking if the site connection is secure. This may take a few seconds while we verify your browser is not a bot, please stand by.</p></body></html>`
	const jsNotice = `<html><body><div id="app"><p>Loading…</p></div><noscript>Please enable JavaScript to continue.</noscript></body></html>`
	const shortNoScript = `<html><body><p>Short static page.</p></body></html>`
	tests := []struct {
		name       string
		req        *internalv1.ExtractRequest
		wantLow    bool
		wantReason string
		rendered   bool
		scripted   bool
	}{
		{name: "article is not low content", req: htmlReq(articlePage, nil), scripted: true},
		{name: "app shell", req: &internalv1.ExtractRequest{Html: readPage(t, "appshell.html"), Url: pageURLForTests}, wantLow: true, wantReason: "js_app", scripted: true},
		{name: "challenge page", req: htmlReq(challenge, nil), wantLow: true, wantReason: "challenge"},
		{name: "javascript notice", req: htmlReq(jsNotice, nil), wantLow: true, wantReason: "js_app"},
		{name: "short page without scripts", req: htmlReq(shortNoScript, nil)},
		{name: "rendered page", req: &internalv1.ExtractRequest{Html: []byte(articlePage), Url: pageURLForTests, Rendered: true}, rendered: true, scripted: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.req.Options = &distillv1.FetchOptions{Diagnostics: true}
			resp, err := newExtractor().Extract(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if got := resp.GetLowContentReason(); got != tt.wantReason {
				t.Errorf("low_content_reason = %q, want %q", got, tt.wantReason)
			}
			diag := resp.GetDistilled().GetDiagnostics()
			if diag.GetLowContent() != tt.wantLow {
				t.Errorf("low_content = %v, want %v", diag.GetLowContent(), tt.wantLow)
			}
			if diag.GetUsedHeadless() != tt.rendered {
				t.Errorf("used_headless = %v, want %v", diag.GetUsedHeadless(), tt.rendered)
			}
			if resp.GetScripted() != tt.scripted {
				t.Errorf("scripted = %v, want %v", resp.GetScripted(), tt.scripted)
			}
		})
	}

	t.Run("figures", func(t *testing.T) {
		t.Parallel()
		d := run(t, htmlReq(articlePage, &distillv1.FetchOptions{Diagnostics: true}))
		diag := d.GetDiagnostics()
		chars := int64(len([]rune(d.GetMarkdown())))
		want := &distillv1.Diagnostics{
			Profile:         "article",
			RawBytes:        int64(len(articlePage)),
			OutputChars:     chars,
			OutputTokens:    tokens.Count(d.GetMarkdown()),
			ExtractionRatio: ratio(chars, int64(len(articlePage))),
			// The flood map twice, the alerts once; the javascript link and
			// the links around the article do not count.
			LinkCount: 2,
			// The aside's table is not in the content.
			TableCount: 1,
			PageType:   "article",
		}
		if !proto.Equal(diag, want) {
			t.Errorf("diagnostics = %v, want %v", diag, want)
		}
	})
	t.Run("absent unless asked", func(t *testing.T) {
		t.Parallel()
		if d := run(t, htmlReq(articlePage, nil)); d.GetDiagnostics() != nil {
			t.Errorf("diagnostics = %v, want nil", d.GetDiagnostics())
		}
	})
}

// fragmentPage links within itself (a table of contents, a bare "#", its
// own URL with a fragment, "back to top") and to two other documents.
const fragmentPage = `<html><body><article>
<h1>Rivers Rise Across the Valley</h1>
<ul><li><a href="#causes">Causes</a></li><li><a href="#">Top</a></li>
<li><a href="https://news.example.com/world/2024/story.html#outlook">Outlook</a></li>
<li><a href="story.html#more">More</a></li></ul>
<p id="causes">Heavy rain over the weekend pushed three rivers past their flood marks (<a href="#outlook">outlook below</a>); see <a href="other.html#part-2">the other story</a>
and <a href="story.html?page=2">page two</a>, or <a href="https://news.example.com/world/2024/story.html#causes">link here</a>.</p>
</article><footer><a href="/">Home</a> <a href="#top">Back to top</a></footer></body></html>`

func TestLinks(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		page  string
		opts  *distillv1.FetchOptions
		want  []*distillv1.Link
		isNil bool
	}{
		{name: "not asked", page: articlePage, opts: &distillv1.FetchOptions{}, isNil: true},
		{name: "asked, none", page: "<p>No links here at all.</p>", opts: &distillv1.FetchOptions{ExtractLinks: true}, want: []*distillv1.Link{}},
		{
			name: "main content, deduplicated",
			page: articlePage,
			opts: &distillv1.FetchOptions{ExtractLinks: true},
			want: []*distillv1.Link{
				{Href: "https://news.example.com/maps/flood", Text: "flood map"},
				{Href: "https://gov.example.org/alerts", Text: "official alerts"},
			},
		},
		{
			name: "whole page",
			page: articlePage,
			opts: &distillv1.FetchOptions{LinksFull: true},
			want: []*distillv1.Link{
				{Href: "https://news.example.com/", Text: "Home"},
				{Href: "https://news.example.com/world/", Text: "World"},
				{Href: "https://news.example.com/maps/flood", Text: "flood map"},
				{Href: "https://gov.example.org/alerts", Text: "official alerts"},
				{Href: "https://news.example.com/popular", Text: "Popular"},
				{Href: "https://news.example.com/about", Text: "About us"},
			},
		},
		{
			name: "same-page fragments left out of the content's links",
			page: fragmentPage,
			opts: &distillv1.FetchOptions{ExtractLinks: true},
			want: []*distillv1.Link{
				{Href: "https://news.example.com/world/2024/other.html#part-2", Text: "the other story"},
				{Href: "https://news.example.com/world/2024/story.html?page=2", Text: "page two"},
			},
		},
		{
			name: "same-page fragments left out of every link",
			page: fragmentPage,
			opts: &distillv1.FetchOptions{LinksFull: true},
			want: []*distillv1.Link{
				{Href: "https://news.example.com/world/2024/other.html#part-2", Text: "the other story"},
				{Href: "https://news.example.com/world/2024/story.html?page=2", Text: "page two"},
				{Href: "https://news.example.com/", Text: "Home"},
			},
		},
		{
			name: "text collapsed, image alt as text, non-http dropped",
			page: `<p><a href="/a">  many
			   spaces </a> <a href="/b"><img src="/i.png" alt="Picture"></a> <a href="mailto:x@example.com">mail</a> <a href="ftp://x/">ftp</a> <a>none</a></p>`,
			opts: &distillv1.FetchOptions{ExtractLinks: true},
			want: []*distillv1.Link{
				{Href: "https://news.example.com/a", Text: "many spaces"},
				{Href: "https://news.example.com/b", Text: "Picture"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := run(t, htmlReq(tt.page, tt.opts))
			if tt.isNil {
				if d.GetLinks() != nil {
					t.Errorf("links = %v, want nil", d.GetLinks())
				}
				return
			}
			if d.GetLinks() == nil {
				t.Fatal("links = nil, want a list")
			}
			if !proto.Equal(d.GetLinks(), &distillv1.LinkList{Items: tt.want}) {
				t.Errorf("links = %v, want %v", d.GetLinks().GetItems(), tt.want)
			}
		})
	}
}

func TestContentTypes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		contentType string
		body        string
		url         string
		wantMD      string
		wantTitle   string
		wantCode    distillv1.ErrorCode
	}{
		{
			name:        "plain text as is",
			contentType: "text/plain; charset=utf-8",
			body:        "Line one\n\n  Line *two*\n",
			url:         "https://example.com/files/notes.txt",
			wantMD:      "Line one\n\n  Line *two*",
			wantTitle:   "notes.txt",
		},
		{
			name:        "json pretty in a fence",
			contentType: "application/json",
			body:        `{"a":1,"b":[true,null]}`,
			url:         "https://api.example.com/v1/items/42",
			wantMD:      "```json\n{\n  \"a\": 1,\n  \"b\": [\n    true,\n    null\n  ]\n}\n```",
			wantTitle:   "42",
		},
		{
			name:        "json suffix type",
			contentType: "application/ld+json",
			body:        `[1]`,
			url:         "https://example.com/",
			wantMD:      "```json\n[\n  1\n]\n```",
			wantTitle:   "example.com",
		},
		{
			name:        "invalid json as is",
			contentType: "application/json",
			body:        `{"a":`,
			url:         "https://example.com/x.json",
			wantMD:      `{"a":`,
			wantTitle:   "x.json",
		},
		{name: "xml", contentType: "application/rss+xml", body: "<rss><channel/></rss>", url: "https://example.com/feed.xml", wantMD: "<rss><channel/></rss>", wantTitle: "feed.xml"},
		{name: "csv", contentType: "text/csv", body: "a,b\n1,2", url: "https://example.com/d.csv", wantMD: "a,b\n1,2", wantTitle: "d.csv"},
		{name: "markdown", contentType: "text/markdown", body: "# Hi", url: "https://example.com/README.md", wantMD: "# Hi", wantTitle: "README.md"},
		{name: "html with parameters", contentType: "text/html; charset=UTF-8", body: "<p>Hi</p>", url: "https://example.com/", wantMD: "Hi"},
		{name: "xhtml", contentType: "application/xhtml+xml", body: "<p>Hi</p>", url: "https://example.com/", wantMD: "Hi"},
		{name: "empty type is html", body: "<p>Hi</p>", url: "https://example.com/", wantMD: "Hi"},
		{name: "image refused", contentType: "image/png", body: "\x89PNG\r\n\x1a\n", url: "https://example.com/a.png", wantCode: failure.UnsupportedContent},
		{name: "octet stream refused", contentType: "application/octet-stream", body: "\x00\x01", url: "https://example.com/a.bin", wantCode: failure.UnsupportedContent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, err := newExtractor().Extract(context.Background(), &internalv1.ExtractRequest{
				Html: []byte(tt.body), Url: tt.url, ContentType: tt.contentType,
				Options: &distillv1.FetchOptions{ExtractLinks: true},
			})
			if tt.wantCode != distillv1.ErrorCode_ERROR_CODE_UNSPECIFIED {
				if got := failure.CodeOf(err); got != tt.wantCode {
					t.Fatalf("code = %v (err %v), want %v", got, err, tt.wantCode)
				}
				if !strings.Contains(err.Error(), tt.contentType) {
					t.Errorf("error %q does not name the type", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d := resp.GetDistilled()
			if d.GetMarkdown() != tt.wantMD {
				t.Errorf("markdown = %q, want %q", d.GetMarkdown(), tt.wantMD)
			}
			if d.GetTitle() != tt.wantTitle {
				t.Errorf("title = %q, want %q", d.GetTitle(), tt.wantTitle)
			}
			if d.GetLinks() == nil {
				t.Error("links asked for but nil")
			}
		})
	}
}

func TestCharset(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		body        []byte
		contentType string
		want        string
	}{
		{
			name: "meta charset latin1",
			body: []byte("<html><head><meta charset=\"iso-8859-1\"></head><body><p>caf\xe9 cr\xe8me</p></body></html>"),
			want: "café crème",
		},
		{
			name:        "content-type charset",
			body:        []byte("<p>na\xefve</p>"),
			contentType: "text/html; charset=windows-1252",
			want:        "naïve",
		},
		{
			name: "valid utf-8 kept despite a wrong declaration",
			body: []byte(`<meta charset="iso-8859-1"><p>café</p>`),
			want: "café",
		},
		{
			name: "utf-8 byte order mark dropped",
			body: []byte("\xef\xbb\xbf<p>café</p>"),
			want: "café",
		},
		{
			name:        "plain text in latin1",
			body:        []byte("caf\xe9"),
			contentType: "text/plain; charset=iso-8859-1",
			want:        "café",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := run(t, &internalv1.ExtractRequest{Html: tt.body, Url: pageURLForTests, ContentType: tt.contentType})
			if d.GetMarkdown() != tt.want {
				t.Errorf("markdown = %q, want %q", d.GetMarkdown(), tt.want)
			}
		})
	}
}

func TestPageURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		url     string
		wantErr bool
	}{
		{"https", "https://example.com/a", false},
		{"http", "http://example.com", false},
		{"file", "file:///tmp/page.html", false},
		{"empty", "", true},
		{"relative", "/just/a/path", true},
		{"no host", "http:///path", true},
		{"other scheme", "ftp://example.com/a", true},
		{"javascript", "javascript:alert(1)", true},
		{"malformed", "http://[::1", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := newExtractor().Extract(context.Background(), &internalv1.ExtractRequest{Html: []byte("<p>x</p>"), Url: tt.url})
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				return
			}
			if failure.CodeOf(err) != failure.InvalidURL {
				t.Errorf("code = %v (err %v), want InvalidURL", failure.CodeOf(err), err)
			}
		})
	}
}

func TestBaseHref(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		page string
		want string
	}{
		{"relative base", `<base href="/docs/v2/"><a href="intro">Intro</a>`, "[Intro](https://news.example.com/docs/v2/intro)"},
		{"absolute base", `<base href="https://cdn.example.org/x/"><a href="y">Y</a>`, "[Y](https://cdn.example.org/x/y)"},
		{"javascript base ignored", `<base href="javascript:alert(1)"><a href="y">Y</a>`, "[Y](https://news.example.com/world/2024/y)"},
		{"base without href ignored", `<base target="_blank"><a href="y">Y</a>`, "[Y](https://news.example.com/world/2024/y)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if d := run(t, htmlReq(tt.page, nil)); d.GetMarkdown() != tt.want {
				t.Errorf("markdown = %q, want %q", d.GetMarkdown(), tt.want)
			}
		})
	}
}

func TestResultFields(t *testing.T) {
	t.Parallel()
	d := run(t, &internalv1.ExtractRequest{Html: []byte(articlePage), Url: pageURLForTests, Status: 203})
	if d.GetFinalUrl() != pageURLForTests || d.GetStatus() != 203 {
		t.Errorf("final_url, status = %q, %d", d.GetFinalUrl(), d.GetStatus())
	}
	if d.GetActions() != nil {
		t.Error("actions set")
	}
}

func TestCanceledContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := newExtractor().Extract(ctx, htmlReq(articlePage, nil))
	if !errors.Is(err, context.Canceled) || failure.CodeOf(err) != failure.Canceled {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

func TestSignalNamesAreFoundInAnyCase(t *testing.T) {
	for _, tt := range []struct {
		text string
		want bool
	}{
		{"Please enable JavaScript to continue", true},
		{"JAVASCRIPT IS DISABLED", true},
		{"javascript required", true},
		{"uses Javascript", true},
		{"a trip to Java and Lava", false},
		{"avail", false},
		{"ja", false},
	} {
		if got := mentionsJavaScript(tt.text); got != tt.want {
			t.Errorf("mentionsJavaScript(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
	for _, tt := range []struct {
		name string
		want bool
	}{
		{"cf-challenge", true},
		{"main CF-Browser-Verification", true},
		{"wrap px-captcha-box", true},
		{"DDoS-Guard", true},
		{"challenge", false},
		{"card product-card", false},
		{"c", false},
	} {
		if got := namesChallenge(tt.name); got != tt.want {
			t.Errorf("namesChallenge(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}
