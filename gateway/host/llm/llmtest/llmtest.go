// Package llmtest serves language-model providers' wire protocols on
// loopback for tests: OpenAI's chat completions and Anthropic's messages,
// answering what a test sets, malformed answers and failures included.
package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"distill.dev/gateway/host/llm"
)

// Server is a provider on loopback that speaks the real protocol of OpenAI's
// chat completions or Anthropic's messages: it checks what the SDK sends
// and answers with body as the provider would.
type Server struct {
	t    *testing.T
	kind string
	mu   sync.Mutex
	// Reply is the model's text; Raw, when set, replaces the whole body
	// (a malformed answer); Status an HTTP error.
	Reply  string
	Raw    string
	Status int
	last   map[string]any
}

// Set changes the answers to come.
func (w *Server) Set(reply, raw string, status int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.Reply, w.Raw, w.Status = reply, raw, status
}

// Last is the body of the last request, decoded.
func (w *Server) Last() map[string]any {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

func (w *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		w.t.Errorf("request body is not JSON: %v", err)
	}
	w.last = req
	switch w.kind {
	case llm.OpenAI:
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer test-key" {
			w.t.Errorf("openai request %s %s auth %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
		}
	case llm.Anthropic:
		// This SDK sends the key as a bearer token; older ones as x-api-key.
		keyed := r.Header.Get("X-Api-Key") == "test-key" || r.Header.Get("Authorization") == "Bearer test-key"
		if r.URL.Path != "/v1/messages" || !keyed || r.Header.Get("Anthropic-Version") == "" {
			w.t.Errorf("anthropic request %s %s version %q", r.Method, r.URL.Path, r.Header.Get("Anthropic-Version"))
		}
	}
	rw.Header().Set("Content-Type", "application/json")
	if w.Status != 0 {
		rw.WriteHeader(w.Status)
		_, _ = io.WriteString(rw, `{"error":{"type":"server_error","message":"overloaded"}}`)
		return
	}
	if w.Raw != "" {
		_, _ = io.WriteString(rw, w.Raw)
		return
	}
	text, _ := json.Marshal(w.Reply)
	switch w.kind {
	case llm.OpenAI:
		_, _ = io.WriteString(rw, `{"id":"chatcmpl-1","object":"chat.completion","created":1764614400,"model":"gpt-test",`+
			`"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":`+string(text)+`,"refusal":null}}],`+
			`"usage":{"prompt_tokens":120,"completion_tokens":7,"total_tokens":127}}`)
	case llm.Anthropic:
		_, _ = io.WriteString(rw, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test",`+
			`"content":[{"type":"text","text":`+string(text)+`}],"stop_reason":"end_turn","stop_sequence":null,`+
			`"usage":{"input_tokens":130,"output_tokens":9}}`)
	}
}

// Start serves a provider of kind on loopback and returns its Config.
func Start(t *testing.T, kind string) (*Server, llm.Config) {
	t.Helper()
	w := &Server{t: t, kind: kind}
	srv := httptest.NewServer(w)
	t.Cleanup(srv.Close)
	base := srv.URL + "/v1"
	if kind == llm.Anthropic {
		base = srv.URL // the SDK adds /v1/messages
	}
	return w, llm.Config{Kind: kind, APIKey: "test-key", BaseURL: base, Model: "test-model"}
}
