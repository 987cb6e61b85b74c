package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"distill.dev/gateway/app"
	"distill.dev/gateway/host"
	"distill.dev/gateway/host/llm"
	"distill.dev/gateway/host/llm/llmtest"
	"distill.dev/services/platform/natsembed"
)

// hostServer is host mode over distill in this process, budgets on an
// embedded NATS server and an OpenAI-speaking provider on loopback.
func hostServer(t *testing.T) (*Server, string, *llmtest.Server, *host.Approvals) {
	t.Helper()
	pageURL := hostSite(t)
	u, _ := url.Parse(pageURL)
	p, err := host.Parse([]byte(fmt.Sprintf(`{"actors": {"default": {"allowed_hosts": ["127.0.0.1"], "allowed_ports": [%s],
		"schemas": {"product": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"], "additionalProperties": false}}}}}`, u.Port())),
		func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	ps := host.Fixed(p)
	engine, wire, approvals := hostEngine(t, ps)
	return NewHost(quiet, engine, ps, "mcp-test-run", "test"), pageURL, wire, approvals
}

// hostSite serves a shop's pages on loopback.
func hostSite(t *testing.T) string {
	t.Helper()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if r.URL.Path == "/shop" {
			io.WriteString(w, `<!doctype html><html><head><title>Shop</title></head><body><main><h1>Shop</h1>
<p>Search the catalogue of steel widgets that ship in two days and last for years.</p>
<form action="/search"><input id="q" name="q"><button id="go" type="submit">Search</button></form></main></body></html>`)
			return
		}
		if r.URL.Path == "/search" {
			fmt.Fprintf(w, `<!doctype html><html><head><title>Results for %s</title></head><body><main><h1>Results</h1>
<p>One steel widget matches your search, for 9.50 euros; it ships in two days.</p></main></body></html>`, r.URL.Query().Get("q"))
			return
		}
		io.WriteString(w, `<!doctype html><html><head><title>Widget</title></head><body><main><h1>Widget</h1>
<p>The Widget costs 9.50 euros and ships in two days; it is made of steel and lasts for years, reviewers say.</p>
<p><a href="/reviews">Reviews</a></p></main></body></html>`)
	}))
	t.Cleanup(page.Close)
	return page.URL
}

// hostEngine runs host mode under ps over distill in this process,
// budgets on an embedded NATS server and an OpenAI-speaking provider on
// loopback.
func hostEngine(t *testing.T, ps *host.Policies) (*host.Engine, *llmtest.Server, *host.Approvals) {
	t.Helper()
	sys, err := app.Open(context.Background(), quiet, app.Config{AllowLocal: true, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sys.Close() })
	ns, err := natsembed.Start(natsembed.Config{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	nc, err := ns.Connect("test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	wire, cfg := llmtest.Start(t, llm.OpenAI)
	provider, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	approvals := host.NewApprovals(js)
	engine := host.NewEngine(quiet, ps, host.NewBudgets(js), sys, host.EngineConfig{Provider: provider, AllowLocal: true,
		Operations: host.NewOperations(js), Approvals: approvals})
	return engine, wire, approvals
}

func envelopeOf(t *testing.T, texts []string) host.Envelope {
	t.Helper()
	if len(texts) != 1 {
		t.Fatalf("%d text blocks, want one envelope", len(texts))
	}
	var env host.Envelope
	if err := json.Unmarshal([]byte(texts[0]), &env); err != nil {
		t.Fatalf("not an envelope: %s", texts[0])
	}
	return env
}

func TestHostTools(t *testing.T) {
	srv, pageURL, wire, _ := hostServer(t)
	cs := connectTo(t, srv)

	texts, isErr := call(t, cs, "inspect", map[string]any{"url": pageURL + "/", "instruction": "reviews"})
	env := envelopeOf(t, texts)
	if isErr || env.Status != host.StatusOK || env.Digest == "" {
		t.Fatalf("inspect: %s", texts[0])
	}

	wire.Set(`{"name":"Widget"}`, "", 0)
	texts, isErr = call(t, cs, "extract_product", map[string]any{"url": pageURL + "/"})
	env = envelopeOf(t, texts)
	if isErr || env.Status != host.StatusOK || env.Data.(map[string]any)["name"] != "Widget" {
		t.Fatalf("extract_product: %s", texts[0])
	}

	for name, args := range map[string]map[string]any{
		"off the list":      {"url": "https://example.com/"},
		"allow_local":       {"url": pageURL + "/", "allow_local": true},
		"max_bytes is zero": {"url": pageURL + "/", "max_bytes": 0},
	} {
		texts, isErr = call(t, cs, "inspect", args)
		env = envelopeOf(t, texts)
		want := host.InvalidInput
		if name == "off the list" {
			want = host.NotAuthorized
		}
		if !isErr || env.Status != host.StatusError || env.Error == nil || env.Error.Code != want {
			t.Errorf("%s: %s, want %s", name, texts[0], want)
		}
	}
}

// act through an MCP client: annotated for the client to ask its user,
// refused without the host's approval, run once with it.
func TestHostAct(t *testing.T) {
	srv, pageURL, _, approvals := hostServer(t)
	cs := connectTo(t, srv)
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		destructive := tool.Annotations != nil && tool.Annotations.DestructiveHint != nil && *tool.Annotations.DestructiveHint
		if (tool.Name == "act") != destructive || (tool.Name == "act") == tool.Annotations.ReadOnlyHint {
			t.Errorf("%s: annotations %+v", tool.Name, tool.Annotations)
		}
		if tool.Name == "act" && tool.Meta["distill.dev/requires_approval"] != true {
			t.Errorf("act: meta %v", tool.Meta)
		}
	}
	shop := pageURL + "/shop"
	args := map[string]any{"url": shop, "approval_id": "none", "method": "type", "selector": "#q",
		"description": "search for widgets", "arguments": map[string]any{"text": "steel", "key": "Enter"}}
	texts, isErr := call(t, cs, "act", args)
	if env := envelopeOf(t, texts); !isErr || env.Error == nil || env.Error.Code != host.ApprovalRequired {
		t.Fatalf("act without approval: %s", texts[0])
	}
	// The run the operator named (--run).
	ap, err := approvals.Create(t.Context(), host.DefaultActor, "mcp-test-run", shop,
		host.Action{Method: "type", Selector: "#q", Arguments: map[string]string{"text": "steel", "key": "Enter"}}, time.Minute, host.Bindings{}, false)
	if err != nil {
		t.Fatal(err)
	}
	args["approval_id"] = ap.ID
	texts, isErr = call(t, cs, "act", args)
	env := envelopeOf(t, texts)
	if isErr || env.Status != host.StatusOK || env.Data.(map[string]any)["title"] != "Results for steel" {
		t.Fatalf("act: %s", texts[0])
	}
	texts, _ = call(t, cs, "act", args)
	if env := envelopeOf(t, texts); env.Error == nil || env.Error.Code != host.ApprovalStale {
		t.Fatalf("act again: %s", texts[0])
	}
	args["arguments"] = "steel"
	texts, _ = call(t, cs, "act", args)
	if env := envelopeOf(t, texts); env.Error == nil || env.Error.Code != host.InvalidInput {
		t.Fatalf("arguments not an object: %s", texts[0])
	}
}
