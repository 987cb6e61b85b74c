package extract

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/chunk"
	"distill.dev/services/extractor/internal/golden"
	"distill.dev/services/extractor/tokens"
)

// readingPages are the fixture pages written for the reading tools, with
// the URLs they are served at.
var readingPages = map[string]string{
	"reading/wiki.html":       "https://shorepedia.example/wiki/Tide_pool",
	"reading/docs.html":       "https://harbor.example/docs/limits/",
	"reading/pricing-v1.html": "https://harbor.example/pricing",
	"reading/pricing-v2.html": "https://harbor.example/pricing",
	"reading/brand.html":      "https://harbor.example/",
}

func extractPage(t *testing.T, name string, opts *distillv1.FetchOptions) *distillv1.Distilled {
	t.Helper()
	u, ok := readingPages[name]
	if !ok {
		u = "https://fixture.example/" + strings.TrimSuffix(filepath.Base(name), ".html") + "/"
	}
	return run(t, &internalv1.ExtractRequest{
		Url: u, Status: 200, ContentType: "text/html; charset=utf-8", Html: readPage(t, name), Options: opts,
	})
}

// TestReadingGoldens runs each reading option on the fixture pages; the
// golden files were reviewed by hand. The assertions beside them hold
// what the review checked, so a golden regenerated blindly still fails
// when the behaviour breaks.
func TestReadingGoldens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		page    string
		opts    *distillv1.FetchOptions
		present []string
		absent  []string
	}{
		{
			name: "query-wiki", page: "reading/wiki.html",
			opts:    &distillv1.FetchOptions{Query: "Who began studying tide pools as a personal project?"},
			present: []string{"# Tide pool", "## History of study", "Ed Ricketts", "personal project"},
			absent:  []string{"## Zones", "Typical life", "hermit crabs"},
		},
		{
			name: "query-docs-code", page: "reading/docs.html",
			opts:    &distillv1.FetchOptions{Query: "how do I back off in python when refused?"},
			present: []string{"## Backing off", "### Python", "```python", "fetch_with_backoff"},
			absent:  []string{"| Team | 600 | 100 |", "X-RateLimit-Reset"},
		},
		{
			name: "query-docs-table", page: "reading/docs.html",
			opts:    &distillv1.FetchOptions{Query: "burst for the team plan"},
			present: []string{"## Limits by plan", "| Team | 600 | 100 |"},
			absent:  []string{"```go"},
		},
		{
			name: "citations-wiki", page: "reading/wiki.html",
			opts: &distillv1.FetchOptions{Citations: true},
			present: []string{"see Tide Pool (band)[^1]", "seawater[^2]", "## Links", "[^2]: https://shorepedia.example/wiki/Seawater", "sea urchins[^6], which",
				"![A green sea anemone][^", "Show more"},
			absent: []string{"](http", "javascript:", "#cite-1"},
		},
		{
			name: "llm-wiki", page: "reading/wiki.html",
			opts:    &distillv1.FetchOptions{Format: distillv1.Format_FORMAT_LLM},
			present: []string{"# Tide pool\nURL: https://shorepedia.example/wiki/Tide_pool\nSite: Shorepedia", "## Links", "(image: A green sea anemone)"},
			absent:  []string{"**", "](http", "anemone.jpg"},
		},
		{
			name: "llm-query-docs", page: "reading/docs.html",
			opts:    &distillv1.FetchOptions{Format: distillv1.Format_FORMAT_LLM, Query: "response headers remaining requests"},
			present: []string{"URL: https://harbor.example/docs/limits/", "X-RateLimit-Remaining"},
			absent:  []string{"```python"},
		},
		{
			name: "html-docs", page: "reading/docs.html",
			opts:    &distillv1.FetchOptions{Format: distillv1.Format_FORMAT_HTML},
			present: []string{"<h1>Rate limits</h1>", `<pre class="language-python">`, "<th>Plan</th>", `<a href="https://harbor.example/docs/errors/#429">`},
			absent:  []string{"<nav", "<script", "class=\"sidebar\"", "<div", "Terms"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := extractPage(t, tt.page, tt.opts)
			got := d.GetMarkdown()
			if f := tt.opts.GetFormat(); f == distillv1.Format_FORMAT_LLM || f == distillv1.Format_FORMAT_HTML {
				got = d.GetText()
			}
			for _, s := range tt.present {
				if !strings.Contains(got, s) {
					t.Errorf("missing %q", s)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(got, s) {
					t.Errorf("has %q", s)
				}
			}
			golden.Check(t, "reading/"+tt.name+".md", got)
		})
	}
}

func TestQueryUnchangedWhenNothingMatches(t *testing.T) {
	t.Parallel()
	plain := extractPage(t, "reading/wiki.html", &distillv1.FetchOptions{Diagnostics: true})
	asked := extractPage(t, "reading/wiki.html", &distillv1.FetchOptions{Diagnostics: true, Query: "quantum chromodynamics lattice"})
	if asked.GetMarkdown() != plain.GetMarkdown() {
		t.Errorf("a query that matches nothing changed the page:\n%s", asked.GetMarkdown())
	}
	g := asked.GetDiagnostics()
	if g.QueryRelevance == nil || g.GetQueryRelevance() != 0 || g.QueryBlocks == nil || g.GetQueryBlocks() != 0 {
		t.Errorf("diagnostics relevance %v blocks %v, want 0 and 0", g.QueryRelevance, g.QueryBlocks)
	}
	if plain.GetDiagnostics().QueryRelevance != nil {
		t.Error("query_relevance present without a query")
	}
}

func TestQueryKeepsToTheBudget(t *testing.T) {
	t.Parallel()
	budget := int64(60)
	d := extractPage(t, "reading/wiki.html", &distillv1.FetchOptions{Query: "sea stars mussels kelp urchins", MaxOutputTokens: &budget, Diagnostics: true})
	if n := tokens.Count(d.GetMarkdown()); n > budget {
		t.Errorf("query output has %d tokens, budget %d", n, budget)
	}
	if d.GetDiagnostics().GetQueryRelevance() <= 0 {
		t.Errorf("relevance %v", d.GetDiagnostics().GetQueryRelevance())
	}
}

// TestCitationsAndLLMKeepTheBudget cuts cited output so that its Links
// section fits too.
func TestCitationsAndLLMKeepTheBudget(t *testing.T) {
	t.Parallel()
	for _, budget := range []int64{40, 80, 150} {
		for _, opts := range []*distillv1.FetchOptions{
			{Citations: true, MaxOutputTokens: &budget, Diagnostics: true},
			{Format: distillv1.Format_FORMAT_LLM, MaxOutputTokens: &budget, Diagnostics: true},
			{Format: distillv1.Format_FORMAT_HTML, MaxOutputTokens: &budget, Diagnostics: true},
		} {
			d := extractPage(t, "reading/wiki.html", opts)
			out := d.GetMarkdown()
			if opts.GetFormat() != distillv1.Format_FORMAT_UNSPECIFIED {
				out = d.GetText()
			}
			if n := tokens.Count(out); n > budget || !d.GetDiagnostics().GetTruncated() {
				t.Errorf("%v budget %d: %d tokens, truncated %t:\n%s", opts.GetFormat(), budget, n, d.GetDiagnostics().GetTruncated(), out)
			}
			if opts.GetFormat() == distillv1.Format_FORMAT_HTML && strings.Count(out, "<") != strings.Count(out, ">") {
				t.Errorf("html cut inside a tag:\n%s", out)
			}
			if opts.GetFormat() != distillv1.Format_FORMAT_HTML && strings.Contains(out, "[^") && !strings.Contains(out, "## Links") {
				t.Errorf("budget %d: citations without their Links section:\n%s", budget, out)
			}
		}
	}
}

func TestChunksGolden(t *testing.T) {
	t.Parallel()
	d := extractPage(t, "reading/docs.html", &distillv1.FetchOptions{Chunk: 64, ChunkOverlap: 16})
	b, err := json.MarshalIndent(d.GetChunks().GetItems(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range d.GetChunks().GetItems() {
		if c.GetUrl() != "https://harbor.example/docs/limits/" || c.GetTokens() > 64 {
			t.Errorf("chunk %d: url %q tokens %d", c.GetIndex(), c.GetUrl(), c.GetTokens())
		}
	}
	golden.Check(t, "reading/chunks-docs.json", string(b))
}

// chunkSizes are the sizes the bound is checked at: the smallest allowed,
// a tight one that cuts most blocks, and common retrieval sizes.
var chunkSizes = []struct{ size, overlap int32 }{{16, 0}, {40, 10}, {128, 0}, {256, 50}, {512, 64}}

// corpusChunkSizes are the sizes the corpus is cut at: the smallest, one
// that cuts most long paragraphs, and common sizes with and without
// overlap.
var corpusChunkSizes = []struct{ size, overlap int32 }{{16, 0}, {48, 12}, {256, 50}, {512, 0}}

// checkChunkBound extracts html with each chunk size and fails on any
// chunk over it, counted again here with the tokenizer.
func checkChunkBound(t *testing.T, e *Extractor, name, u string, page []byte, sizes []struct{ size, overlap int32 }) {
	t.Helper()
	for _, cs := range sizes {
		resp, err := e.Extract(context.Background(), &internalv1.ExtractRequest{
			Url: u, Status: 200, ContentType: "text/html", Html: page,
			Options: &distillv1.FetchOptions{Chunk: cs.size, ChunkOverlap: cs.overlap},
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		items := resp.GetDistilled().GetChunks().GetItems()
		if strings.TrimSpace(resp.GetDistilled().GetMarkdown()) != "" && len(items) == 0 {
			t.Errorf("%s, chunk %d: no chunks of a page with content", name, cs.size)
		}
		for _, c := range items {
			if n := tokens.Count(c.GetText()); n > int64(cs.size) || n != c.GetTokens() {
				t.Errorf("%s, chunk %d overlap %d: chunk %d has %d tokens (says %d)", name, cs.size, cs.overlap, c.GetIndex(), n, c.GetTokens())
			}
		}
	}
}

// TestChunkBoundOnFixtures checks the bound on every HTML fixture of the
// package.
func TestChunkBoundOnFixtures(t *testing.T) {
	t.Parallel()
	e := newExtractor()
	var pages []string
	for _, pattern := range []string{"testdata/*.html", "testdata/reading/*.html"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, m...)
	}
	if len(pages) < 8 {
		t.Fatalf("found %d fixture pages", len(pages))
	}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		checkChunkBound(t, e, p, "https://fixture.example/page", b, chunkSizes)
	}
}

// benchCorpus finds the shared scrapinghub corpus: DISTILL_BENCH_CORPUS,
// or shared/bench/scrapinghub beside one of this checkout's parent
// folders (the repository's own parent holds shared/ on every machine the
// project runs on).
func benchCorpus(t testing.TB) string {
	t.Helper()
	if dir := os.Getenv("DISTILL_BENCH_CORPUS"); dir != "" {
		return dir
	}
	dir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	for {
		c := filepath.Join(dir, "shared", "bench", "scrapinghub")
		if _, err := os.Stat(filepath.Join(c, "html")); err == nil {
			return c
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("the shared corpus (shared/bench/scrapinghub) is not beside any parent folder; set DISTILL_BENCH_CORPUS")
		}
		dir = parent
	}
}

// BenchmarkChunkBoundOnCorpus checks the bound on every page of the
// shared scrapinghub corpus, which lives beside the repository, not in it,
// so it is a benchmark that make bench-chunks runs rather than a test. Each page is extracted once and its Markdown cut at
// every size: the chunker is what the bound is about, and the fixtures
// above check the same through the extraction option.
func BenchmarkChunkBoundOnCorpus(t *testing.B) {
	pages, err := filepath.Glob(filepath.Join(benchCorpus(t), "html", "*.html"))
	if err != nil || len(pages) == 0 {
		t.Fatalf("no corpus pages (%v)", err)
	}
	e := newExtractor()
	var chunks int
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := e.Extract(context.Background(), &internalv1.ExtractRequest{
			Url: "https://corpus.example/", Status: 200, ContentType: "text/html", Html: b,
		})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		md := resp.GetDistilled().GetMarkdown()
		for _, cs := range corpusChunkSizes {
			for _, c := range chunk.Split(md, "u", int64(cs.size), int64(cs.overlap)) {
				chunks++
				if n := tokens.Count(c.Text); n > int64(cs.size) || n != c.Tokens {
					t.Errorf("%s, chunk %d overlap %d: chunk %d has %d tokens (says %d)", filepath.Base(p), cs.size, cs.overlap, c.Index, n, c.Tokens)
				}
			}
		}
	}
	if chunks < len(pages) {
		t.Errorf("%d chunks of %d pages", chunks, len(pages))
	}
	t.ReportMetric(float64(len(pages)), "pages")
	t.ReportMetric(float64(chunks), "chunks")
}

// BenchmarkReadingTokens measures, over the shared corpus, the tokens of
// plain Markdown, Markdown with --citations and --format llm, and reports
// what each saves against plain Markdown, in total and for the median
// page. Run it with -benchtime=1x: it measures sizes, not speed.
func BenchmarkReadingTokens(b *testing.B) {
	pages, err := filepath.Glob(filepath.Join(benchCorpus(b), "html", "*.html"))
	if err != nil || len(pages) == 0 {
		b.Fatalf("no corpus pages (%v)", err)
	}
	e := newExtractor()
	count := func(page []byte, opts *distillv1.FetchOptions) int64 {
		resp, err := e.Extract(context.Background(), &internalv1.ExtractRequest{
			Url: "https://corpus.example/article", Status: 200, ContentType: "text/html", Html: page, Options: opts,
		})
		if err != nil {
			b.Fatal(err)
		}
		d := resp.GetDistilled()
		if opts.GetFormat() == distillv1.Format_FORMAT_LLM {
			return tokens.Count(d.GetText())
		}
		return tokens.Count(d.GetMarkdown())
	}
	for b.Loop() {
		var plain, cited, llm int64
		var citedSaved, llmSaved []float64
		for _, p := range pages {
			page, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			m := count(page, nil)
			c := count(page, &distillv1.FetchOptions{Citations: true})
			l := count(page, &distillv1.FetchOptions{Format: distillv1.Format_FORMAT_LLM})
			plain, cited, llm = plain+m, cited+c, llm+l
			if m > 0 {
				citedSaved = append(citedSaved, 1-float64(c)/float64(m))
				llmSaved = append(llmSaved, 1-float64(l)/float64(m))
			}
		}
		b.ReportMetric(float64(plain), "markdown-tokens")
		b.ReportMetric(100*(1-float64(cited)/float64(plain)), "citations-saved-%")
		b.ReportMetric(100*(1-float64(llm)/float64(plain)), "llm-saved-%")
		b.ReportMetric(100*median(citedSaved), "citations-median-saved-%")
		b.ReportMetric(100*median(llmSaved), "llm-median-saved-%")
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestDiffPricingPages compares the two versions of the pricing page, the
// older one as its JSON answer would be read back.
func TestDiffPricingPages(t *testing.T) {
	t.Parallel()
	old := extractPage(t, "reading/pricing-v1.html", &distillv1.FetchOptions{Format: distillv1.Format_FORMAT_JSON})
	old.Text = ""
	d := extractPage(t, "reading/pricing-v2.html", &distillv1.FetchOptions{Format: distillv1.Format_FORMAT_JSON, DiffWith: old}).GetDiff()
	if !d.GetChanged() {
		t.Fatal("the new pricing page is unchanged")
	}
	var kinds []string
	for _, b := range d.GetBlocks() {
		kinds = append(kinds, b.GetChange())
	}
	if got := strings.Join(kinds, " "); got != "changed changed changed" {
		t.Errorf("block changes %q, want the heading, the table and the discount paragraph changed", got)
	}
	if len(d.GetFields()) != 1 || d.GetFields()[0].GetField() != "title" {
		t.Errorf("fields %v, want the title", d.GetFields())
	}
	if strings.Join(d.GetLinksAdded(), " ") != "https://harbor.example/billing/yearly" || strings.Join(d.GetLinksRemoved(), " ") != "https://harbor.example/contact" {
		t.Errorf("links added %v, removed %v", d.GetLinksAdded(), d.GetLinksRemoved())
	}
	golden.Check(t, "reading/diff-pricing.json", golden.ProtoJSON(t, d))

	same := extractPage(t, "reading/pricing-v1.html", &distillv1.FetchOptions{DiffWith: old}).GetDiff()
	if same.GetChanged() || len(same.GetBlocks()) > 0 || same.GetUnified() != "" {
		t.Errorf("the same page diffs as %v, want unchanged", same)
	}
}

// TestBrand reads the brand of a page whose styles, icons, JSON-LD and
// links say who publishes it.
func TestBrand(t *testing.T) {
	t.Parallel()
	d := extractPage(t, "reading/brand.html", &distillv1.FetchOptions{Brand: true})
	b := d.GetBrand()
	if b == nil {
		t.Fatal("no brand")
	}
	if b.GetName() != "Harbor" || b.GetThemeColor() != "#0b5fff" {
		t.Errorf("name %q theme %q", b.GetName(), b.GetThemeColor())
	}
	if len(b.GetLogos()) != 2 || b.GetLogos()[0].GetUrl() != "https://harbor.example/img/logo-512.png" || b.GetLogos()[0].GetWidth() != 512 ||
		b.GetLogos()[1].GetUrl() != "https://harbor.example/img/logo.svg" || b.GetLogos()[1].GetHeight() != 32 {
		t.Errorf("logos %v", b.GetLogos())
	}
	if f := b.GetFavicon(); f.GetUrl() != "https://harbor.example/favicon-32.png" || f.GetWidth() != 32 {
		t.Errorf("favicon %v", f)
	}
	if len(b.GetColors()) != 2 || b.GetColors()[0].GetHex() != "#0b5fff" || b.GetColors()[0].GetName() != "--brand-primary" ||
		b.GetColors()[1].GetHex() != "#ff7a00" || b.GetColors()[1].GetName() != "--brand-accent" {
		t.Errorf("colors %v, want the two brand colours and no grays", b.GetColors())
	}
	if strings.Join(b.GetFonts(), ",") != "Inter,Space Mono" {
		t.Errorf("fonts %v", b.GetFonts())
	}
	var social []string
	for _, s := range b.GetSocial() {
		social = append(social, s.GetNetwork()+"="+s.GetUrl())
	}
	if strings.Join(social, " ") != "twitter=https://twitter.com/harborapi youtube=https://www.youtube.com/@harborapi github=https://github.com/harbor-example linkedin=https://www.linkedin.com/company/harbor-example" {
		t.Errorf("social %v", social)
	}
	if strings.Join(b.GetStylesheets(), " ") != "https://harbor.example/assets/site.css https://fonts.googleapis.com/css?family=Inter:400,700|Space+Mono" {
		t.Errorf("stylesheets %v", b.GetStylesheets())
	}
	golden.Check(t, "reading/brand.json", golden.ProtoJSON(t, b))

	if extractPage(t, "reading/brand.html", nil).GetBrand() != nil {
		t.Error("a brand without asking")
	}
}
