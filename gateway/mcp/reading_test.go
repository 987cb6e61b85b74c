package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMCPReadingWithTypeScriptClient drives the reading options of
// fetch_url and fetch_urls through the official TypeScript client: a
// query, chunks, citations and the llm and html formats, on the article
// of the test site.
func TestMCPReadingWithTypeScriptClient(t *testing.T) {
	t.Parallel()
	needNode(t)
	site := pages(t)
	cfg := stdioConfig(t, site.URL)
	cfg.Reading = true
	r := runClient(t, cfg)
	text := func(label string) string {
		t.Helper()
		o := r.Calls[label]
		if o.IsError || o.ProtocolError != "" || len(o.Texts) == 0 {
			t.Fatalf("%s failed: %+v", label, o)
		}
		return o.Texts[0]
	}

	q := r.Calls["read_query"]
	if md := text("read_query"); !strings.Contains(md, "| November | 30 |") || strings.Contains(md, "ninety-one steps") {
		t.Errorf("fetch_url query kept:\n%s\nwant the table without the opening paragraph", md)
	}
	if len(q.Texts) != 2 || !strings.Contains(q.Texts[1], "query_relevance=") {
		t.Errorf("fetch_url query with diagnostics: %q, want query_relevance in the report", q.Texts)
	}

	var chunks []struct {
		URL         string   `json:"url"`
		Index       int      `json:"index"`
		HeadingPath []string `json:"heading_path"`
		Tokens      int      `json:"tokens"`
		Text        string   `json:"text"`
	}
	if err := json.Unmarshal([]byte(text("read_chunks")), &chunks); err != nil || len(chunks) < 2 {
		t.Fatalf("fetch_url chunk=24: %v, %d chunks", err, len(chunks))
	}
	for i, c := range chunks {
		if c.Index != i || c.URL != site.URL+"/article" || c.Tokens > 24 || c.Text == "" || c.HeadingPath == nil {
			t.Errorf("chunk %d = %+v", i, c)
		}
	}

	if md := text("read_citations"); !strings.Contains(md, "the fog signal notes[^1]") || !strings.Contains(md, "## Links\n\n[^1]: "+site.URL+"/fog") {
		t.Errorf("fetch_url citations:\n%s", md)
	}
	if llm := text("read_llm"); !strings.HasPrefix(llm, "# Keeping the Lamp\nURL: "+site.URL+"/article\nAuthor: Ines Varga") || !strings.Contains(llm, "[^1]") {
		t.Errorf("fetch_url format=llm:\n%s", llm)
	}
	if h := text("read_html"); !strings.Contains(h, "<h1>Keeping the Lamp</h1>") || !strings.Contains(h, "<td>November</td>") || strings.Contains(h, "<nav") {
		t.Errorf("fetch_url format=html:\n%s", h)
	}

	var batch []struct {
		URL    string `json:"url"`
		OK     bool   `json:"ok"`
		Result struct {
			Markdown string            `json:"markdown"`
			Chunks   []json.RawMessage `json:"chunks"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(text("read_batch")), &batch); err != nil || len(batch) != 2 {
		t.Fatalf("fetch_urls chunk=32: %v, %d items", err, len(batch))
	}
	for _, it := range batch {
		if !it.OK || len(it.Result.Chunks) == 0 {
			t.Errorf("fetch_urls %s: ok %t, %d chunks", it.URL, it.OK, len(it.Result.Chunks))
		}
	}
	if !strings.Contains(batch[0].Result.Markdown, "beam") || strings.Contains(batch[0].Result.Markdown, "| October |") {
		t.Errorf("fetch_urls query kept:\n%s", batch[0].Result.Markdown)
	}
	var llmBatch []struct {
		OK     bool `json:"ok"`
		Result struct {
			Markdown string `json:"markdown"`
			Content  string `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(text("read_batch_llm")), &llmBatch); err != nil || len(llmBatch) != 1 || !llmBatch[0].OK {
		t.Fatalf("fetch_urls format=llm: %v, %+v", err, llmBatch)
	}
	if c := llmBatch[0].Result.Content; c != text("read_llm") || llmBatch[0].Result.Markdown == "" {
		t.Errorf("fetch_urls format=llm: content %q, want what fetch_url gives in llm, beside the Markdown", c)
	}
	if bad := r.Calls["read_bad_chunk"]; !bad.IsError || len(bad.Texts) != 1 || !strings.Contains(bad.Texts[0], "chunk") {
		t.Errorf("chunk=4 = %+v, want a tool error naming chunk", bad)
	}

	if got := text("diff_unchanged"); got != "unchanged" {
		t.Errorf("diff against the page's own answer:\n%s", got)
	}
	if got := text("diff_changed"); !strings.Contains(got, `title: "Keeping the Old Lamp" -> "Keeping the Lamp"`) ||
		!strings.Contains(got, "blocks: 1 changed, 0 added, 0 removed") || !strings.Contains(got, "-| November | 12 |\n+| November | 30 |") {
		t.Errorf("diff against an edited answer:\n%s", got)
	}

	var b struct {
		Name   string `json:"name"`
		Colors []struct {
			Hex  string `json:"hex"`
			Name string `json:"name"`
		} `json:"colors"`
		Fonts  []string `json:"fonts"`
		Social []struct {
			Network string `json:"network"`
		} `json:"social"`
		Favicon *struct {
			URL string `json:"url"`
		} `json:"favicon"`
	}
	if err := json.Unmarshal([]byte(text("brand")), &b); err != nil {
		t.Fatalf("brand: %v", err)
	}
	// The linked stylesheet, read by the pipeline under the same policy,
	// adds its blue and its font after the page's own.
	if b.Name != "Harbour Log" || len(b.Colors) != 2 || b.Colors[0].Hex != "#c8102e" || b.Colors[0].Name != "--lamp-red" ||
		b.Colors[1].Hex != "#1d4ed8" || strings.Join(b.Fonts, ",") != "Merriweather,Lato" || len(b.Social) != 1 || b.Social[0].Network != "github" ||
		b.Favicon == nil || b.Favicon.URL != site.URL+"/favicon.ico" {
		t.Errorf("brand = %+v", b)
	}
}

// brandHTML is a page of the test site with a brand to read.
const brandHTML = `<!doctype html><html><head><title>Harbour Log</title>
<meta property="og:site_name" content="Harbour Log">
<link rel="stylesheet" href="/brand.css">
<style>:root { --lamp-red: #C8102E } h1 { color: var(--lamp-red); font-family: Merriweather, Georgia, serif } a { color: #c8102e }</style>
</head><body><main><h1>Harbour Log</h1><p>Notes from the point light, kept every night of the season by its keeper.</p>
<p><a href="https://github.com/harbour-log">Our code</a></p></main></body></html>`

// brandCSS is the stylesheet brandHTML links.
const brandCSS = `.cta { background: #1d4ed8; font-family: "Lato", sans-serif } .cta:hover { color: #1D4ED8 }`
