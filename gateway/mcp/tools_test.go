package mcp

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"distill.dev/gateway/api"
	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/pipeline"
)

// page is the part of the public JSON shape these tests read.
type page struct {
	FinalURL string `json:"final_url"`
	Status   int    `json:"status"`
	Title    string `json:"title"`
	Markdown string `json:"markdown"`
	Stats    *struct {
		OutputTokens int `json:"output_tokens"`
	}
	Diagnostics *struct {
		Truncated    bool `json:"truncated"`
		OutputTokens int  `json:"output_tokens"`
	}
	Actions *struct {
		Links []struct {
			ActionID string `json:"action_id"`
			Href     string `json:"href"`
		}
		Forms []struct {
			ActionID string `json:"action_id"`
			Method   string
		}
	}
}

func TestFetchURLFormats(t *testing.T) {
	srv := pages(t)
	cs := connect(t, newService(t))
	url := srv.URL + "/article"

	md := callOK(t, cs, "fetch_url", map[string]any{"url": url, "allow_local": true})
	for _, want := range []string{"Keeping the Lamp", "| Month | Nights lit |", "[the fog signal notes](" + srv.URL + "/fog)"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}

	text := callOK(t, cs, "fetch_url", map[string]any{"url": url, "allow_local": true, "format": "text"})
	if !strings.Contains(text, "the keeper climbs ninety-one steps") || strings.Contains(text, "| Month") {
		t.Errorf("text format is not plain text:\n%s", text)
	}

	p := callJSON[page](t, cs, "fetch_url", map[string]any{"url": url, "allow_local": true, "format": "json", "stats": true})
	if p.FinalURL != url || p.Status != 200 || p.Title != "Keeping the Lamp" || p.Stats == nil || p.Diagnostics != nil {
		t.Errorf("json = %+v, want the page with stats and nothing else asked", p)
	}
}

func TestFetchURLReportsStatsAndDiagnosticsInABlockOfTheirOwn(t *testing.T) {
	srv := pages(t)
	cs := connect(t, newService(t))
	texts, isError := call(t, cs, "fetch_url", map[string]any{"url": srv.URL + "/article", "allow_local": true, "stats": true, "diagnostics": true})
	if isError || len(texts) != 2 {
		t.Fatalf("got %q (error %t), want the page and a report block", texts, isError)
	}
	if strings.Contains(texts[0], "stats:") {
		t.Errorf("the page carries the report:\n%s", texts[0])
	}
	lines := strings.Split(texts[1], "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "stats: "+srv.URL+"/article") || !strings.HasPrefix(lines[1], "diagnostics: ") {
		t.Errorf("report block = %q, want a stats line and a diagnostics line", texts[1])
	}
}

// The MCP tools budget their output by default, unlike the CLI.
func TestFetchURLOutputBudget(t *testing.T) {
	srv := pages(t)
	cs := connect(t, newService(t))
	tests := []struct {
		name          string
		budget        any
		wantTruncated bool
		maxTokens     int
	}{
		{name: "default", budget: nil, wantTruncated: true, maxTokens: 20000},
		{name: "asked", budget: 300, wantTruncated: true, maxTokens: 300},
		{name: "zero is unlimited", budget: 0, wantTruncated: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"url": srv.URL + "/long", "allow_local": true, "format": "json", "diagnostics": true}
			if tt.budget != nil {
				args["max_output_tokens"] = tt.budget
			}
			p := callJSON[page](t, cs, "fetch_url", args)
			if p.Diagnostics == nil {
				t.Fatal("no diagnostics")
			}
			if p.Diagnostics.Truncated != tt.wantTruncated {
				t.Errorf("truncated = %t, want %t (output %d tokens)", p.Diagnostics.Truncated, tt.wantTruncated, p.Diagnostics.OutputTokens)
			}
			if tt.maxTokens > 0 && p.Diagnostics.OutputTokens > tt.maxTokens {
				t.Errorf("output %d tokens, over the budget of %d", p.Diagnostics.OutputTokens, tt.maxTokens)
			}
			if !tt.wantTruncated && !strings.Contains(p.Markdown, "Paragraph 2499 ") {
				t.Error("an unlimited page lost its end")
			}
		})
	}
}

// Models send numbers and booleans as strings; both spellings work.
func TestStringTypedArguments(t *testing.T) {
	srv := pages(t)
	cs := connect(t, newService(t))
	p := callJSON[page](t, cs, "fetch_url", map[string]any{
		"url": srv.URL + "/long", "allow_local": "true", "format": "json", "diagnostics": "TRUE",
		"max_output_tokens": "200", "timeout_secs": "15", "max_bytes": "4000000", "rate_limit": "50.5",
		"max_retries": 1.0, "no_cache": "false", "profile": "Full",
	})
	if p.Diagnostics == nil || !p.Diagnostics.Truncated || p.Diagnostics.OutputTokens > 200 {
		t.Errorf("string arguments were not applied: diagnostics %+v", p.Diagnostics)
	}
}

func TestBadArgumentsAreToolErrors(t *testing.T) {
	srv := pages(t)
	cs := connect(t, newService(t))
	url := srv.URL + "/article"
	tests := []struct {
		name string
		tool string
		args map[string]any
		want []string
	}{
		{"integer as words", "fetch_url", map[string]any{"url": url, "timeout_secs": "abc"}, []string{"timeout_secs must be a whole number", `"abc"`}},
		{"fraction for an integer", "fetch_url", map[string]any{"url": url, "max_bytes": 1.5}, []string{"max_bytes must be a whole number"}},
		{"bool as words", "fetch_url", map[string]any{"url": url, "stats": "sometimes"}, []string{"stats must be true or false"}},
		{"unknown format", "fetch_url", map[string]any{"url": url, "format": "pdf"}, []string{"format must be one of markdown, text, json, llm, html"}},
		{"unknown js mode", "observe_url", map[string]any{"url": url, "js": "never"}, []string{"js must be one of off, auto, always"}},
		{"missing url", "fetch_url", map[string]any{}, []string{"url is required"}},
		{"misspelt parameter", "fetch_url", map[string]any{"url": url, "max_tokens": 10}, []string{`unknown parameter "max_tokens"`, "max_output_tokens"}},
		{"out of range", "fetch_url", map[string]any{"url": url, "timeout_secs": 0}, []string{"timeout_secs must be between 1 and 600"}},
		{"negative budget", "fetch_urls", map[string]any{"urls": []string{url}, "max_output_tokens": "-1"}, []string{"max_output_tokens must not be negative"}},
		{"urls not a list", "fetch_urls", map[string]any{"urls": url}, []string{"urls must be an array of strings"}},
		{"empty urls", "fetch_urls", map[string]any{"urls": []string{}}, []string{"urls is required"}},
		{"too much concurrency", "fetch_urls", map[string]any{"urls": []string{url}, "concurrency": "1000"}, []string{"concurrency must be between 1 and 256"}},
		{"session timeout out of range", "session_start", map[string]any{"url": url, "timeout_secs": -1}, []string{"timeout_secs must be between"}},
		{"form values of the wrong shape", "session_submit_form", map[string]any{"session_id": "s", "form_id": "form_0", "values": map[string]any{"q": map[string]any{"x": 1}}}, []string{"values.q must be a string, number, boolean or an array of them"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := callError(t, cs, tt.tool, tt.args)
			if !strings.HasPrefix(msg, tt.tool+": invalid arguments: ") && !strings.HasPrefix(msg, tt.tool+": ") {
				t.Errorf("error %q does not name the tool", msg)
			}
			for _, want := range tt.want {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q lacks %q", msg, want)
				}
			}
		})
	}
}

func TestFetchFailureIsAToolErrorSayingWhatToDo(t *testing.T) {
	srv := pages(t)
	cs := connect(t, newService(t))
	msg := callError(t, cs, "fetch_url", map[string]any{"url": srv.URL + "/article"})
	for _, want := range []string{"blocked by network policy", "allow_local=true"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	msg = callError(t, cs, "fetch_url", map[string]any{"url": "ftp://example.com/file"})
	if !strings.Contains(msg, "absolute http or https URL") {
		t.Errorf("error %q does not say what URL to pass", msg)
	}
}

func TestUnknownToolIsAProtocolError(t *testing.T) {
	cs := connect(t, nil)
	res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: "fetch_page", Arguments: map[string]any{}})
	if err == nil {
		t.Fatalf("calling an unknown tool answered %+v, want a protocol error", res)
	}
}

func TestObserveURLReturnsActionsAndDiagnostics(t *testing.T) {
	srv := pages(t)
	cs := connect(t, newService(t))
	// format is ignored: observing always answers JSON.
	p := callJSON[page](t, cs, "observe_url", map[string]any{"url": srv.URL + "/article", "allow_local": true, "format": "markdown"})
	if p.Actions == nil || p.Diagnostics == nil {
		t.Fatalf("observe_url = %+v, want actions and diagnostics", p)
	}
	var fog bool
	for _, l := range p.Actions.Links {
		fog = fog || (strings.HasPrefix(l.ActionID, "link_") && l.Href == srv.URL+"/fog")
	}
	if !fog {
		t.Errorf("no link_* action to /fog in %+v", p.Actions.Links)
	}
	if len(p.Actions.Forms) != 1 || p.Actions.Forms[0].ActionID != "form_0" {
		t.Errorf("forms = %+v, want form_0", p.Actions.Forms)
	}
}

func TestFetchURLsInInputOrder(t *testing.T) {
	srv := pages(t)
	cs := connect(t, newService(t))
	type item struct {
		URL    string `json:"url"`
		OK     bool   `json:"ok"`
		Result *page  `json:"result"`
		Error  string `json:"error"`
	}
	urls := []string{srv.URL + "/b", "http://10.0.0.1/private", srv.URL + "/a"}
	items := callJSON[[]item](t, cs, "fetch_urls", map[string]any{"urls": urls, "allow_local": true, "concurrency": "2"})
	if len(items) != len(urls) {
		t.Fatalf("%d items for %d urls", len(items), len(urls))
	}
	for i, it := range items {
		if it.URL != urls[i] {
			t.Errorf("item %d is %s, want %s", i, it.URL, urls[i])
		}
	}
	if !items[0].OK || items[0].Result == nil || items[0].Result.Title != "Page b" {
		t.Errorf("item 0 = %+v, want Page b", items[0])
	}
	if items[1].OK || !strings.Contains(items[1].Error, "blocked") {
		t.Errorf("item 1 = %+v, want blocked", items[1])
	}
	if !items[2].OK || items[2].Result == nil || items[2].Result.Title != "Page a" {
		t.Errorf("item 2 = %+v, want Page a", items[2])
	}
}

// unansweredPosts is a backend whose pages carry one POST form and whose
// every POST times out, as a shop that may have taken an order without
// saying so.
type unansweredPosts struct{ api.Backend }

func (unansweredPosts) Do(_ context.Context, req pipeline.Request) (*pipeline.Result, error) {
	if req.Method == http.MethodPost {
		return nil, failure.New(failure.Timeout, "fetch %s: timed out", req.URL)
	}
	return &pipeline.Result{Distilled: &distillv1.Distilled{
		Status: http.StatusOK, FinalUrl: req.URL, Title: "Order",
		Actions: &distillv1.Actions{Forms: []*distillv1.FormAction{{ActionId: "form_0", Method: http.MethodPost, Action: "https://shop.example/order"}}},
	}}, nil
}

func TestAFormThatMayHaveBeenSentIsNeverToldToRetry(t *testing.T) {
	cs := connect(t, api.New(quiet, unansweredPosts{}))
	start := callJSON[struct {
		SessionID string `json:"session_id"`
	}](t, cs, "session_start", map[string]any{"url": "https://shop.example/"})
	got := callError(t, cs, "session_submit_form", map[string]any{"session_id": start.SessionID, "form_id": "form_0", "confirm": true})
	if !strings.Contains(got, "do not submit it again") {
		t.Fatalf("the tool error does not say the form may have been sent: %q", got)
	}
	if strings.Contains(got, "Retry") {
		t.Fatalf("the tool error invites a retry of a form that may have been sent: %q", got)
	}
	if got := errorText("fetch_url", failure.New(failure.Timeout, "fetch http://x/: timed out")); !strings.Contains(got, "Retry") {
		t.Fatalf("an ordinary timeout lost its hint: %q", got)
	}
}

// An HTTP error page is still a page (the tool answers it, as RustBrowser
// does), but its text starts with the status line so that the model does
// not take a 404 page for the content it asked for.
func TestFetchURLStartsAnErrorPageWithItsStatus(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		if r.URL.Path != "/here" {
			w.WriteHeader(http.StatusNotFound)
		}
		io.WriteString(w, "<html><head><title>A page</title></head><body><main><h1>A page</h1><p>Some words that make this page worth reading for anyone at all.</p></main></body></html>")
	}))
	t.Cleanup(srv.Close)
	cs := connect(t, newService(t))
	for _, format := range []string{"markdown", "text"} {
		missing := callOK(t, cs, "fetch_url", map[string]any{"url": srv.URL + "/gone", "allow_local": true, "format": format})
		if !strings.HasPrefix(missing, "HTTP 404 Not Found\n\n") || !strings.Contains(missing, "Some words") {
			t.Errorf("%s of a 404 page = %q, want the status line, then the page", format, missing)
		}
		found := callOK(t, cs, "fetch_url", map[string]any{"url": srv.URL + "/here", "allow_local": true, "format": format})
		if strings.HasPrefix(found, "HTTP ") {
			t.Errorf("%s of a 200 page starts with a status line: %q", format, found)
		}
	}
	p := callJSON[page](t, cs, "fetch_url", map[string]any{"url": srv.URL + "/gone", "allow_local": true, "format": "json"})
	if p.Status != 404 {
		t.Errorf("json status = %d, want 404", p.Status)
	}
}

// A selector that would burn the CPU is a tool error naming the bound it
// breaks, and no request reaches the site.
func TestHostileSelectorIsRefusedBeforeFetching(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><body><main><p>Counted.</p></main></body></html>")
	}))
	t.Cleanup(srv.Close)
	cs := connect(t, newService(t))
	sel := ":has(:has(:has(:has(*))))"
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"fetch_url", map[string]any{"url": srv.URL, "allow_local": true, "selector": sel}},
		{"observe_url", map[string]any{"url": srv.URL, "allow_local": true, "selector": sel}},
	} {
		msg := callError(t, cs, tc.tool, tc.args)
		if !strings.Contains(msg, ":has() 4 deep, over the limit of 1") {
			t.Errorf("%s: error %q does not name the :has() bound", tc.tool, msg)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the site got %d requests, want none", n)
	}
}

// A page longer than max_bytes is distilled from its beginning, and the
// model is told in a block of its own, asked for diagnostics or not.
func TestFetchURLSaysWhenThePageWasCutAtMaxBytes(t *testing.T) {
	srv := pages(t)
	cs := connect(t, newService(t))
	texts, isError := call(t, cs, "fetch_url", map[string]any{"url": srv.URL + "/long", "allow_local": true, "max_bytes": 4096})
	if isError || len(texts) != 2 {
		t.Fatalf("got %q (error %t), want the page and a note", texts, isError)
	}
	if !strings.Contains(texts[0], "Paragraph 0 of the survey") || strings.Contains(texts[0], "Paragraph 2499") {
		t.Errorf("page is not the beginning alone:\n%s", texts[0])
	}
	if !strings.Contains(texts[1], "longer than max_bytes") || !strings.Contains(texts[1], "4096") {
		t.Errorf("note = %q, want max_bytes and the cap named", texts[1])
	}
	p := callJSON[struct {
		Diagnostics map[string]any `json:"diagnostics"`
	}](t, cs, "fetch_url", map[string]any{"url": srv.URL + "/long", "allow_local": true, "max_bytes": 4096, "format": "json", "diagnostics": true})
	if p.Diagnostics["truncated_body"] != true {
		t.Errorf("diagnostics = %v, want truncated_body", p.Diagnostics)
	}
	if texts := callOK(t, cs, "fetch_url", map[string]any{"url": srv.URL + "/a", "allow_local": true}); strings.Contains(texts, "max_bytes") {
		t.Errorf("a page under the cap carries a note:\n%s", texts)
	}
}
