// Package output writes distilled pages the way users read them: Markdown
// or text for people, and the public JSON shape for programs. The JSON shape
// is the frozen public contract: field names and nesting as documented,
// optional parts absent (never null) when they were not asked for, numbers
// as JSON numbers. It is written here rather than with protojson, which
// renders 64-bit integers as strings, cannot tell an absent list from an
// empty one, and varies its whitespace.
package output

import (
	"encoding/json"
	"io"

	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

type distilledJSON struct {
	FinalURL    string           `json:"final_url"`
	Status      int32            `json:"status"`
	Title       string           `json:"title"`
	Byline      *string          `json:"byline,omitempty"`
	Excerpt     *string          `json:"excerpt,omitempty"`
	Markdown    string           `json:"markdown"`
	Stats       *statsJSON       `json:"stats,omitempty"`
	Links       *[]linkJSON      `json:"links,omitempty"`
	Tables      *[]tableJSON     `json:"tables,omitempty"`
	Actions     *actionsJSON     `json:"actions,omitempty"`
	Diagnostics *diagnosticsJSON `json:"diagnostics,omitempty"`
	Picked      *pickedJSON      `json:"picked,omitempty"`
	Relevance   *float64         `json:"relevance,omitempty"`
	// Content is the page as a format other than Markdown prints it (text,
	// llm, html), in a batch read in that format.
	Content string `json:"content,omitempty"`
	// Browser work, each present only when asked for; bytes are base64.
	Screenshot []byte            `json:"screenshot,omitempty"`
	PDF        []byte            `json:"pdf,omitempty"`
	MHTML      []byte            `json:"mhtml,omitempty"`
	Network    *networkJSON      `json:"network,omitempty"`
	Steps      *[]stepResultJSON `json:"steps,omitempty"`
	Chunks     *[]ChunkJSON      `json:"chunks,omitempty"`
	Diff       *diffJSON         `json:"diff,omitempty"`
	Brand      *brandJSON        `json:"brand,omitempty"`
	// The page's own parts, each present only when asked for.
	RawHTML   *string   `json:"raw_html,omitempty"`
	CleanHTML *string   `json:"clean_html,omitempty"`
	Images    *[]string `json:"images,omitempty"`
	Head      *headJSON `json:"head,omitempty"`
}

// headJSON is what a page's head says about it: every key present, empty
// where the page does not say it.
type headJSON struct {
	ContentType   string `json:"content_type"`
	Title         string `json:"title"`
	Language      string `json:"language"`
	Description   string `json:"description"`
	Keywords      string `json:"keywords"`
	Robots        string `json:"robots"`
	Author        string `json:"author"`
	Favicon       string `json:"favicon"`
	OGTitle       string `json:"og_title"`
	OGDescription string `json:"og_description"`
	OGURL         string `json:"og_url"`
	OGImage       string `json:"og_image"`
	OGSiteName    string `json:"og_site_name"`
	OGLocale      string `json:"og_locale"`
}

type networkJSON struct {
	Responses []capturedJSON `json:"responses"`
	Truncated bool           `json:"truncated"`
}

type capturedJSON struct {
	URL            string            `json:"url"`
	Method         string            `json:"method"`
	Status         int32             `json:"status"`
	ResourceType   string            `json:"resource_type"`
	MimeType       string            `json:"mime_type"`
	RequestHeaders map[string]string `json:"request_headers"`
	Body           *string           `json:"body,omitempty"`
	Truncated      bool              `json:"truncated,omitempty"`
}

type stepResultJSON struct {
	Index int32  `json:"index"`
	Type  string `json:"type"`
	// Value is the script's value as it returned it, JSON inside JSON.
	Value      json.RawMessage `json:"value,omitempty"`
	Screenshot []byte          `json:"screenshot,omitempty"`
}

// ChunkJSON is one chunk of a page, as --chunk prints it and the page's
// JSON carries it.
type ChunkJSON struct {
	URL         string   `json:"url"`
	Index       int32    `json:"index"`
	HeadingPath []string `json:"heading_path"`
	Tokens      int64    `json:"tokens"`
	Text        string   `json:"text"`
}

type statsJSON struct {
	RawBytes     int64   `json:"raw_bytes"`
	RawTokens    int64   `json:"raw_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	SavedTokens  int64   `json:"saved_tokens"`
	SavedRatio   float64 `json:"saved_ratio"`
}

type linkJSON struct {
	Href string `json:"href"`
	Text string `json:"text"`
}

type tableJSON struct {
	Headers []string   `json:"headers"`
	Rows    [][]string `json:"rows"`
	Caption *string    `json:"caption,omitempty"`
}

type actionsJSON struct {
	Links     []actionLinkJSON `json:"links"`
	Forms     []formJSON       `json:"forms"`
	Buttons   []buttonJSON     `json:"buttons"`
	Downloads []downloadJSON   `json:"downloads"`
}

type actionLinkJSON struct {
	ActionID string `json:"action_id"`
	Text     string `json:"text"`
	Href     string `json:"href"`
}

type downloadJSON struct {
	ActionID string  `json:"action_id"`
	Text     string  `json:"text"`
	Href     string  `json:"href"`
	Filename *string `json:"filename,omitempty"`
}

type buttonJSON struct {
	ActionID string `json:"action_id"`
	Text     string `json:"text"`
	Kind     string `json:"kind"`
}

type formJSON struct {
	ActionID string      `json:"action_id"`
	Method   string      `json:"method"`
	Action   string      `json:"action"`
	Fields   []fieldJSON `json:"fields"`
	SubmitID string      `json:"submit_id"`
}

type fieldJSON struct {
	Name     string       `json:"name"`
	Kind     string       `json:"kind"`
	Value    *string      `json:"value,omitempty"`
	Options  []optionJSON `json:"options,omitempty"`
	Required bool         `json:"required"`
	Label    *string      `json:"label,omitempty"`
}

type optionJSON struct {
	Value    string `json:"value"`
	Label    string `json:"label"`
	Selected bool   `json:"selected"`
}

type diagnosticsJSON struct {
	Profile         string  `json:"profile"`
	RawBytes        int64   `json:"raw_bytes"`
	OutputChars     int64   `json:"output_chars"`
	OutputTokens    int64   `json:"output_tokens"`
	ExtractionRatio float64 `json:"extraction_ratio"`
	LinkCount       int32   `json:"link_count"`
	TableCount      int32   `json:"table_count"`
	ActionCount     int32   `json:"action_count"`
	UsedHeadless    bool    `json:"used_headless"`
	Truncated       bool    `json:"truncated"`
	LowContent      bool    `json:"low_content"`
	// Present only when set, so the seed's schema holds for every page
	// that fit max_bytes.
	TruncatedBody bool `json:"truncated_body,omitempty"`
	// PageCount is a PDF's; absent for other content.
	PageCount *int32 `json:"page_count,omitempty"`
	// StepsRun and BlockedResources are a render's with browser work.
	StepsRun         *int32 `json:"steps_run,omitempty"`
	BlockedResources *int32 `json:"blocked_resources,omitempty"`
	// The query's figures; absent without a query.
	QueryRelevance *float64 `json:"query_relevance,omitempty"`
	QueryBlocks    *int32   `json:"query_blocks,omitempty"`
	// PageType is what kind of page the article profile read; absent
	// for other profiles and content.
	PageType string `json:"page_type,omitempty"`
}

// BatchItem is one URL of a batch and its outcome: a page or an error.
type BatchItem struct {
	URL    string
	Result *distillv1.Distilled
	Err    error
	// Truncated says the body was longer than max_bytes and Result was
	// distilled from its beginning, whether or not Result still carries
	// the diagnostics that said so.
	Truncated bool
}

type batchItemJSON struct {
	URL    string         `json:"url"`
	OK     bool           `json:"ok"`
	Result *distilledJSON `json:"result,omitempty"`
	Error  string         `json:"error,omitempty"`
}

// WriteJSON writes one page as indented JSON followed by a newline.
func WriteJSON(w io.Writer, d *distillv1.Distilled) error {
	return encode(w, toJSON(d))
}

// ItemOf is the batch item one streamed answer carries, its error with
// the code and message the worker gave it.
func ItemOf(r *distillv1.FetchBatchResponse) BatchItem {
	it := BatchItem{URL: r.GetUrl()}
	if e := r.GetError(); e != nil {
		it.Err = failure.FromProto(e)
	} else {
		it.Result = r.GetResult()
	}
	return it
}

// WriteBatchJSON writes a batch as a JSON array of {url, ok, result | error}
// in the order given.
func WriteBatchJSON(w io.Writer, items []BatchItem) error {
	return encode(w, batchToJSON(items))
}

// MarshalBatchJSON returns a batch's compact JSON, for callers that embed
// it (MCP tool results).
func MarshalBatchJSON(items []BatchItem) ([]byte, error) {
	return marshal(batchToJSON(items))
}

// MarshalBatchJSONIn is MarshalBatchJSON for a batch read in format: in
// the formats that are not Markdown (text, llm, html) each page also
// carries what that format prints, as result.content.
func MarshalBatchJSONIn(items []BatchItem, format distillv1.Format) ([]byte, error) {
	out := batchToJSON(items)
	switch format {
	case distillv1.Format_FORMAT_TEXT, distillv1.Format_FORMAT_LLM, distillv1.Format_FORMAT_HTML:
		for i, it := range items {
			if out[i].Result != nil {
				out[i].Result.Content = it.Result.GetText()
			}
		}
	}
	return marshal(out)
}

func batchToJSON(items []BatchItem) []batchItemJSON {
	out := make([]batchItemJSON, len(items))
	for i, it := range items {
		out[i] = batchItemJSON{URL: it.URL, OK: it.Err == nil}
		if it.Err != nil {
			out[i].Error = it.Err.Error()
		} else {
			out[i].Result = toJSON(it.Result)
		}
	}
	return out
}

// MarshalDistilled returns one page's compact JSON, for callers that embed
// it (MCP tool results).
func MarshalDistilled(d *distillv1.Distilled) ([]byte, error) {
	return marshal(toJSON(d))
}

func encode(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	// Markdown is full of <, > and &: keep it readable.
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// toJSON is a page in its JSON shape: the fields every page has, then each
// optional part jsonParts fills when the page carries it.
func toJSON(d *distillv1.Distilled) *distilledJSON {
	out := &distilledJSON{
		FinalURL: d.GetFinalUrl(),
		Status:   d.GetStatus(),
		Title:    d.GetTitle(),
		Byline:   d.Byline,
		Excerpt:  d.Excerpt,
		Markdown: d.GetMarkdown(),
		// Only a crawl with a query rates its pages.
		Relevance: d.Relevance,
	}
	for _, part := range jsonParts {
		part(out, d)
	}
	return out
}

// jsonParts fill the optional parts of a page's JSON, one part each; a
// part the page does not carry stays absent. A new part of the schema is
// a new entry here.
var jsonParts = []func(out *distilledJSON, d *distillv1.Distilled){
	statsPart,
	linksPart,
	tablesPart,
	func(out *distilledJSON, d *distillv1.Distilled) {
		if a := d.GetActions(); a != nil {
			out.Actions = toActionsJSON(a)
		}
	},
	func(out *distilledJSON, d *distillv1.Distilled) {
		if p := d.GetPicked(); p != nil {
			out.Picked = toPickedJSON(p)
		}
	},
	diagnosticsPart,
	func(out *distilledJSON, d *distillv1.Distilled) {
		out.Screenshot, out.PDF, out.MHTML = d.Screenshot, d.Pdf, d.Mhtml
	},
	networkPart,
	stepsPart,
	func(out *distilledJSON, d *distillv1.Distilled) {
		if d.GetChunks() != nil {
			chunks := Chunks(d)
			out.Chunks = &chunks
		}
	},
	func(out *distilledJSON, d *distillv1.Distilled) {
		if df := d.GetDiff(); df != nil {
			out.Diff = toDiffJSON(df)
		}
	},
	func(out *distilledJSON, d *distillv1.Distilled) {
		if b := d.GetBrand(); b != nil {
			out.Brand = toBrandJSON(b)
		}
	},
	pagePartsPart,
}

// pagePartsPart fills the page's own parts: its HTML as served and
// cleaned, its images and what its head says.
func pagePartsPart(out *distilledJSON, d *distillv1.Distilled) {
	out.RawHTML, out.CleanHTML = d.RawHtml, d.CleanHtml
	if im := d.GetImages(); im != nil {
		urls := nonNil(im.GetUrls())
		out.Images = &urls
	}
	if h := d.GetHead(); h != nil {
		out.Head = &headJSON{
			ContentType: h.GetContentType(), Title: h.GetTitle(), Language: h.GetLanguage(),
			Description: h.GetDescription(), Keywords: h.GetKeywords(), Robots: h.GetRobots(),
			Author: h.GetAuthor(), Favicon: h.GetFavicon(),
			OGTitle: h.GetOgTitle(), OGDescription: h.GetOgDescription(), OGURL: h.GetOgUrl(),
			OGImage: h.GetOgImage(), OGSiteName: h.GetOgSiteName(), OGLocale: h.GetOgLocale(),
		}
	}
}

func statsPart(out *distilledJSON, d *distillv1.Distilled) {
	s := d.GetStats()
	if s == nil {
		return
	}
	out.Stats = &statsJSON{
		RawBytes:     s.GetRawBytes(),
		RawTokens:    s.GetRawTokens(),
		OutputTokens: s.GetOutputTokens(),
		SavedTokens:  s.GetSavedTokens(),
		SavedRatio:   s.GetSavedRatio(),
	}
}

func linksPart(out *distilledJSON, d *distillv1.Distilled) {
	l := d.GetLinks()
	if l == nil {
		return
	}
	links := make([]linkJSON, 0, len(l.GetItems()))
	for _, it := range l.GetItems() {
		links = append(links, linkJSON{Href: it.GetHref(), Text: it.GetText()})
	}
	out.Links = &links
}

func tablesPart(out *distilledJSON, d *distillv1.Distilled) {
	t := d.GetTables()
	if t == nil {
		return
	}
	tables := make([]tableJSON, 0, len(t.GetItems()))
	for _, it := range t.GetItems() {
		tables = append(tables, toTableJSON(it))
	}
	out.Tables = &tables
}

func diagnosticsPart(out *distilledJSON, d *distillv1.Distilled) {
	g := d.GetDiagnostics()
	if g == nil {
		return
	}
	out.Diagnostics = &diagnosticsJSON{
		Profile:          g.GetProfile(),
		RawBytes:         g.GetRawBytes(),
		OutputChars:      g.GetOutputChars(),
		OutputTokens:     g.GetOutputTokens(),
		ExtractionRatio:  g.GetExtractionRatio(),
		LinkCount:        g.GetLinkCount(),
		TableCount:       g.GetTableCount(),
		ActionCount:      g.GetActionCount(),
		UsedHeadless:     g.GetUsedHeadless(),
		Truncated:        g.GetTruncated(),
		LowContent:       g.GetLowContent(),
		TruncatedBody:    g.GetTruncatedBody(),
		PageType:         g.GetPageType(),
		StepsRun:         g.StepsRun,
		BlockedResources: g.BlockedResources,
		QueryRelevance:   g.QueryRelevance,
		QueryBlocks:      g.QueryBlocks,
	}
	if g.PageCount != nil {
		n := g.GetPageCount()
		out.Diagnostics.PageCount = &n
	}
}

func networkPart(out *distilledJSON, d *distillv1.Distilled) {
	n := d.GetNetwork()
	if n == nil {
		return
	}
	out.Network = &networkJSON{Responses: make([]capturedJSON, 0, len(n.GetResponses())), Truncated: n.GetTruncated()}
	for _, r := range n.GetResponses() {
		h := r.GetRequestHeaders()
		if h == nil {
			h = map[string]string{}
		}
		out.Network.Responses = append(out.Network.Responses, capturedJSON{
			URL: r.GetUrl(), Method: r.GetMethod(), Status: r.GetStatus(), ResourceType: r.GetResourceType(),
			MimeType: r.GetMimeType(), RequestHeaders: h, Body: r.Body, Truncated: r.GetTruncated(),
		})
	}
}

func stepsPart(out *distilledJSON, d *distillv1.Distilled) {
	st := d.GetSteps()
	if st == nil {
		return
	}
	steps := make([]stepResultJSON, 0, len(st.GetItems()))
	for _, it := range st.GetItems() {
		r := stepResultJSON{Index: it.GetIndex(), Type: it.GetType(), Screenshot: it.Screenshot}
		if it.Value != nil && json.Valid([]byte(it.GetValue())) {
			r.Value = json.RawMessage(it.GetValue())
		}
		steps = append(steps, r)
	}
	out.Steps = &steps
}

// Chunks returns a page's chunks in their JSON shape; an empty list when
// it has none.
func Chunks(d *distillv1.Distilled) []ChunkJSON {
	items := d.GetChunks().GetItems()
	out := make([]ChunkJSON, 0, len(items))
	for _, c := range items {
		out = append(out, ChunkJSON{URL: c.GetUrl(), Index: c.GetIndex(), HeadingPath: nonNil(c.GetHeadingPath()), Tokens: c.GetTokens(), Text: c.GetText()})
	}
	return out
}

// MarshalChunks returns a page's chunks as a compact JSON array, for
// callers that embed it (MCP tool results).
func MarshalChunks(d *distillv1.Distilled) ([]byte, error) {
	return marshal(Chunks(d))
}

// WriteChunkLines writes a page's chunks as JSON Lines, one chunk a line.
func WriteChunkLines(w io.Writer, d *distillv1.Distilled) error {
	for _, c := range Chunks(d) {
		b, err := marshal(c)
		if err != nil {
			return err
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			return err
		}
	}
	return nil
}

func toTableJSON(t *distillv1.Table) tableJSON {
	rows := make([][]string, 0, len(t.GetRows()))
	for _, r := range t.GetRows() {
		rows = append(rows, nonNil(r.GetCells()))
	}
	return tableJSON{Headers: nonNil(t.GetHeaders()), Rows: rows, Caption: t.Caption}
}

func toActionsJSON(a *distillv1.Actions) *actionsJSON {
	out := &actionsJSON{
		Links:     make([]actionLinkJSON, 0, len(a.GetLinks())),
		Forms:     make([]formJSON, 0, len(a.GetForms())),
		Buttons:   make([]buttonJSON, 0, len(a.GetButtons())),
		Downloads: make([]downloadJSON, 0, len(a.GetDownloads())),
	}
	for _, l := range a.GetLinks() {
		out.Links = append(out.Links, actionLinkJSON{ActionID: l.GetActionId(), Text: l.GetText(), Href: l.GetHref()})
	}
	for _, d := range a.GetDownloads() {
		out.Downloads = append(out.Downloads, downloadJSON{ActionID: d.GetActionId(), Text: d.GetText(), Href: d.GetHref(), Filename: d.Filename})
	}
	for _, b := range a.GetButtons() {
		out.Buttons = append(out.Buttons, buttonJSON{ActionID: b.GetActionId(), Text: b.GetText(), Kind: b.GetKind()})
	}
	for _, f := range a.GetForms() {
		fields := make([]fieldJSON, 0, len(f.GetFields()))
		for _, fd := range f.GetFields() {
			field := fieldJSON{Name: fd.GetName(), Kind: fd.GetKind(), Value: fd.Value, Required: fd.GetRequired(), Label: fd.Label}
			for _, o := range fd.GetOptions() {
				field.Options = append(field.Options, optionJSON{Value: o.GetValue(), Label: o.GetLabel(), Selected: o.GetSelected()})
			}
			fields = append(fields, field)
		}
		out.Forms = append(out.Forms, formJSON{ActionID: f.GetActionId(), Method: f.GetMethod(), Action: f.GetAction(), Fields: fields, SubmitID: f.GetSubmitId()})
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// WriteCrawlLine writes one page of a crawl as a compact JSON line:
// {url, depth, ok, result | error}.
func WriteCrawlLine(w io.Writer, it BatchItem, depth int) error {
	b := batchToJSON([]BatchItem{it})[0]
	line, err := marshal(crawlItemJSON{URL: b.URL, Depth: depth, OK: b.OK, Result: b.Result, Error: b.Error})
	if err != nil {
		return err
	}
	_, err = w.Write(append(line, '\n'))
	return err
}

type crawlItemJSON struct {
	URL    string         `json:"url"`
	Depth  int            `json:"depth"`
	OK     bool           `json:"ok"`
	Result *distilledJSON `json:"result,omitempty"`
	Error  string         `json:"error,omitempty"`
}

// WriteBatchLine writes one URL's outcome as a line of JSON Lines:
// {url, ok, result | error}, compact, then a newline.
func WriteBatchLine(w io.Writer, it BatchItem) error {
	b, err := marshal(batchToJSON([]BatchItem{it})[0])
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// MarshalTables returns tables as a compact JSON array of {headers, rows,
// caption}, for callers that embed them (the MCP select tool).
func MarshalTables(t *distillv1.TableList) ([]byte, error) {
	tables := make([]tableJSON, 0, len(t.GetItems()))
	for _, it := range t.GetItems() {
		tables = append(tables, toTableJSON(it))
	}
	return marshal(tables)
}

// MarshalPageParts returns, as compact JSON, the page's own parts that
// were asked for ({raw_html, clean_html, images, head}, each absent when
// it was not), for callers that print the page itself as Markdown or
// text; nil when there are none.
func MarshalPageParts(d *distillv1.Distilled) ([]byte, error) {
	// Only the parts' own step runs: the rest of the page is not wanted.
	var full distilledJSON
	pagePartsPart(&full, d)
	if full.RawHTML == nil && full.CleanHTML == nil && full.Images == nil && full.Head == nil {
		return nil, nil
	}
	return marshal(struct {
		RawHTML   *string   `json:"raw_html,omitempty"`
		CleanHTML *string   `json:"clean_html,omitempty"`
		Images    *[]string `json:"images,omitempty"`
		Head      *headJSON `json:"head,omitempty"`
	}{full.RawHTML, full.CleanHTML, full.Images, full.Head})
}

// MarshalBrowserWork returns, as compact JSON, what a render's steps and
// network capture returned ({steps, network}, each absent when there is
// none), for callers that print the page itself as Markdown or text; nil
// when there is neither.
func MarshalBrowserWork(d *distillv1.Distilled) ([]byte, error) {
	full := toJSON(d)
	if full.Steps == nil && full.Network == nil {
		return nil, nil
	}
	return marshal(struct {
		Steps   *[]stepResultJSON `json:"steps,omitempty"`
		Network *networkJSON      `json:"network,omitempty"`
	}{full.Steps, full.Network})
}
