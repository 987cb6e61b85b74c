package host

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"distill.dev/gateway/app"
	"distill.dev/gateway/host/llm"
	"distill.dev/gateway/host/llm/llmtest"
)

const productPage = `<!doctype html><html><head><title>Widget</title></head><body><main>
<h1>Widget</h1><p>The Widget is a small thing that costs 9.50 euros and ships in two days. It is made of steel
and comes in three colours. Reviews say it lasts for years and that it is easy to clean.</p>
<p><a href="/reviews">Read the reviews</a> or <a href="/cart?session_id=abc">view your cart</a>.</p>
<form action="/search" method="get"><label for="q">Search</label><input id="q" name="q" type="text" required><button type="submit">Search</button></form>
</main></body></html>`

const shopPage = `<!doctype html><html><head><title>Shop</title></head><body><main>
<h1>Shop</h1><p>One widget, 9.50 euros, ships in two days. Press the button to order it; the order cannot be undone.</p>
<form action="/order" method="post"><input type="hidden" name="item" value="widget"><button id="buy" type="submit">Buy now</button></form>
<p><a id="delete-account" href="/account/delete">Delete my account</a></p>
</main></body></html>`

// site serves the test pages and counts the requests of another server,
// the one off the allowlist.
type site struct {
	on, off   *httptest.Server
	offHits   atomic.Int32
	orders    atomic.Int32
	onURL     string
	offTarget string
	// held requests of /held wait until release is closed.
	mu       sync.Mutex
	release  chan struct{}
	heldSeen atomic.Int32
}

// hold makes requests of /held wait until release is closed.
func (s *site) hold(release chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.release = release
}

func (s *site) heldHits() int { return int(s.heldSeen.Load()) }

func newSite(t *testing.T) *site {
	s := &site{}
	s.off = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.offHits.Add(1)
		io.WriteString(w, productPage)
	}))
	t.Cleanup(s.off.Close)
	ou, _ := url.Parse(s.off.URL)
	// The same loopback, named otherwise: only 127.0.0.1 is listed.
	s.offTarget = "http://localhost:" + ou.Port() + "/"
	s.on = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/held":
			s.heldSeen.Add(1)
			s.mu.Lock()
			release := s.release
			s.mu.Unlock()
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, productPage)
		case "/away":
			http.Redirect(w, r, s.offTarget, http.StatusFound)
		case "/shop":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, shopPage)
		case "/order":
			if r.Method != http.MethodPost {
				http.Error(w, "POST only", http.StatusMethodNotAllowed)
				return
			}
			s.orders.Add(1)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, `<!doctype html><html><head><title>Thanks</title></head><body><main><h1>Thanks</h1><p>Your order of one widget is placed and ships in two days.</p><p><a href="/shop">Back to the shop</a></p></main></body></html>`)
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, productPage)
		}
	}))
	t.Cleanup(s.on.Close)
	s.onURL = s.on.URL
	return s
}

func (s *site) port(t *testing.T, srv *httptest.Server) string {
	u, _ := url.Parse(srv.URL)
	return u.Port()
}

type rig struct {
	sys       *app.System
	js        jetstream.JetStream
	policy    *Policy
	ops       *Operations
	approvals *Approvals
	engine    *Engine
	site      *site
	wire      *llmtest.Server
}

// newRig runs the engine over distill in this process (app.Open, with
// --allow-local as the test pages are on loopback), budgets on an embedded
// NATS server, and a provider of kind on loopback.
func newRig(t *testing.T, kind string, actorYAML string, topYAML ...string) *rig {
	t.Helper()
	s := newSite(t)
	policy := fmt.Sprintf(`
actors:
  default:
    allowed_hosts: [127.0.0.1]
    allowed_schemes: [http]
    allowed_ports: [%s, %s]
%s
    schemas:
      product:
        type: object
        properties: {name: {type: string}, price: {type: number, minimum: 0}}
        required: [name, price]
        additionalProperties: false
`, s.port(t, s.on), s.port(t, s.off), actorYAML) + strings.Join(topYAML, "\n")
	p, err := Parse([]byte(policy), env(map[string]string{"TEAM_TOKEN": teamToken}))
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	sys, err := app.Open(context.Background(), logger, app.Config{AllowLocal: true, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sys.Close() })
	js, _ := twoGateways(t)
	var provider llm.Provider
	var wire *llmtest.Server
	if kind != "" {
		var cfg llm.Config
		wire, cfg = llmtest.Start(t, kind)
		if provider, err = llm.New(cfg); err != nil {
			t.Fatal(err)
		}
	}
	ops, approvals := NewOperations(js), NewApprovals(js)
	e := NewEngine(logger, Fixed(p), NewBudgets(js), sys, EngineConfig{Provider: provider, AllowLocal: true, Operations: ops, Approvals: approvals})
	return &rig{engine: e, site: s, wire: wire, ops: ops, approvals: approvals, sys: sys, js: js, policy: p}
}

const teamToken = "team-token-0123456789abcdef"

var me = Who{Actor: DefaultActor, Run: "run-1"}

func wantEnvelope(t *testing.T, env *Envelope, status string, code Code) {
	t.Helper()
	if env.Status != status || (code == "") != (env.Error == nil) || (env.Error != nil && env.Error.Code != code) {
		b, _ := env.JSON()
		t.Fatalf("envelope %s, want status %s code %q", b, status, code)
	}
	if d, _ := Digest(env.Data); d != env.Digest {
		t.Fatal("digest is not that of the data")
	}
	if env.OperationID == "" || env.CapturedAt == "" {
		t.Fatal("no operation_id or captured_at")
	}
}

func TestInspect(t *testing.T) {
	r := newRig(t, "", "    verify_dns: true")
	env := r.engine.Inspect(t.Context(), me, Input{URL: r.site.onURL + "/", Instruction: "search the catalogue"})
	wantEnvelope(t, env, StatusOK, "")
	cands, ok := env.Data.([]any)
	if !ok || len(cands) < 3 {
		t.Fatalf("candidates %#v", env.Data)
	}
	first := cands[0].(map[string]any)
	if first["kind"] != "form" && first["text"] != "Search" {
		t.Fatalf("the instruction did not rank the search first: %v", first)
	}
	b, _ := env.JSON()
	if strings.Contains(string(b), "session_id=abc") {
		t.Fatalf("a credential-like value left in a candidate: %s", b)
	}
	if env.FinalURL != r.site.onURL+"/" {
		t.Fatalf("final_url %s", env.FinalURL)
	}

	// max_bytes only tightens.
	env = r.engine.Inspect(t.Context(), Who{Actor: DefaultActor, Run: "run-2"}, Input{URL: r.site.onURL + "/", MaxBytes: 40})
	wantEnvelope(t, env, StatusTruncated, "")
	if c, _ := Canonical(env.Data); len(c) > 40 || !env.Truncated {
		t.Fatalf("%d bytes kept, truncated %v", len(c), env.Truncated)
	}
}

func TestInspectRefusals(t *testing.T) {
	r := newRig(t, "", "")
	tests := []struct {
		name string
		who  Who
		in   Input
		code Code
	}{
		{"unknown actor", Who{Actor: "ghost", Run: "r"}, Input{URL: r.site.onURL}, NotAuthorized},
		{"off the list", me, Input{URL: r.site.offTarget}, NotAuthorized},
		{"a port off the list", me, Input{URL: "http://127.0.0.1:1/"}, NotAuthorized},
		{"a redirect off the list", me, Input{URL: r.site.onURL + "/away"}, NotAuthorized},
		{"not a URL", me, Input{URL: "ftp://127.0.0.1/"}, InvalidInput},
		{"no URL", me, Input{}, InvalidInput},
		{"negative max_bytes", me, Input{URL: r.site.onURL, MaxBytes: -1}, InvalidInput},
		{"no provider", me, Input{URL: r.site.onURL}, UnsupportedSecurityCapability},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var env *Envelope
			if tt.name == "no provider" {
				env = r.engine.Summarize(t.Context(), tt.who, tt.in)
			} else {
				env = r.engine.Inspect(t.Context(), tt.who, tt.in)
			}
			wantEnvelope(t, env, StatusError, tt.code)
		})
	}
	if n := r.site.offHits.Load(); n != 0 {
		t.Fatalf("the host off the list was requested %d times", n)
	}
}

func TestBudgetStepsThroughTools(t *testing.T) {
	r := newRig(t, "", "    budget: {max_steps: 3}")
	who := Who{Actor: DefaultActor, Run: "steps"}
	wantEnvelope(t, r.engine.Inspect(t.Context(), who, Input{URL: r.site.onURL}), StatusOK, "") // 2 steps
	wantEnvelope(t, r.engine.Inspect(t.Context(), who, Input{URL: r.site.onURL}), StatusError, BudgetExhausted)
	wantEnvelope(t, r.engine.Inspect(t.Context(), who, Input{URL: r.site.onURL}), StatusError, BudgetExhausted)
}

func TestBudgetBytesThroughTools(t *testing.T) {
	r := newRig(t, "", "    budget: {max_bytes: 100}")
	who := Who{Actor: DefaultActor, Run: "bytes"}
	env := r.engine.Inspect(t.Context(), who, Input{URL: r.site.onURL})
	wantEnvelope(t, env, StatusTruncated, "")
	if c, _ := Canonical(env.Data); len(c) > 100 {
		t.Fatalf("%d bytes kept past the budget", len(c))
	}
	wantEnvelope(t, r.engine.Inspect(t.Context(), who, Input{URL: r.site.onURL}), StatusError, BudgetExhausted)
}

func TestExtractAndSummarize(t *testing.T) {
	for _, kind := range []string{llm.OpenAI, llm.Anthropic} {
		t.Run(kind, func(t *testing.T) {
			r := newRig(t, kind, "    budget: {max_cost_usd: 0.5}")
			run := 0
			next := func() Who { run++; return Who{Actor: DefaultActor, Run: fmt.Sprint(kind, run)} }

			r.wire.Set(`{"name":"Widget","price":9.5}`, "", 0)
			env := r.engine.Extract(t.Context(), next(), "product", Input{URL: r.site.onURL, Instruction: "the product"})
			wantEnvelope(t, env, StatusOK, "")
			if c, _ := Canonical(env.Data); string(c) != `{"name":"Widget","price":9.5}` {
				t.Fatalf("data %s", c)
			}
			usage, _ := env.Locator["provider_usage"].(map[string]any)
			if usage["input_tokens"] == float64(0) || usage == nil {
				t.Fatalf("usage %v", env.Locator)
			}
			// The page reached the provider as labelled data.
			if b, _ := json.Marshal(r.wire.Last()); !strings.Contains(string(b), `\u003cpage\u003e`) || !strings.Contains(string(b), "costs 9.50 euros") {
				t.Fatalf("the provider was not sent the page: %s", b)
			}

			for name, reply := range map[string][3]any{
				"schema fails":    {`{"name":"Widget"}`, "", 0},
				"extra property":  {`{"name":"Widget","price":1,"evil":true}`, "", 0},
				"not JSON":        {`Sure! The product is a Widget.`, "", 0},
				"not an object":   {`["Widget"]`, "", 0},
				"malformed wire":  {"", `{"id":"x","content":[{"type":"te`, 0},
				"provider failed": {"", "", 500},
			} {
				r.wire.Set(reply[0].(string), reply[1].(string), reply[2].(int))
				env := r.engine.Extract(t.Context(), next(), "product", Input{URL: r.site.onURL})
				if env.Status != StatusError || env.Error.Code != ProviderError || env.Data != nil {
					b, _ := env.JSON()
					t.Fatalf("%s: %s, want PROVIDER_ERROR and no data", name, b)
				}
			}

			// A stream the provider breaks off, after a valid first delta.
			r.wire.Set(`{"name":"Widget","price":9.5}`, "", 0)
			r.wire.SetStreamFailure(true)
			env = r.engine.Extract(t.Context(), next(), "product", Input{URL: r.site.onURL})
			wantEnvelope(t, env, StatusError, ProviderError)
			r.wire.SetStreamFailure(false)
			// The cost, when the provider reports one, beside the advisory
			// ceiling.
			if kind == llm.OpenAI {
				r.wire.SetCost(0.0012)
				env = r.engine.Extract(t.Context(), next(), "product", Input{URL: r.site.onURL})
				wantEnvelope(t, env, StatusOK, "")
				if u, _ := env.Locator["provider_usage"].(map[string]any); u["cost_usd"] != 0.0012 || u["max_cost_usd"] != 0.5 {
					t.Fatalf("usage %v", env.Locator)
				}
				r.wire.SetCost(0)
			}

			// A schema the policy does not name is not the model's to ask for.
			env = r.engine.Extract(t.Context(), next(), "secrets", Input{URL: r.site.onURL})
			wantEnvelope(t, env, StatusError, NotAuthorized)

			r.wire.Set("A steel widget for 9.50 euros that ships in two days.", "", 0)
			env = r.engine.Summarize(t.Context(), next(), Input{URL: r.site.onURL, Length: "short"})
			wantEnvelope(t, env, StatusOK, "")
			if env.Data != "A steel widget for 9.50 euros that ships in two days." {
				t.Fatalf("summary %v", env.Data)
			}
			env = r.engine.Summarize(t.Context(), next(), Input{URL: r.site.onURL, Length: "epic"})
			wantEnvelope(t, env, StatusError, InvalidInput)
		})
	}
}

// ExtractWith takes the host application's schema with the call, held
// to the actor's schema limits, and checks the provider's data against it.
func TestExtractWith(t *testing.T) {
	r := newRig(t, llm.OpenAI, "")
	schema := []byte(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)
	r.wire.Set(`{"name":"Widget"}`, "", 0)
	env := r.engine.ExtractWith(t.Context(), Who{Actor: DefaultActor, Run: "inline-1"}, schema, Input{URL: r.site.onURL, Instruction: "the product's name"})
	wantEnvelope(t, env, StatusOK, "")
	if c, _ := Canonical(env.Data); string(c) != `{"name":"Widget"}` {
		t.Fatalf("data %s", c)
	}
	if b, _ := json.Marshal(r.wire.Last()); !strings.Contains(string(b), `"required":["name"]`) {
		t.Fatalf("the provider was not sent the schema: %s", b)
	}
	r.wire.Set(`{"title":"Widget"}`, "", 0)
	env = r.engine.ExtractWith(t.Context(), Who{Actor: DefaultActor, Run: "inline-2"}, schema, Input{URL: r.site.onURL})
	wantEnvelope(t, env, StatusError, ProviderError)
	for name, bad := range map[string]string{
		"not an object schema": `{"type":"array"}`,
		"remote reference":     `{"type":"object","properties":{"a":{"$ref":"https://example.com/s.json"}}}`,
		"not JSON":             `{"type":`,
	} {
		env := r.engine.ExtractWith(t.Context(), Who{Actor: DefaultActor, Run: "inline-bad"}, []byte(bad), Input{URL: r.site.onURL})
		if env.Status != StatusError || env.Error.Code != InvalidInput {
			b, _ := env.JSON()
			t.Errorf("%s: %s, want INVALID_INPUT", name, b)
		}
	}
}
