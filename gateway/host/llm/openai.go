package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/respjson"
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
	// Streamed, so that an answer is cut off at maxAnswerBytes as it comes
	// rather than read whole, and usage comes in the last chunk.
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := p.client.Chat.Completions.NewStreaming(ctx, params)
	defer stream.Close()
	var text, refusal strings.Builder
	a := &Answer{}
	choices := 0
	for stream.Next() {
		chunk := stream.Current()
		if chunk.Model != "" {
			a.Model = chunk.Model
		}
		if len(chunk.Choices) > 0 {
			choices++
			text.WriteString(chunk.Choices[0].Delta.Content)
			refusal.WriteString(chunk.Choices[0].Delta.Refusal)
			if text.Len()+refusal.Len() > maxAnswerBytes {
				return nil, fmt.Errorf("openai: the answer is over %d bytes", maxAnswerBytes)
			}
		}
		if u := chunk.Usage; u.PromptTokens+u.CompletionTokens > 0 {
			a.InputTokens, a.OutputTokens = u.PromptTokens, u.CompletionTokens
			a.CostUSD = extraCost(u.JSON.ExtraFields)
		}
	}
	if err := stream.Err(); err != nil {
		return nil, fmt.Errorf("openai: %w", err)
	}
	if choices == 0 {
		return nil, errors.New("openai: the answer has no choices")
	}
	if refusal.Len() > 0 {
		return nil, fmt.Errorf("openai: the model refused: %s", refusal.String())
	}
	a.Text = text.String()
	return a, nil
}

// extraCost is the cost some OpenAI-compatible servers (OpenRouter, say)
// add to the usage they report, in US dollars; nil when there is none.
func extraCost(extra map[string]respjson.Field) *float64 {
	// An extra field has no type for the SDK to check it against: its raw
	// JSON is read here.
	f, ok := extra["cost"]
	if !ok {
		return nil
	}
	var v float64
	if err := json.Unmarshal([]byte(f.Raw()), &v); err != nil || v < 0 {
		return nil
	}
	return &v
}

func maxTokens(req Request) int {
	if req.MaxTokens > 0 {
		return req.MaxTokens
	}
	return DefaultMaxTokens
}
