package llm

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// wire is a provider on loopback that speaks the real protocol of OpenAI's
// chat completions or Anthropic's messages: it checks what the SDK sends
// and answers with body as the provider would.
type wire struct {
	t    *testing.T
	kind string
	mu   sync.Mutex
	// reply is the model's text; raw, when set, replaces the whole body
	// (a malformed answer); status an HTTP error.
	reply  string
	raw    string
	status int
	last   map[string]any
}

func (w *wire) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		w.t.Errorf("request body is not JSON: %v", err)
	}
	w.last = req
	switch w.kind {
	case OpenAI:
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer test-key" {
			w.t.Errorf("openai request %s %s auth %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
		}
	case Anthropic:
		// This SDK sends the key as a bearer token; older ones as x-api-key.
		keyed := r.Header.Get("X-Api-Key") == "test-key" || r.Header.Get("Authorization") == "Bearer test-key"
		if r.URL.Path != "/v1/messages" || !keyed || r.Header.Get("Anthropic-Version") == "" {
			w.t.Errorf("anthropic request %s %s version %q", r.Method, r.URL.Path, r.Header.Get("Anthropic-Version"))
		}
	}
	rw.Header().Set("Content-Type", "application/json")
	if w.status != 0 {
		rw.WriteHeader(w.status)
		_, _ = io.WriteString(rw, `{"error":{"type":"server_error","message":"overloaded"}}`)
		return
	}
	if w.raw != "" {
		_, _ = io.WriteString(rw, w.raw)
		return
	}
	text, _ := json.Marshal(w.reply)
	switch w.kind {
	case OpenAI:
		_, _ = io.WriteString(rw, `{"id":"chatcmpl-1","object":"chat.completion","created":1764614400,"model":"gpt-test",`+
			`"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":`+string(text)+`,"refusal":null}}],`+
			`"usage":{"prompt_tokens":120,"completion_tokens":7,"total_tokens":127}}`)
	case Anthropic:
		_, _ = io.WriteString(rw, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test",`+
			`"content":[{"type":"text","text":`+string(text)+`}],"stop_reason":"end_turn","stop_sequence":null,`+
			`"usage":{"input_tokens":130,"output_tokens":9}}`)
	}
}

// StartWire serves a provider of kind on loopback and returns its Config.
func startWire(t *testing.T, kind string) (*wire, Config) {
	w := &wire{t: t, kind: kind}
	srv := httptest.NewServer(w)
	t.Cleanup(srv.Close)
	base := srv.URL + "/v1"
	if kind == Anthropic {
		base = srv.URL // the SDK adds /v1/messages
	}
	return w, Config{Kind: kind, APIKey: "test-key", BaseURL: base, Model: "test-model"}
}

func TestProvidersOverTheirWire(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}`)
	for _, kind := range []string{OpenAI, Anthropic} {
		t.Run(kind, func(t *testing.T) {
			w, cfg := startWire(t, kind)
			p, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			w.reply = `{"name":"Widget"}`
			a, err := p.Complete(t.Context(), Request{System: "sys", User: "page text", Schema: schema, SchemaName: "product"})
			if err != nil {
				t.Fatal(err)
			}
			if a.Text != `{"name":"Widget"}` || a.InputTokens == 0 || a.OutputTokens == 0 {
				t.Fatalf("answer %+v", a)
			}
			// The schema went in the provider's JSON-schema mode.
			switch kind {
			case OpenAI:
				rf, _ := w.last["response_format"].(map[string]any)
				js, _ := rf["json_schema"].(map[string]any)
				if rf["type"] != "json_schema" || js["name"] != "product" || js["strict"] != true || js["schema"] == nil {
					t.Fatalf("response_format %v", w.last["response_format"])
				}
			case Anthropic:
				oc, _ := w.last["output_config"].(map[string]any)
				f, _ := oc["format"].(map[string]any)
				if f["type"] != "json_schema" || f["schema"] == nil {
					t.Fatalf("output_config %v", w.last["output_config"])
				}
			}
			if w.last["model"] != "test-model" {
				t.Fatalf("model %v", w.last["model"])
			}

			// Malformed answers and failures are errors, never text.
			w.reply = ""
			w.raw = `{"id":"x","choices":[{"message":{"content":` // cut short
			if _, err := p.Complete(t.Context(), Request{System: "s", User: "u"}); err == nil {
				t.Fatal("a malformed answer was taken")
			}
			w.raw = ""
			w.status = http.StatusInternalServerError
			if _, err := p.Complete(t.Context(), Request{System: "s", User: "u"}); err == nil || !strings.Contains(err.Error(), kind) {
				t.Fatalf("a failed answer: %v", err)
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want Config
		err  bool
	}{
		{"none", nil, Config{}, true},
		{"anthropic", map[string]string{"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}, Config{Kind: Anthropic, APIKey: "a"}, false},
		{"openai", map[string]string{"OPENAI_API_KEY": "o", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, Config{Kind: OpenAI, APIKey: "o", BaseURL: "http://127.0.0.1:9/v1"}, false},
		{"ollama", map[string]string{"OLLAMA_HOST": "127.0.0.1:11434", "DISTILL_LLM_MODEL": "qwen"}, Config{Kind: Ollama, BaseURL: "http://127.0.0.1:11434/v1", Model: "qwen"}, false},
		{"chosen", map[string]string{"DISTILL_LLM_PROVIDER": "openai", "ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}, Config{Kind: OpenAI, APIKey: "o"}, false},
		{"unknown", map[string]string{"DISTILL_LLM_PROVIDER": "llamafile"}, Config{}, true},
		{"anthropic without key", map[string]string{"DISTILL_LLM_PROVIDER": "anthropic"}, Config{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromEnv(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if (err != nil) != tt.err || got != tt.want {
				t.Fatalf("%+v, %v; want %+v (error %v)", got, err, tt.want, tt.err)
			}
		})
	}
}
