// Package llmtest serves language-model providers' wire protocols on
// loopback for tests: OpenAI's chat completions and Anthropic's messages,
// answering what a test sets, malformed answers and failures included.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"distill.dev/gateway/host/llm"
)

// Server is a provider on loopback that speaks the real protocol of OpenAI's
// chat completions or Anthropic's messages: it checks what the SDK sends
// and answers as the provider would, streamed as server-sent events when
// the request asks for a stream (the reply cut into several deltas).
type Server struct {
	t    *testing.T
	kind string
	mu   sync.Mutex
	// Reply is the model's text; Raw, when set, replaces the whole body
	// (a malformed answer); Status an HTTP error.
	Reply  string
	Raw    string
	Status int
	// Cost, when set, is reported in OpenAI's usage as OpenRouter does.
	Cost float64
	// MidStreamError ends a stream with the provider's error event after
	// the first delta.
	MidStreamError bool
	last           map[string]any
}

// SetStreamFailure makes streams fail midway (true) or not.
func (w *Server) SetStreamFailure(fail bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.MidStreamError = fail
}

// SetCost sets the cost reported with OpenAI's usage.
func (w *Server) SetCost(c float64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.Cost = c
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

// ServeHTTP checks a request as the provider would and answers it: with
// the set HTTP error, the raw body, or the reply whole or streamed.
func (w *Server) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	defer w.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		w.t.Errorf("request body is not JSON: %v", err)
	}
	w.last = req
	w.checkRequest(r)
	stream, _ := req["stream"].(bool)
	if w.Status != 0 {
		rw.Header().Set("Content-Type", "application/json")
		rw.WriteHeader(w.Status)
		_, _ = io.WriteString(rw, `{"error":{"type":"server_error","message":"overloaded"}}`)
		return
	}
	if stream {
		rw.Header().Set("Content-Type", "text/event-stream")
	} else {
		rw.Header().Set("Content-Type", "application/json")
	}
	if w.Raw != "" {
		_, _ = io.WriteString(rw, w.Raw)
		return
	}
	usage := `"usage":{"prompt_tokens":120,"completion_tokens":7,"total_tokens":127}`
	if w.Cost != 0 {
		usage = fmt.Sprintf(`"usage":{"prompt_tokens":120,"completion_tokens":7,"total_tokens":127,"cost":%g}`, w.Cost)
	}
	switch {
	case !stream:
		w.writeWhole(rw, usage)
	case w.kind == llm.OpenAI:
		w.streamOpenAI(rw, usage)
	case w.kind == llm.Anthropic:
		w.streamAnthropic(rw)
	}
}

// checkRequest fails the test when r is not addressed and keyed as the
// provider expects.
func (w *Server) checkRequest(r *http.Request) {
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
}

// writeWhole answers with the reply in one body; usage is OpenAI's usage
// field.
func (w *Server) writeWhole(rw http.ResponseWriter, usage string) {
	text, _ := json.Marshal(w.Reply)
	switch w.kind {
	case llm.OpenAI:
		_, _ = io.WriteString(rw, `{"id":"chatcmpl-1","object":"chat.completion","created":1764614400,"model":"gpt-test",`+
			`"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":`+string(text)+`,"refusal":null}}],`+usage+`}`)
	case llm.Anthropic:
		_, _ = io.WriteString(rw, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test",`+
			`"content":[{"type":"text","text":`+string(text)+`}],"stop_reason":"end_turn","stop_sequence":null,`+
			`"usage":{"input_tokens":130,"output_tokens":9}}`)
	}
}

// streamOpenAI streams the reply as OpenAI's chat completion chunks,
// usage last.
func (w *Server) streamOpenAI(rw http.ResponseWriter, usage string) {
	chunk := func(choices string) string {
		return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1764614400,"model":"gpt-test","choices":[` + choices + `]}`
	}
	event(rw, "", chunk(`{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}`))
	for i, p := range split(w.Reply) {
		b, _ := json.Marshal(p)
		event(rw, "", chunk(`{"index":0,"delta":{"content":`+string(b)+`},"finish_reason":null}`))
		if i == 0 && w.MidStreamError {
			event(rw, "", `{"error":{"type":"server_error","message":"the model stopped"}}`)
			return
		}
	}
	event(rw, "", chunk(`{"index":0,"delta":{},"finish_reason":"stop"}`))
	event(rw, "", `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1764614400,"model":"gpt-test","choices":[],`+usage+`}`)
	event(rw, "", "[DONE]")
}

// streamAnthropic streams the reply as Anthropic's message events.
func (w *Server) streamAnthropic(rw http.ResponseWriter) {
	event(rw, "message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-test",`+
		`"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":130,"output_tokens":1}}}`)
	event(rw, "content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	for i, p := range split(w.Reply) {
		b, _ := json.Marshal(p)
		event(rw, "content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+string(b)+`}}`)
		if i == 0 && w.MidStreamError {
			event(rw, "error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
			return
		}
	}
	event(rw, "content_block_stop", `{"type":"content_block_stop","index":0}`)
	event(rw, "message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":9}}`)
	event(rw, "message_stop", `{"type":"message_stop"}`)
}

// event writes one server-sent event, named unless name is empty, and
// flushes it.
func event(rw http.ResponseWriter, name, data string) {
	if name != "" {
		fmt.Fprintf(rw, "event: %s\n", name)
	}
	fmt.Fprintf(rw, "data: %s\n\n", data)
	if f, ok := rw.(http.Flusher); ok {
		f.Flush()
	}
}

// split cuts s into three pieces at character boundaries, as a model's
// deltas come.
func split(s string) []string {
	r := []rune(s)
	a, b := len(r)/3, 2*len(r)/3
	return []string{string(r[:a]), string(r[a:b]), string(r[b:])}
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
