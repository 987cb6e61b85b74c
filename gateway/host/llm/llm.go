// Package llm asks a language model for host mode's extractions and
// summaries, through the providers' official SDKs: OpenAI and every
// server that speaks its chat completions (Ollama among them), and
// Anthropic. Which one, with which key and model, is the operator's choice
// (Config, read from the environment by the mains); the model's answer is
// data to validate, never an instruction.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Kinds of provider.
const (
	OpenAI    = "openai"
	Anthropic = "anthropic"
	Ollama    = "ollama"
)

// Default models, when the operator names none.
const (
	DefaultOpenAIModel    = "gpt-4o-mini"
	DefaultAnthropicModel = "claude-sonnet-4-5"
	DefaultOllamaModel    = "llama3.2"
)

// DefaultMaxTokens bounds an answer.
const DefaultMaxTokens = 2048

// maxAnswerBytes cuts off an answer that streams on past what any answer
// of DefaultMaxTokens holds: a misbehaving server is not read forever.
const maxAnswerBytes = 1 << 20

// Config chooses a provider.
type Config struct {
	Kind    string // OpenAI, Anthropic or Ollama
	APIKey  string
	BaseURL string // empty: the provider's own
	Model   string // empty: the kind's default
}

// Request is one question.
type Request struct {
	System string
	User   string
	// Schema, when set, asks for JSON in the provider's JSON-schema mode;
	// SchemaName names it (letters, digits, '_').
	Schema     json.RawMessage
	SchemaName string
	MaxTokens  int
}

// Answer is the model's reply and what it cost, when the provider said.
type Answer struct {
	Text         string
	Model        string
	InputTokens  int64
	OutputTokens int64
	// CostUSD is the call's cost when the provider reported one.
	CostUSD *float64
}

// Provider asks a model. Errors are the provider's: the caller maps them to
// PROVIDER_ERROR.
type Provider interface {
	Complete(ctx context.Context, req Request) (*Answer, error)
	// Name is the provider's kind and model, for logs and usage reports.
	Name() string
}

// ErrNoProvider says the operator configured none.
var ErrNoProvider = errors.New("no LLM provider configured: set ANTHROPIC_API_KEY, OPENAI_API_KEY (or OPENAI_BASE_URL) or OLLAMA_HOST")

// FromEnv reads the operator's choice: DISTILL_LLM_PROVIDER when set,
// otherwise the first of ANTHROPIC_API_KEY, OPENAI_API_KEY or
// OPENAI_BASE_URL, OLLAMA_HOST that is set; DISTILL_LLM_MODEL names the
// model. lookup is os.LookupEnv in the mains.
func FromEnv(lookup func(string) (string, bool)) (Config, error) {
	get := func(k string) string { v, _ := lookup(k); return strings.TrimSpace(v) }
	kind := strings.ToLower(get("DISTILL_LLM_PROVIDER"))
	if kind == "" {
		switch {
		case get("ANTHROPIC_API_KEY") != "":
			kind = Anthropic
		case get("OPENAI_API_KEY") != "" || get("OPENAI_BASE_URL") != "":
			kind = OpenAI
		case get("OLLAMA_HOST") != "":
			kind = Ollama
		default:
			return Config{}, ErrNoProvider
		}
	}
	c := Config{Kind: kind, Model: get("DISTILL_LLM_MODEL")}
	switch kind {
	case Anthropic:
		c.APIKey, c.BaseURL = get("ANTHROPIC_API_KEY"), get("ANTHROPIC_BASE_URL")
		if c.APIKey == "" {
			return Config{}, errors.New("DISTILL_LLM_PROVIDER=anthropic needs ANTHROPIC_API_KEY")
		}
	case OpenAI:
		c.APIKey, c.BaseURL = get("OPENAI_API_KEY"), get("OPENAI_BASE_URL")
	case Ollama:
		host := get("OLLAMA_HOST")
		if host == "" {
			host = "127.0.0.1:11434"
		}
		if !strings.Contains(host, "://") {
			host = "http://" + host
		}
		c.BaseURL = strings.TrimRight(host, "/") + "/v1"
	default:
		return Config{}, fmt.Errorf("DISTILL_LLM_PROVIDER=%s: want openai, anthropic or ollama", kind)
	}
	return c, nil
}

// New returns the provider c names.
func New(c Config) (Provider, error) {
	switch c.Kind {
	case OpenAI:
		return newOpenAI(c, DefaultOpenAIModel), nil
	case Ollama:
		// Ollama speaks OpenAI's chat completions and wants a key of some
		// kind in the header, any will do.
		if c.APIKey == "" {
			c.APIKey = "ollama"
		}
		return newOpenAI(c, DefaultOllamaModel), nil
	case Anthropic:
		return newAnthropic(c), nil
	}
	return nil, fmt.Errorf("LLM provider %q: want openai, anthropic or ollama", c.Kind)
}
