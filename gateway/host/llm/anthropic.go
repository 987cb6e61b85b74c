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
	// Streamed, so that an answer is cut off at maxAnswerBytes as it comes.
	stream := p.client.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	var msg anthropic.Message
	n := 0
	for stream.Next() {
		ev := stream.Current()
		if err := msg.Accumulate(ev); err != nil {
			return nil, fmt.Errorf("anthropic: %w", err)
		}
		if ev.Type == "content_block_delta" {
			if n += len(ev.Delta.Text); n > maxAnswerBytes {
				return nil, fmt.Errorf("anthropic: the answer is over %d bytes", maxAnswerBytes)
			}
		}
	}
	if err := stream.Err(); err != nil {
		return nil, fmt.Errorf("anthropic: %w", err)
	}
	if msg.ID == "" {
		return nil, errors.New("anthropic: the stream held no message")
	}
	var text strings.Builder
	for _, block := range msg.Content {
		if block.Type == "text" {
			text.WriteString(block.Text)
		}
	}
	if msg.StopReason == "refusal" {
		return nil, errors.New("anthropic: the model refused")
	}
	return &Answer{Text: text.String(), Model: string(msg.Model), InputTokens: msg.Usage.InputTokens, OutputTokens: msg.Usage.OutputTokens}, nil
}
