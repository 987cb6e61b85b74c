package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

type openAI struct {
	client openai.Client
	model  string
}

func newOpenAI(c Config, defaultModel string) *openAI {
	opts := []option.RequestOption{
		// The budget bounds the time; a retry would spend it twice.
		option.WithMaxRetries(0),
		option.WithAPIKey(c.APIKey),
	}
	if c.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(c.BaseURL))
	}
	model := c.Model
	if model == "" {
		model = defaultModel
	}
	return &openAI{client: openai.NewClient(opts...), model: model}
}

func (p *openAI) Name() string { return "openai:" + p.model }

func (p *openAI) Complete(ctx context.Context, req Request) (*Answer, error) {
	params := openai.ChatCompletionNewParams{
		Model: shared.ChatModel(p.model),
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage(req.System),
			openai.UserMessage(req.User),
		},
		MaxCompletionTokens: openai.Int(int64(maxTokens(req))),
	}
	if req.Schema != nil {
		var schema map[string]any
		if err := json.Unmarshal(req.Schema, &schema); err != nil {
			return nil, fmt.Errorf("schema: %w", err)
		}
		params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
					Name: req.SchemaName, Schema: schema, Strict: openai.Bool(true),
				},
			},
		}
	}
	res, err := p.client.Chat.Completions.New(ctx, params)
	if err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	if len(res.Choices) == 0 {
		return nil, errors.New("openai: the answer has no choices")
	}
	msg := res.Choices[0].Message
	if msg.Refusal != "" {
		return nil, fmt.Errorf("openai: the model refused: %s", msg.Refusal)
	}
	return &Answer{Text: msg.Content, Model: res.Model, InputTokens: res.Usage.PromptTokens, OutputTokens: res.Usage.CompletionTokens}, nil
}

func maxTokens(req Request) int {
	if req.MaxTokens > 0 {
		return req.MaxTokens
	}
	return DefaultMaxTokens
}
