package firecrawl_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"distill.dev/gateway/app"
	"distill.dev/gateway/firecrawl"
	"distill.dev/gateway/host"
	"distill.dev/gateway/host/llm"
	"distill.dev/gateway/host/llm/llmtest"
)

// serveModel runs the API with host mode behind the json and summary
// formats and extract: a policy whose default actor may read the test
// site, budgets on the embedded NATS, and a provider on loopback.
func serveModel(t *testing.T, pages *httptest.Server, cfg firecrawl.Config, actorYAML ...string) (*httptest.Server, *llmtest.Server) {
	t.Helper()
	sys, err := app.Open(t.Context(), quiet, app.Config{UserAgentVersion: "test", Workers: 4, CacheDir: t.TempDir(), AllowLocal: true})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(pages.URL)
	policy, err := host.Parse(fmt.Appendf(nil, `
actors:
  default:
    allowed_hosts: [127.0.0.1]
    allowed_schemes: [http]
    allowed_ports: [%s]
%s
`, u.Port(), strings.Join(actorYAML, "\n")), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	js, _, _, err := sys.KeyValue()
	if err != nil {
		t.Fatal(err)
	}
	wire, lcfg := llmtest.Start(t, llm.OpenAI)
	provider, err := llm.New(lcfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.AllowLocal = true
	cfg.Host = host.NewEngine(quiet, host.Fixed(policy), host.NewBudgets(js), sys, host.EngineConfig{Provider: provider, AllowLocal: true})
	fc := firecrawl.New(quiet, sys, cfg)
	srv := httptest.NewServer(fc.Handler())
	t.Cleanup(func() {
		srv.Close()
		fc.Close()
		_ = sys.Close()
	})
	return srv, wire
}

func TestJSONAndSummaryFormats(t *testing.T) {
	t.Parallel()
	pages := site(t)
	api, wire := serveModel(t, pages, firecrawl.Config{})
	schema := map[string]any{"type": "object", "properties": map[string]any{"topic": map[string]any{"type": "string"}}, "required": []string{"topic"}}

	wire.Set(`{"topic":"tides"}`, "", 0)
	a := call(t, "POST", api.URL+"/v2/scrape", "", map[string]any{"url": pages.URL + "/article", "formats": []any{"markdown", map[string]any{"type": "json", "schema": schema, "prompt": "what is it about"}}})
	d := a.data(t)
	if j, _ := d["json"].(map[string]any); j["topic"] != "tides" || !strings.Contains(d["markdown"].(string), "Tide tables") {
		t.Errorf("json format = %s", a.raw)
	}
	sent := fmt.Sprint(wire.Last())
	if !strings.Contains(sent, "what is it about") || !strings.Contains(sent, "Tide tables tell the harbour") {
		t.Errorf("the provider was not sent the prompt and the page: %s", sent)
	}

	wire.Set("The harbour's tides, told by its tables.", "", 0)
	a = call(t, "POST", api.URL+"/v2/scrape", "", map[string]any{"url": pages.URL + "/article", "formats": []string{"summary"}})
	if d := a.data(t); d["summary"] != "The harbour's tides, told by its tables." {
		t.Errorf("summary format = %s", a.raw)
	}

	// v1 reads the json format's options beside the formats.
	wire.Set(`{"topic":"tides"}`, "", 0)
	a = call(t, "POST", api.URL+"/v1/scrape", "", map[string]any{"url": pages.URL + "/article", "formats": []string{"json"}, "jsonOptions": map[string]any{"schema": schema}})
	if j, _ := a.data(t)["json"].(map[string]any); j["topic"] != "tides" {
		t.Errorf("v1 json format = %s", a.raw)
	}

	// A batch's and a crawl's pages each get the model's work.
	wire.Set(`{"topic":"tides"}`, "", 0)
	batch := call(t, "POST", api.URL+"/v2/batch/scrape", "", map[string]any{"urls": []string{pages.URL + "/page/1", pages.URL + "/page/2"}, "formats": []any{map[string]any{"type": "json", "schema": schema}}})
	bdone := waitJob(t, batch.body["url"].(string))
	crawled := call(t, "POST", api.URL+"/v2/crawl", "", map[string]any{"url": pages.URL + "/docs/", "limit": 2, "scrapeOptions": map[string]any{"formats": []string{"summary"}}})
	cdone := waitJob(t, crawled.body["url"].(string))
	for _, job := range []answer{bdone, cdone} {
		data, _ := job.body["data"].([]any)
		if len(data) != 2 {
			t.Errorf("job = %s", job.raw)
		}
		for _, d := range data {
			doc := d.(map[string]any)
			j, _ := doc["json"].(map[string]any)
			if j["topic"] != "tides" && doc["summary"] != `{"topic":"tides"}` {
				t.Errorf("a job's document lacks the model's answer: %v", doc)
			}
		}
	}

	for name, tc := range map[string]struct {
		reply, raw string
		status     int
		body       map[string]any
		wantStatus int
		want       string
	}{
		"data off the schema": {reply: `{"subject":"tides"}`, body: map[string]any{"url": pages.URL + "/article", "formats": []any{map[string]any{"type": "json", "schema": schema}}},
			wantStatus: 502, want: "formats: json: the provider's data does not match the schema"},
		"provider down": {status: 500, body: map[string]any{"url": pages.URL + "/article", "formats": []string{"summary"}},
			wantStatus: 502, want: "formats: summary: the provider failed to answer"},
		"schema refused": {body: map[string]any{"url": pages.URL + "/article", "formats": []any{map[string]any{"type": "json", "schema": map[string]any{"type": "array"}}}},
			wantStatus: 400, want: "formats: json: schema refused"},
		"off the actor's allowlist": {body: map[string]any{"url": strings.Replace(pages.URL, "127.0.0.1", "localhost", 1) + "/article", "formats": []string{"summary"}},
			wantStatus: 403, want: "formats: summary:"},
	} {
		wire.Set(tc.reply, tc.raw, tc.status)
		path := "/v2/scrape"
		if _, ok := tc.body["urls"]; ok {
			path = "/v2/batch/scrape"
		}
		a := call(t, "POST", api.URL+path, "", tc.body)
		if msg, _ := a.body["error"].(string); a.status != tc.wantStatus || !strings.Contains(msg, tc.want) {
			t.Errorf("%s: answered %d %s, want %d and %q", name, a.status, a.raw, tc.wantStatus, tc.want)
		}
	}
}

func waitExtract(t *testing.T, statusURL string) answer {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		a := call(t, "GET", statusURL, "", nil)
		if a.status != http.StatusOK || a.body["status"] != "processing" {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("the extract is still processing: %s", a.raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestExtract(t *testing.T) {
	t.Parallel()
	pages := site(t)
	const secret = "extract-webhook-secret-0123456789"
	hookURL, hooks, unsigned := signedHooks(t, secret)
	api, wire := serveModel(t, pages, firecrawl.Config{WebhookSecret: secret})
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"titles": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"site":   map[string]any{"type": "string"},
	}}
	wire.Set(`{"titles":["Page 1"],"site":"harbour"}`, "", 0)
	start := call(t, "POST", api.URL+"/v2/extract", "", map[string]any{"urls": []string{pages.URL + "/page/1", pages.URL + "/page/2", "no url"}, "schema": schema, "prompt": "the titles", "ignoreInvalidURLs": true,
		"webhook": map[string]any{"url": hookURL, "metadata": map[string]string{"run": "x"}}})
	if start.status != http.StatusOK || start.body["success"] != true {
		t.Fatalf("extract answered %d %s", start.status, start.raw)
	}
	done := waitExtract(t, start.body["url"].(string))
	data, _ := done.body["data"].(map[string]any)
	// Each page's answer, merged: lists joined, the first value kept.
	if done.body["status"] != "completed" || fmt.Sprint(data["titles"]) != "[Page 1 Page 1]" || data["site"] != "harbour" {
		t.Errorf("extract = %s", done.raw)
	}
	if inv := strs(start.body["invalidURLs"]); len(inv) != 1 {
		t.Errorf("invalidURLs = %v", inv)
	}
	var types []string
	for len(types) < 2 {
		select {
		case body := <-hooks:
			var e struct {
				Type string           `json:"type"`
				ID   string           `json:"id"`
				Data []map[string]any `json:"data"`
			}
			if err := json.Unmarshal(body, &e); err != nil || e.ID != start.body["id"] {
				t.Fatalf("webhook delivered %s (%v)", body, err)
			}
			types = append(types, e.Type)
			if e.Type == "extract.completed" && (len(e.Data) != 1 || e.Data[0]["site"] != "harbour") {
				t.Errorf("extract.completed carried %v", e.Data)
			}
		case <-time.After(time.Minute):
			t.Fatalf("webhook events within a minute: %v", types)
		}
	}
	if types[0] != "extract.started" || types[1] != "extract.completed" || unsigned() != 0 {
		t.Errorf("extract webhook events %v (%d unsigned)", types, unsigned())
	}

	wire.Set("", "", 500)
	failed := call(t, "POST", api.URL+"/v1/extract", "", map[string]any{"urls": []string{pages.URL + "/page/1"}, "prompt": "the title"})
	gone := waitExtract(t, failed.body["url"].(string))
	if msg, _ := gone.body["error"].(string); gone.body["status"] != "failed" || gone.body["success"] != false || !strings.Contains(msg, "the provider failed to answer") {
		t.Errorf("a failed extract = %s", gone.raw)
	}

	for name, body := range map[string]map[string]any{
		"web search": {"urls": []string{pages.URL}, "prompt": "x", "enableWebSearch": true},
		"wildcard":   {"urls": []string{pages.URL + "/*"}, "prompt": "x"},
		"no urls":    {"prompt": "x"},
		"nothing":    {"urls": []string{pages.URL}},
	} {
		if a := call(t, "POST", api.URL+"/v2/extract", "", body); a.status != http.StatusBadRequest {
			t.Errorf("%s: answered %d %s", name, a.status, a.raw)
		}
	}
}

// A host budget that runs out is Firecrawl's 429, with Retry-After.
func TestHostBudgetIs429(t *testing.T) {
	t.Parallel()
	pages := site(t)
	// A scrape's model work takes two steps (the page, the provider).
	api, wire := serveModel(t, pages, firecrawl.Config{}, "    budget: {max_steps: 1}")
	wire.Set("A summary.", "", 0)
	a := call(t, "POST", api.URL+"/v2/scrape", "", map[string]any{"url": pages.URL + "/article", "formats": []string{"summary"}})
	if msg, _ := a.body["error"].(string); a.status != http.StatusTooManyRequests || a.header.Get("Retry-After") == "" || a.body["code"] != "BUDGET_EXHAUSTED" || !strings.HasPrefix(msg, "formats: summary:") {
		t.Errorf("answered %d (Retry-After %q) %s", a.status, a.header.Get("Retry-After"), a.raw)
	}
}
