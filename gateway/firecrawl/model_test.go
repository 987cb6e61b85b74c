package firecrawl_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"distill.dev/gateway/app"
	"distill.dev/gateway/firecrawl"
	"distill.dev/gateway/host"
	"distill.dev/gateway/host/llm"
	"distill.dev/gateway/host/llm/llmtest"
	"distill.dev/services/platform/grpcauth"
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
`, u.Port(), strings.Join(actorYAML, "\n")), func(name string) (string, bool) { return teamToken, name == "TEAM_TOKEN" })
	if err != nil {
		t.Fatal(err)
	}
	if tokens := policy.Tokens(); len(tokens) > 0 && cfg.Auth == nil {
		// The server's guard as serve makes it: the API's tokens, and the
		// policy's actors' tokens scoped to HostService.
		guard, err := grpcauth.New(grpcauth.Config{Tokens: []string{testToken}, ScopedTokens: tokens, ScopedPrefix: "/distill.v1.HostService/"})
		if err != nil {
			t.Fatal(err)
		}
		cfg.Auth = guard
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
	return waitExtractAuth(t, statusURL, "")
}

func waitExtractAuth(t *testing.T, statusURL, token string) answer {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		a := call(t, "GET", statusURL, token, nil)
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

// teamToken is the token the policy's tokens section gives an actor, as
// TEAM_TOKEN.
const teamToken = "firecrawl-team-token-0123456789"

// A token the host policy maps to an actor runs the model work as that
// actor: its allowlist (a page outside it is never fetched), its schemas
// (a schema it does not name is refused), its budgets (per request, or
// shared by the requests that name one run in X-Distill-Run), and only
// the model work. An API token keeps the default actor.
func TestActorToken(t *testing.T) {
	t.Parallel()
	pages := site(t)
	var outsideHits atomic.Int32
	outside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		outsideHits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><head><title>Outside</title></head><body><main><p>%s</p></main></body></html>", words)
	}))
	t.Cleanup(outside.Close)
	u, _ := url.Parse(pages.URL)
	schema := map[string]any{"type": "object", "properties": map[string]any{"topic": map[string]any{"type": "string"}}, "required": []string{"topic"}}
	api, wire := serveModel(t, pages, firecrawl.Config{}, fmt.Sprintf(`  team:
    allowed_hosts: [127.0.0.1]
    allowed_schemes: [http]
    allowed_ports: [%s]
    budget: {max_steps: 2}
    schemas:
      topic: {type: object, properties: {topic: {type: string}}, required: [topic]}
tokens: [{token_env: TEAM_TOKEN, actor: team}]`, u.Port()))
	wire.Set(`{"topic":"tides"}`, "", 0)
	scrape := func(token, run string, body map[string]any) answer {
		t.Helper()
		b, _ := json.Marshal(body)
		req, err := http.NewRequestWithContext(t.Context(), "POST", api.URL+"/v2/scrape", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		if run != "" {
			req.Header.Set(firecrawl.RunHeader, run)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		raw, _ := io.ReadAll(res.Body)
		a := answer{status: res.StatusCode, header: res.Header, raw: string(raw)}
		_ = json.Unmarshal(raw, &a.body)
		return a
	}
	jsonFormat := func(url string, schema any) map[string]any {
		return map[string]any{"url": url, "formats": []any{map[string]any{"type": "json", "schema": schema}}}
	}

	// The actor's own schema, as the same JSON: its data, and the page's
	// metadata beside it. Each request is a run: two in a row both fit
	// a budget of two steps.
	for range 2 {
		a := scrape(teamToken, "", jsonFormat(pages.URL+"/article", schema))
		if j, _ := a.data(t)["json"].(map[string]any); j["topic"] != "tides" {
			t.Errorf("the actor's json format = %s", a.raw)
		}
		if md, _ := a.data(t)["metadata"].(map[string]any); md["title"] != "Tides of the harbour" {
			t.Errorf("the actor's scrape has metadata %v", md)
		}
	}
	// Two requests in one named run share its budget: the second is over.
	if a := scrape(teamToken, "run-1", map[string]any{"url": pages.URL + "/page/1", "formats": []string{"summary"}}); a.status != http.StatusOK {
		t.Errorf("the first request of run-1 answered %d %s", a.status, a.raw)
	}
	if a := scrape(teamToken, "run-1", map[string]any{"url": pages.URL + "/page/2", "formats": []string{"summary"}}); a.status != http.StatusTooManyRequests || a.body["code"] != "BUDGET_EXHAUSTED" {
		t.Errorf("the second request of run-1 answered %d %s, want the run's budget exhausted", a.status, a.raw)
	}
	// The default actor has no such budget: an API token's run-1 is its own.
	for range 2 {
		if a := scrape(testToken, "run-1", map[string]any{"url": pages.URL + "/page/1", "formats": []string{"summary"}}); a.status != http.StatusOK {
			t.Errorf("an API token's request in run-1 answered %d %s", a.status, a.raw)
		}
	}
	// An API token may give any schema, as an operator may over gRPC.
	other := map[string]any{"type": "object", "properties": map[string]any{"colour": map[string]any{"type": "string"}}}
	wire.Set(`{"colour":"blue"}`, "", 0)
	if a := scrape(testToken, "", jsonFormat(pages.URL+"/article", other)); a.status != http.StatusOK {
		t.Errorf("an API token's own schema answered %d %s", a.status, a.raw)
	}

	for name, tc := range map[string]struct {
		body   map[string]any
		path   string
		run    string
		status int
		want   string
	}{
		"a schema the actor lacks": {body: jsonFormat(pages.URL+"/article", other), status: 403, want: "a schema its host policy names"},
		"markdown":                 {body: map[string]any{"url": pages.URL + "/article"}, status: 403, want: "formats other than json and summary"},
		"actions":                  {body: map[string]any{"url": pages.URL + "/article", "formats": []string{"summary"}, "actions": []any{map[string]any{"type": "click", "selector": "#q"}}}, status: 403, want: "actions"},
		"outside its allowlist":    {body: map[string]any{"url": outside.URL + "/", "formats": []string{"summary"}}, status: 403, want: "NOT"},
		"batch":                    {path: "/v2/batch/scrape", body: map[string]any{"urls": []string{pages.URL + "/page/1"}, "formats": []string{"summary"}}, status: 403, want: "batch scrape is not for this token"},
		"map":                      {path: "/v2/map", body: map[string]any{"url": pages.URL}, status: 403, want: "map is not for this token"},
		"crawl":                    {path: "/v1/crawl", body: map[string]any{"url": pages.URL + "/docs/"}, status: 403, want: "crawl is not for this token"},
		"a run name too long":      {body: map[string]any{"url": pages.URL + "/article", "formats": []string{"summary"}}, run: strings.Repeat("r", 129), status: 400, want: firecrawl.RunHeader},
	} {
		path := tc.path
		if path == "" {
			path = "/v2/scrape"
		}
		b, _ := json.Marshal(tc.body)
		req, _ := http.NewRequestWithContext(t.Context(), "POST", api.URL+path, bytes.NewReader(b))
		req.Header.Set("Authorization", "Bearer "+teamToken)
		if tc.run != "" {
			req.Header.Set(firecrawl.RunHeader, tc.run)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != tc.status || !strings.Contains(string(raw), tc.want) {
			t.Errorf("%s: answered %d %s, want %d and %q", name, res.StatusCode, raw, tc.status, tc.want)
		}
	}
	if n := outsideHits.Load(); n != 0 {
		t.Errorf("the page outside the actor's allowlist was fetched %d times", n)
	}

	// Extract runs as the actor too, with its schema.
	wire.Set(`{"topic":"tides"}`, "", 0)
	b, _ := json.Marshal(map[string]any{"urls": []string{pages.URL + "/page/3"}, "schema": schema})
	req, _ := http.NewRequestWithContext(t.Context(), "POST", api.URL+"/v2/extract", bytes.NewReader(b))
	req.Header.Set("Authorization", "Bearer "+teamToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var started struct {
		URL string `json:"url"`
	}
	_ = json.NewDecoder(res.Body).Decode(&started)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("the actor's extract answered %d", res.StatusCode)
	}
	done := waitExtractAuth(t, started.URL, teamToken)
	if data, _ := done.body["data"].(map[string]any); done.body["status"] != "completed" || data["topic"] != "tides" {
		t.Errorf("the actor's extract = %s", done.raw)
	}
	if a := call(t, "POST", api.URL+"/v2/scrape", "not-a-token-0123456789", map[string]any{"url": pages.URL + "/article"}); a.status != http.StatusUnauthorized {
		t.Errorf("an unknown token answered %d %s", a.status, a.raw)
	}
	// A watch is not model work either: the socket opens only to say so.
	conn, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(api.URL, "http")+"/v2/crawl/00000000-0000-4000-8000-000000000000",
		&websocket.DialOptions{Subprotocols: []string{teamToken}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	_, msg, err := conn.Read(t.Context())
	if err != nil || !strings.Contains(string(msg), `"type":"error"`) || !strings.Contains(string(msg), "crawl is not for this token") {
		t.Errorf("an actor's watch read %s, %v", msg, err)
	}
}
