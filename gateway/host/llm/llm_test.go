package llm_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"distill.dev/gateway/host/llm"
	"distill.dev/gateway/host/llm/llmtest"
)

func TestProvidersOverTheirWire(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"],"additionalProperties":false}`)
	for _, kind := range []string{llm.OpenAI, llm.Anthropic} {
		t.Run(kind, func(t *testing.T) {
			w, cfg := llmtest.Start(t, kind)
			p, err := llm.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			w.Set(`{"name":"Widget"}`, "", 0)
			a, err := p.Complete(t.Context(), llm.Request{System: "sys", User: "page text", Schema: schema, SchemaName: "product"})
			if err != nil {
				t.Fatal(err)
			}
			if a.Text != `{"name":"Widget"}` || a.InputTokens == 0 || a.OutputTokens == 0 {
				t.Fatalf("answer %+v", a)
			}
			// The schema went in the provider's JSON-schema mode.
			switch kind {
			case llm.OpenAI:
				rf, _ := w.Last()["response_format"].(map[string]any)
				js, _ := rf["json_schema"].(map[string]any)
				if rf["type"] != "json_schema" || js["name"] != "product" || js["strict"] != true || js["schema"] == nil {
					t.Fatalf("response_format %v", w.Last()["response_format"])
				}
			case llm.Anthropic:
				oc, _ := w.Last()["output_config"].(map[string]any)
				f, _ := oc["format"].(map[string]any)
				if f["type"] != "json_schema" || f["schema"] == nil {
					t.Fatalf("output_config %v", w.Last()["output_config"])
				}
			}
			if w.Last()["model"] != "test-model" || w.Last()["stream"] != true {
				t.Fatalf("model %v, stream %v", w.Last()["model"], w.Last()["stream"])
			}
			// Several deltas, non-ASCII cut between them, make one answer.
			w.Set(`{"name":"Wídgét – ünïcode"}`, "", 0)
			if a, err := p.Complete(t.Context(), llm.Request{System: "s", User: "u"}); err != nil || a.Text != `{"name":"Wídgét – ünïcode"}` {
				t.Fatalf("a streamed answer: %+v, %v", a, err)
			}
			// A stream the provider ends with an error is an error, never
			// the text that came before it.
			w.SetStreamFailure(true)
			if a, err := p.Complete(t.Context(), llm.Request{System: "s", User: "u"}); err == nil {
				t.Fatalf("a stream that failed midway was taken: %+v", a)
			}
			w.SetStreamFailure(false)
			// A stream of no events.
			w.Set("", "data: [DONE]\n\n", 0)
			if a, err := p.Complete(t.Context(), llm.Request{System: "s", User: "u"}); err == nil {
				t.Fatalf("an empty stream was taken: %+v", a)
			}

			// Malformed answers and failures are errors, never text.
			w.Set("", `{"id":"x","choices":[{"message":{"content":`, 0) // cut short
			if _, err := p.Complete(t.Context(), llm.Request{System: "s", User: "u"}); err == nil {
				t.Fatal("a malformed answer was taken")
			}
			w.Set("", "", http.StatusInternalServerError)
			if _, err := p.Complete(t.Context(), llm.Request{System: "s", User: "u"}); err == nil || !strings.Contains(err.Error(), kind) {
				t.Fatalf("a failed answer: %v", err)
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want llm.Config
		err  bool
	}{
		{"none", nil, llm.Config{}, true},
		{"anthropic", map[string]string{"ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}, llm.Config{Kind: llm.Anthropic, APIKey: "a"}, false},
		{"openai", map[string]string{"OPENAI_API_KEY": "o", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}, llm.Config{Kind: llm.OpenAI, APIKey: "o", BaseURL: "http://127.0.0.1:9/v1"}, false},
		{"ollama", map[string]string{"OLLAMA_HOST": "127.0.0.1:11434", "DISTILL_LLM_MODEL": "qwen"}, llm.Config{Kind: llm.Ollama, BaseURL: "http://127.0.0.1:11434/v1", Model: "qwen"}, false},
		{"chosen", map[string]string{"DISTILL_LLM_PROVIDER": "openai", "ANTHROPIC_API_KEY": "a", "OPENAI_API_KEY": "o"}, llm.Config{Kind: llm.OpenAI, APIKey: "o"}, false},
		{"unknown", map[string]string{"DISTILL_LLM_PROVIDER": "llamafile"}, llm.Config{}, true},
		{"anthropic without key", map[string]string{"DISTILL_LLM_PROVIDER": "anthropic"}, llm.Config{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := llm.FromEnv(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if (err != nil) != tt.err || got != tt.want {
				t.Fatalf("%+v, %v; want %+v (error %v)", got, err, tt.want, tt.err)
			}
		})
	}
}

// A cost, where an OpenAI-compatible server reports one, is passed on.
func TestOpenAICost(t *testing.T) {
	w, cfg := llmtest.Start(t, llm.OpenAI)
	p, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.Set("a summary", "", 0)
	a, err := p.Complete(t.Context(), llm.Request{System: "s", User: "u"})
	if err != nil || a.CostUSD != nil {
		t.Fatalf("no cost reported: %+v, %v", a, err)
	}
	w.SetCost(0.00042)
	a, err = p.Complete(t.Context(), llm.Request{System: "s", User: "u"})
	if err != nil || a.CostUSD == nil || *a.CostUSD != 0.00042 {
		t.Fatalf("cost: %+v, %v", a, err)
	}
}
