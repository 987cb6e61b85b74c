package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden (rerun with -update after review):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func str(s string) *string { return &s }

// full has every part of the schema set.
func full() *distillv1.Distilled {
	return &distillv1.Distilled{
		FinalUrl: "https://example.com/post",
		Status:   200,
		Title:    "A <post> & more",
		Byline:   str("Ada Lovelace"),
		Excerpt:  str("On engines."),
		Markdown: "# A post\n\nBody with <tags> & [a link](https://example.com/a).",
		Text:     "must not appear in JSON",
		Stats:    &distillv1.Stats{RawBytes: 12000, RawTokens: 3000, OutputTokens: 120, SavedTokens: 2880, SavedRatio: 0.96},
		Links:    &distillv1.LinkList{Items: []*distillv1.Link{{Href: "https://example.com/a", Text: "a link"}}},
		Tables: &distillv1.TableList{Items: []*distillv1.Table{{
			Headers: []string{"Name", "Age"},
			Rows:    []*distillv1.TableRow{{Cells: []string{"Ada", "36"}}},
			Caption: str("People"),
		}}},
		Actions: &distillv1.Actions{
			Links: []*distillv1.LinkAction{{ActionId: "link_0", Href: "https://example.com/a", Text: "a link"}},
			Forms: []*distillv1.FormAction{{
				ActionId: "form_0", Method: "GET", Action: "https://example.com/search", SubmitId: "form_0.submit",
				Fields: []*distillv1.FormField{
					{Name: "q", Kind: "search", Label: str("Search"), Required: true},
					{Name: "sort", Kind: "select", Value: str("new"), Options: []*distillv1.SelectOption{
						{Value: "new", Label: "Newest", Selected: true}, {Value: "old", Label: "Oldest"},
					}},
					{Name: "csrf", Kind: "hidden", Value: str("t0k3n")},
				},
			}},
			Buttons:   []*distillv1.ButtonAction{{ActionId: "button_0", Text: "Dark mode", Kind: "button"}},
			Downloads: []*distillv1.DownloadAction{{ActionId: "download_0", Href: "https://example.com/a.pdf", Text: "PDF", Filename: str("a.pdf")}},
		},
		Diagnostics: &distillv1.Diagnostics{
			Profile: "article", RawBytes: 12000, OutputChars: 480, OutputTokens: 120, ExtractionRatio: 0.04,
			LinkCount: 1, TableCount: 1, ActionCount: 4, Truncated: true,
		},
	}
}

func TestJSONGolden(t *testing.T) {
	tests := []struct {
		name string
		page *distillv1.Distilled
	}{
		{"full.json", full()},
		// Nothing optional asked for: only the five always-present fields.
		{"minimal.json", &distillv1.Distilled{FinalUrl: "https://example.com/", Status: 404, Markdown: "Not found"}},
		// Extraction asked for and empty: empty lists, not absent.
		{"asked-empty.json", &distillv1.Distilled{
			FinalUrl: "https://example.com/", Status: 200, Title: "Empty",
			Links: &distillv1.LinkList{}, Tables: &distillv1.TableList{}, Actions: &distillv1.Actions{},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteJSON(&buf, tt.page); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, buf.Bytes())
		})
	}
}

// TestJSONFieldSets pins the key sets of the public schema independently of
// the golden text, so a renamed or dropped field fails with its name.
func TestJSONFieldSets(t *testing.T) {
	var m map[string]any
	b, err := MarshalDistilled(full())
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	assertKeys(t, "distilled", m, "final_url", "status", "title", "byline", "excerpt", "markdown", "stats", "links", "tables", "actions", "diagnostics")
	assertKeys(t, "stats", m["stats"].(map[string]any), "raw_bytes", "raw_tokens", "output_tokens", "saved_tokens", "saved_ratio")
	assertKeys(t, "diagnostics", m["diagnostics"].(map[string]any), "profile", "raw_bytes", "output_chars", "output_tokens", "extraction_ratio", "link_count", "table_count", "action_count", "used_headless", "truncated", "low_content")
	assertKeys(t, "link", m["links"].([]any)[0].(map[string]any), "href", "text")
	assertKeys(t, "table", m["tables"].([]any)[0].(map[string]any), "headers", "rows", "caption")
	actions := m["actions"].(map[string]any)
	assertKeys(t, "actions", actions, "links", "forms", "buttons", "downloads")
	form := actions["forms"].([]any)[0].(map[string]any)
	assertKeys(t, "form", form, "action_id", "method", "action", "fields", "submit_id")
	assertKeys(t, "link action", actions["links"].([]any)[0].(map[string]any), "action_id", "text", "href")
	assertKeys(t, "download", actions["downloads"].([]any)[0].(map[string]any), "action_id", "text", "href", "filename")
	assertKeys(t, "button", actions["buttons"].([]any)[0].(map[string]any), "action_id", "text", "kind")
	fields := form["fields"].([]any)
	assertKeys(t, "select field", fields[1].(map[string]any), "name", "kind", "value", "options", "required")
	assertKeys(t, "hidden field", fields[2].(map[string]any), "name", "kind", "value", "required")
	option := fields[1].(map[string]any)["options"].([]any)[0].(map[string]any)
	assertKeys(t, "select option", option, "value", "label", "selected")
	if _, isNumber := m["stats"].(map[string]any)["raw_bytes"].(float64); !isNumber {
		t.Error("raw_bytes is not a JSON number")
	}
}

func assertKeys(t *testing.T, what string, m map[string]any, want ...string) {
	t.Helper()
	var got []string
	for k := range m {
		got = append(got, k)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s keys = %v, want %v", what, got, want)
	}
}

func TestBatchJSONKeepsOrderAndShape(t *testing.T) {
	var buf bytes.Buffer
	err := WriteBatchJSON(&buf, []BatchItem{
		{URL: "https://b.example/", Result: &distillv1.Distilled{FinalUrl: "https://b.example/", Status: 200, Markdown: "B"}},
		{URL: "http://10.0.0.1/", Err: errors.New("fetch http://10.0.0.1/: blocked by network policy")},
		{URL: "https://a.example/", Result: &distillv1.Distilled{FinalUrl: "https://a.example/", Status: 200, Markdown: "A"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "batch.json", buf.Bytes())
}

// The compact batch is the indented one with its whitespace taken out, byte
// for byte: Markdown's <, > and & stay as they are, and U+2028 is escaped in
// both.
func TestMarshalBatchJSONIsTheIndentedBatchCompacted(t *testing.T) {
	page := full()
	page.Markdown += "\n\nA line\u2028separator, \"quotes\", tabs\tand émigré."
	items := []BatchItem{
		{URL: "https://example.com/post", Result: page},
		{URL: "http://10.0.0.1/", Err: errors.New("fetch http://10.0.0.1/: blocked <by> network & policy")},
		{URL: "https://example.com/empty", Result: &distillv1.Distilled{Links: &distillv1.LinkList{}, Actions: &distillv1.Actions{}}},
	}
	var indented, want bytes.Buffer
	if err := WriteBatchJSON(&indented, items); err != nil {
		t.Fatal(err)
	}
	if err := json.Compact(&want, indented.Bytes()); err != nil {
		t.Fatal(err)
	}
	got, err := MarshalBatchJSON(items)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Fatalf("compact batch differs:\n--- got\n%s\n--- want\n%s", got, want.Bytes())
	}
}

func TestItemOf(t *testing.T) {
	ok := ItemOf(&distillv1.FetchBatchResponse{Index: 1, Url: "https://a.example/", Outcome: &distillv1.FetchBatchResponse_Result{Result: &distillv1.Distilled{Title: "A"}}})
	if ok.URL != "https://a.example/" || ok.Err != nil || ok.Result.GetTitle() != "A" {
		t.Fatalf("answer = %+v", ok)
	}
	const msg = "fetch http://10.0.0.1/: blocked by network policy"
	bad := ItemOf(&distillv1.FetchBatchResponse{Url: "http://10.0.0.1/", Outcome: &distillv1.FetchBatchResponse_Error{Error: &distillv1.Error{Code: failure.Blocked, Message: msg}}})
	if bad.URL != "http://10.0.0.1/" || bad.Result != nil || bad.Err == nil || bad.Err.Error() != msg || failure.CodeOf(bad.Err) != failure.Blocked {
		t.Fatalf("failure = %+v", bad)
	}
}

// TestBatchJSONCarriesTheFormat checks that a batch read in a format other
// than Markdown carries each page as that format prints it, and that a
// Markdown batch and failed URLs carry no content.
func TestBatchJSONCarriesTheFormat(t *testing.T) {
	items := []BatchItem{
		{URL: "https://example.com/a", Result: &distillv1.Distilled{FinalUrl: "https://example.com/a", Markdown: "# A", Text: "A as llm"}},
		{URL: "https://example.com/b", Err: errors.New("refused")},
	}
	for _, tc := range []struct {
		format distillv1.Format
		want   string
	}{
		{distillv1.Format_FORMAT_LLM, "A as llm"},
		{distillv1.Format_FORMAT_HTML, "A as llm"},
		{distillv1.Format_FORMAT_TEXT, "A as llm"},
		{distillv1.Format_FORMAT_MARKDOWN, ""},
		{distillv1.Format_FORMAT_JSON, ""},
	} {
		b, err := MarshalBatchJSONIn(items, tc.format)
		if err != nil {
			t.Fatal(err)
		}
		var got []struct {
			Result *struct {
				Markdown string  `json:"markdown"`
				Content  *string `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal(b, &got); err != nil || len(got) != 2 {
			t.Fatalf("%v: %v, %s", tc.format, err, b)
		}
		content := ""
		if c := got[0].Result.Content; c != nil {
			content = *c
		}
		if content != tc.want || got[0].Result.Markdown != "# A" || got[1].Result != nil {
			t.Errorf("%v: %s", tc.format, b)
		}
	}
}

// withParts is a page carrying the page's own parts: its HTML as served
// and cleaned, its images and what its head says.
func withParts() *distillv1.Distilled {
	return &distillv1.Distilled{
		FinalUrl: "https://example.com/post", Status: 200, Title: "A post", Markdown: "# A post",
		RawHtml:   str(`<html><head><title>A post</title></head><body><h1>A post</h1><img src="/a.png"></body></html>`),
		CleanHtml: str(`<h1>A post</h1><img src="https://example.com/a.png">`),
		Images:    &distillv1.ImageList{Urls: []string{"https://example.com/a.png"}},
		Head: &distillv1.PageHead{
			ContentType: "text/html; charset=utf-8", Title: "A post", Language: "en", Description: "On engines.",
			Author: "Ada Lovelace", Favicon: "https://example.com/favicon.ico", OgTitle: "A post", OgSiteName: "Example",
		},
	}
}

func TestJSONPagePartsGolden(t *testing.T) {
	tests := []struct {
		name string
		page *distillv1.Distilled
	}{
		{"page-parts.json", withParts()},
		// Asked for and not there: an empty list and a head of empty
		// values, not absent.
		{"page-parts-empty.json", &distillv1.Distilled{
			FinalUrl: "https://example.com/", Status: 200, Markdown: "",
			Images: &distillv1.ImageList{}, Head: &distillv1.PageHead{},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteJSON(&buf, tt.page); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name, buf.Bytes())
		})
	}
}

// TestJSONPagePartsFieldSets pins the keys the page's own parts add to
// the schema, and that a page without them has none of them.
func TestJSONPagePartsFieldSets(t *testing.T) {
	var m map[string]any
	b, err := MarshalDistilled(withParts())
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	assertKeys(t, "distilled", m, "final_url", "status", "title", "markdown", "raw_html", "clean_html", "images", "head")
	assertKeys(t, "head", m["head"].(map[string]any), "content_type", "title", "language", "description", "keywords", "robots",
		"author", "favicon", "og_title", "og_description", "og_url", "og_image", "og_site_name", "og_locale")
	if got := m["images"].([]any); len(got) != 1 || got[0] != "https://example.com/a.png" {
		t.Errorf("images = %v, want the page's one image URL", got)
	}
	if got := m["raw_html"]; got != withParts().GetRawHtml() {
		t.Errorf("raw_html = %q, want the page as served", got)
	}
	b, err = MarshalDistilled(full())
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"raw_html", "clean_html", "images", "head"} {
		if bytes.Contains(b, []byte(`"`+key+`"`)) {
			t.Errorf("%q present in a page that did not ask for it: %s", key, b)
		}
	}
}

// MarshalPageParts carries the parts alone, for a page printed as
// Markdown or text; nothing when none were asked for.
func TestMarshalPageParts(t *testing.T) {
	b, err := MarshalPageParts(withParts())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	assertKeys(t, "page parts", m, "raw_html", "clean_html", "images", "head")
	if b, err := MarshalPageParts(full()); err != nil || b != nil {
		t.Errorf("a page without parts gave %s, %v; want nil", b, err)
	}
}
