package extract

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/tokens"
)

// readingHostilePages are pages built against the reading tools: blocks by
// the hundred thousand (every chunk, query and diff step once per block),
// paragraphs of unclosed brackets, backticks and link openings (every link
// and code span looked for from each), and the shared hostile pages.
func readingHostilePages() []hostilePage {
	tiny := "<html><body><article><h1>Tiny</h1>" + strings.Repeat("<p>word</p>", 150_000) + "</article></body></html>"
	// The Markdown conversion escapes a long run of brackets in time
	// quadratic in its length (300,000 take minutes), so the run here is
	// short; citations' own test takes a long one.
	marks := "<html><body><article><h1>Marks</h1><p>" + strings.Repeat("[", 5_000) + "</p><p>" +
		strings.Repeat("`x``", 100_000) + "</p><p>" + strings.Repeat("[a](", 100_000) + "</p></article></body></html>"
	return append([]hostilePage{
		{name: "150k-blocks", page: []byte(tiny), want: "word"},
		{name: "brackets", page: []byte(marks), want: "Marks"},
	}, hostilePages()...)
}

func TestHostileReading(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("hostile pages take seconds")
	}
	budget := int64(hostileBudget)
	many := strings.Repeat("old block\n\n", 20_000)
	options := map[string]*distillv1.FetchOptions{
		"query-chunks": {Query: "word paragraph link", Chunk: 512, ChunkOverlap: 64, Diagnostics: true},
		"chunks-64":    {Chunk: 64, ChunkOverlap: 16},
		"citations":    {Citations: true, MaxOutputTokens: &budget},
		"llm":          {Format: distillv1.Format_FORMAT_LLM, MaxOutputTokens: &budget},
		"html":         {Format: distillv1.Format_FORMAT_HTML, MaxOutputTokens: &budget},
		"brand":        {Brand: true},
		"diff":         {DiffWith: &distillv1.Distilled{FinalUrl: pageURLForTests, Markdown: many}, MaxOutputTokens: proto.Int64(50_000)},
	}
	e := newExtractor()
	for _, p := range readingHostilePages() {
		for name, opts := range options {
			t.Run(p.name+"/"+name, func(t *testing.T) {
				if raceDetector && len(p.page) > 1<<20 {
					t.Skip("megabytes of page take minutes under the race detector")
				}
				t.Parallel()
				resp, err := e.Extract(context.Background(), &internalv1.ExtractRequest{
					Html: p.page, Url: pageURLForTests, Status: 200, Options: opts,
				})
				if err != nil {
					t.Fatalf("Extract: %v", err)
				}
				d := resp.GetDistilled()
				for _, c := range d.GetChunks().GetItems() {
					if n := tokens.Count(c.GetText()); n > int64(opts.GetChunk()) {
						t.Fatalf("chunk %d has %d tokens, over %d", c.GetIndex(), n, opts.GetChunk())
					}
				}
				if b := opts.GetMaxOutputTokens(); b > 0 {
					for _, out := range []string{d.GetMarkdown(), d.GetText()} {
						if n := tokens.Count(out); n > b {
							t.Errorf("%d tokens, over the budget of %d", n, b)
						}
					}
				}
				if opts.GetDiffWith() != nil && !d.GetDiff().GetChanged() {
					t.Error("a diff against another page found no change")
				}
				if opts.GetBrand() && d.GetBrand() == nil {
					t.Error("no brand")
				}
			})
		}
	}
}
