package mcp

import (
	"context"
	"encoding/json"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"distill.dev/services/extractor/tokens"
)

// maxToolListTokens bounds what the tool list costs a model before it has
// called anything: every tool's name, description and input schema, as a
// client lists them, counted with distill's tokenizer (o200k).
const maxToolListTokens = 9000

// TestToolListIsCompact measures the tool list as a client receives it.
func TestToolListIsCompact(t *testing.T) {
	cs := connect(t, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	size := func(tools []*mcpsdk.Tool) int64 {
		b, err := json.Marshal(tools)
		if err != nil {
			t.Fatal(err)
		}
		return tokens.Count(string(b))
	}
	all := size(res.Tools)
	for _, tool := range res.Tools {
		t.Logf("%-20s %5d tokens", tool.Name, size([]*mcpsdk.Tool{tool}))
	}
	t.Logf("the whole list: %d tools, %d tokens", len(res.Tools), all)
	if all > maxToolListTokens {
		t.Errorf("the tool list costs %d tokens, over the %d allowed: shorten descriptions, or share parameters", all, maxToolListTokens)
	}
}
