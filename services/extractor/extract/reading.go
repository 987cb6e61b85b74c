package extract

import (
	"html"
	"net/url"
	"regexp"
	"strings"

	"google.golang.org/protobuf/proto"

	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/chunk"
	"distill.dev/services/extractor/citations"
	"distill.dev/services/extractor/cleanhtml"
	"distill.dev/services/extractor/llmformat"
	"distill.dev/services/extractor/query"
	"distill.dev/services/extractor/tokens"
)

// The reading options shape the Markdown once it is made, in this order:
// the query keeps the blocks that answer it; then the token budget cuts
// what is left, with citations and the llm format cut so that their
// "## Links" section fits too; then chunks are cut from the result (with
// their links inline). The
// html format is cut between top-level elements. Each step is a pure
// function of the Markdown (or, for html, of the content's clean HTML),
// so saved pages, batches, crawls and the API get the same output.

// reading is what the reading options made of a page.
type reading struct {
	markdown, text string
	truncated      bool
	chunks         []*distillv1.Chunk
	relevance      *float64
	kept           *int32
}

// read applies the reading options and the token budget to p.
func read(opts *distillv1.FetchOptions, finalURL string, p page) reading {
	format := fetchopts.Format(opts)
	budget := fetchopts.MaxOutputTokens(opts)
	var r reading
	// selected is the Markdown the query kept, before any budget.
	selected := p.markdown
	if q := strings.TrimSpace(opts.GetQuery()); q != "" {
		res := query.Select(selected, q, budget)
		selected = res.Markdown
		r.relevance = proto.Float64(res.Relevance)
		r.kept = proto.Int32(int32(res.Kept))
	}
	u, _ := url.Parse(finalURL)

	var mdCut, textCut bool
	if opts.GetCitations() && format != distillv1.Format_FORMAT_LLM {
		r.markdown, mdCut = within(selected, budget, func(md string) string { return citations.Apply(md, u) })
	} else {
		r.markdown, mdCut = truncate(selected, budget, true)
	}
	switch format {
	case distillv1.Format_FORMAT_TEXT:
		r.text, textCut = truncate(p.text, budget, false)
	case distillv1.Format_FORMAT_LLM:
		// The facts a reader weighs a page by; the day is enough of a
		// timestamp, and the language shows in the text itself.
		lp := llmformat.Page{Title: p.title, URL: finalURL, Facts: [][2]string{
			{"Author", p.byline}, {"Published", day(p.meta.Published)}, {"Site", p.meta.SiteName},
		}}
		r.text, textCut = within(selected, budget, func(md string) string { return llmformat.Format(lp, md, u) })
	case distillv1.Format_FORMAT_HTML:
		hb := p.htmlBlocks
		if hb == nil {
			hb = cleanhtml.FromMarkdown(p.markdown)
		}
		r.text, textCut = htmlWithin(hb, budget)
	}
	r.truncated = mdCut || textCut || p.cut

	if n := opts.GetChunk(); n > 0 {
		// Chunks keep their links inline: a chunk stands alone in an
		// index, where the page's Links section is not.
		md := r.markdown
		if opts.GetCitations() {
			md, _ = truncate(selected, budget, true)
		}
		r.chunks = []*distillv1.Chunk{}
		for _, c := range chunk.Split(md, finalURL, int64(n), int64(opts.GetChunkOverlap())) {
			r.chunks = append(r.chunks, &distillv1.Chunk{
				Url: c.URL, Index: int32(c.Index), HeadingPath: c.HeadingPath, Tokens: c.Tokens, Text: c.Text,
			})
		}
	}
	return r
}

// isoDay is the date at the start of an ISO 8601 timestamp.
var isoDay = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}`)

// day returns the date of an ISO 8601 timestamp, or ts as it is.
func day(ts string) string {
	if d := isoDay.FindString(ts); d != "" {
		return d
	}
	return ts
}

// within renders md with render, cutting md first when the rendering is
// over budget tokens: the rendering's own parts (a header, the "## Links"
// section) shrink with the content they come from, so the cut is found by
// measuring the rendering rather than md.
func within(md string, budget int64, render func(string) string) (string, bool) {
	out := render(md)
	if budget <= 0 || tokens.Count(out) <= budget {
		return out, false
	}
	room := budget
	for range 6 {
		cutMD, _ := truncate(md, room, true)
		out = render(cutMD)
		n := tokens.Count(out)
		if n <= budget {
			return out, true
		}
		room -= n - budget
		if room <= 0 {
			break
		}
	}
	// Even the marker alone does not fit with the rendering's parts.
	out, _ = truncate(out, budget, true)
	return out, true
}

// htmlMarker ends clean HTML that the budget cut.
const htmlMarker = "<!-- truncated -->"

var tag = regexp.MustCompile(`<[^>]*>`)

// htmlWithin joins the clean HTML blocks that fit in budget tokens, one a
// line. When not even the first fits, its text is cut between words and
// given as a paragraph, so the output is never empty.
func htmlWithin(bs []string, budget int64) (string, bool) {
	all := strings.Join(bs, "\n")
	if budget <= 0 || tokens.Count(all) <= budget {
		return all, false
	}
	room := budget - tokens.Count("\n"+htmlMarker)
	// Each block is counted once, with a token for its line break and one
	// for the boundary; the sum bounds the joined count from above.
	var kept []string
	var used int64
	for _, b := range bs {
		if used += tokens.Count(b) + 2; used > room {
			break
		}
		kept = append(kept, b)
	}
	if len(kept) == 0 && len(bs) > 0 && room > 0 {
		text := html.UnescapeString(tag.ReplaceAllString(bs[0], " "))
		words, _ := tokens.Truncate(strings.Join(strings.Fields(text), " "), room-tokens.Count("<p></p>")-2)
		if words != "" {
			kept = append(kept, "<p>"+html.EscapeString(words)+"</p>")
		}
	}
	kept = append(kept, htmlMarker)
	out := strings.Join(kept, "\n")
	if tokens.Count(out) > budget {
		return htmlMarker, true
	}
	return out, true
}
