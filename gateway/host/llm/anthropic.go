package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
)

type anthropicProvider struct {
	client anthropic.Client
	model  string
}

func newAnthropic(c Config) *anthropicProvider {
	opts := []option.RequestOption{
		// Only what the operator configured: no ambient credentials.
		option.WithoutEnvironmentDefaults(),
		option.WithMaxRetries(0),
		option.WithAPIKey(c.APIKey),
	}
	if c.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(c.BaseURL))
	}
	model := c.Model
	if model == "" {
		model = DefaultAnthropicModel
	}
	return &anthropicProvider{client: anthropic.NewClient(opts...), model: model}
}

func (p *anthropicProvider) Name() string { return "anthropic:" + p.model }

func (p *anthropicProvider) Complete(ctx context.Context, req Request) (*Answer, error) {
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model(p.model),
		MaxTokens: int64(maxTokens(req)),
		System:    []anthropic.TextBlockParam{{Text: req.System}},
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(req.User))},
	}
	if req.Schema != nil {
		var schema map[string]any
		if err := json.Unmarshal(req.Schema, &schema); err != nil {
			return nil, fmt.Errorf("schema: %w", err)
		}
		params.OutputConfig = anthropic.OutputConfigParam{Format: anthropic.JSONOutputFormatParam{Schema: schema}}
	}
	res, err := p.client.Messages.New(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	var text strings.Builder
	for _, block := range res.Content {
		if block.Type == "text" {
			text.WriteString(block.Text)
		}
	}
	if res.StopReason == "refusal" {
		return nil, errors.New("anthropic: the model refused")
	}
	return &Answer{Text: text.String(), Model: string(res.Model), InputTokens: res.Usage.InputTokens, OutputTokens: res.Usage.OutputTokens}, nil
}
