package mcp

import (
	"context"
	"encoding/json"
	"iter"
	"maps"
	"slices"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"distill.dev/gateway/host"
)

// frozen is one parameter of the public surface: its name, its default as
// JSON where the surface gives one ("" where it says "—"), and whether it
// is required.
type frozen struct {
	name     string
	def      string
	required bool
}

// frozenFetch are fetch_url's parameters; observe_url takes the same, and
// fetch_urls all but url and selector.
var frozenFetch = []frozen{
	{name: "url", required: true},
	{name: "format", def: `"markdown"`},
	{name: "selector"},
	{name: "profile", def: `"article"`},
	{name: "stats", def: "false"},
	{name: "diagnostics", def: "false"},
	{name: "max_output_tokens", def: "20000"},
	{name: "timeout_secs", def: "20"},
	{name: "max_bytes", def: "8388608"},
	{name: "no_cache", def: "false"},
	{name: "cache_ttl", def: "3600"},
	{name: "extract_links", def: "false"},
	{name: "extract_tables", def: "false"},
	{name: "links_full", def: "false"},
	{name: "js", def: `"auto"`},
	{name: "js_wait"},
	{name: "js_wait_for"},
	{name: "allow_local", def: "false"},
	{name: "max_retries", def: "2"},
	{name: "per_host_concurrency", def: "4"},
	{name: "rate_limit", def: "0"},
	{name: "respect_robots", def: "false"},
	{name: "extract_actions", def: "false"},
	{name: "max_actions"},
}

func frozenBatch() []frozen {
	out := []frozen{{name: "urls", required: true}, {name: "concurrency", def: "8"}}
	for _, p := range frozenFetch {
		if p.name != "url" && p.name != "selector" {
			out = append(out, p)
		}
	}
	return out
}

// The MCP surface frozen for 1.x, written from the public API reference:
// every tool and parameter, with the defaults it gives. A tool or parameter
// that goes missing or is renamed, a changed default, or a required
// parameter made optional fails here; additions are fine.
var frozenTools = map[string][]frozen{
	"fetch_url":   frozenFetch,
	"observe_url": frozenFetch,
	"fetch_urls":  frozenBatch(),
	"session_start": {
		{name: "url", required: true},
		{name: "profile"},
		{name: "max_actions"},
		{name: "timeout_secs"},
		{name: "allow_local"},
		{name: "respect_robots"},
		{name: "max_action_retries", def: "1"},
		{name: "js", def: `"auto"`},
		{name: "js_wait"},
	},
	"session_observe":     {{name: "session_id"}, {name: "url"}},
	"session_follow":      {{name: "session_id"}, {name: "action_id"}},
	"session_submit_form": {{name: "session_id"}, {name: "form_id"}, {name: "values"}, {name: "confirm"}},
	"session_close":       {{name: "session_id"}},
}

// addedTools are the tools added since the freeze, pinned as the frozen
// ones are so that they stay what clients were told. A tool in neither map
// fails the test: an addition is deliberate, not a side effect.
var addedTools = map[string][]frozen{
	"session_act": {{name: "session_id", required: true}, {name: "steps", required: true}, {name: "confirm", def: "false"}},
	"screenshot": {
		{name: "url", required: true},
		{name: "full_page", def: "false"},
		{name: "format", def: `"png"`},
		{name: "steps"},
		{name: "scroll"},
		{name: "block"},
		{name: "js_wait"},
		{name: "js_wait_for"},
		{name: "timeout_secs", def: "20"},
		{name: "allow_local", def: "false"},
	},
	"map": {
		{name: "url", required: true},
		{name: "path_prefix"},
		{name: "include_paths"},
		{name: "exclude_paths"},
		{name: "include_subdomains", def: "false"},
		{name: "ignore_robots", def: "false"},
		{name: "map_limit", def: "500"},
		{name: "query"},
		{name: "allow_local", def: "false"},
		{name: "timeout_secs", def: "20"},
	},
	"select": {
		{name: "url", required: true},
		{name: "select"},
		{name: "xpath"},
		{name: "fields"},
		{name: "find_text"},
		{name: "find_regex"},
		{name: "exact", def: "false"},
		{name: "case_sensitive", def: "false"},
		{name: "similar", def: "false"},
		{name: "tables", def: "false"},
		{name: "max_matches", def: "200"},
		{name: "js", def: `"auto"`},
		{name: "timeout_secs", def: "20"},
		{name: "allow_local", def: "false"},
	},
	"crawl": {
		{name: "url", required: true},
		{name: "query"},
		{name: "stop_when_answered", def: "false"},
		{name: "depth", def: "2"},
		{name: "max_pages", def: "10"},
		{name: "max_total_tokens", def: "20000"},
		{name: "max_output_tokens", def: "4000"},
		{name: "format", def: `"markdown"`},
		{name: "profile", def: `"article"`},
		{name: "path_prefix"},
		{name: "include_paths"},
		{name: "exclude_paths"},
		{name: "include_subdomains", def: "false"},
		{name: "ignore_robots", def: "false"},
		{name: "js", def: `"auto"`},
		{name: "allow_local", def: "false"},
		{name: "timeout_secs", def: "20"},
	},
	"diff": {
		{name: "url", required: true},
		{name: "diff_with", required: true},
		{name: "selector"},
		{name: "profile", def: `"article"`},
		{name: "js", def: `"auto"`},
		{name: "allow_local", def: "false"},
		{name: "timeout_secs", def: "20"},
		{name: "no_cache", def: "false"},
	},
	"brand": {
		{name: "url", required: true},
		{name: "js", def: `"auto"`},
		{name: "allow_local", def: "false"},
		{name: "timeout_secs", def: "20"},
	},
	// Host mode's tools (distill mcp --policy FILE), served instead of the
	// others; extract_product stands for one extract_<name> per schema the
	// actor's policy names. None takes allow_local.
	"inspect": {
		{name: "url", required: true},
		{name: "instruction"},
		{name: "max_bytes"},
		{name: "operation_id"},
	},
	"summarize": {
		{name: "url", required: true},
		{name: "instruction"},
		{name: "max_bytes"},
		{name: "operation_id"},
		{name: "length", def: `"medium"`},
	},
	"extract_product": {
		{name: "url", required: true},
		{name: "instruction"},
		{name: "max_bytes"},
		{name: "operation_id"},
	},
	"act": {
		{name: "url", required: true},
		{name: "approval_id", required: true},
		{name: "method", required: true},
		{name: "selector", required: true},
		{name: "description"},
		{name: "arguments"},
		{name: "max_bytes"},
		{name: "operation_id"},
	},
}

// hostTools are the tools only host mode serves.
var hostTools = []string{"inspect", "summarize", "extract_product", "act"}

// plainTools are the pinned tools distill mcp serves without a policy.
func plainTools() map[string][]frozen {
	plain := pinnedTools()
	for _, name := range hostTools {
		delete(plain, name)
	}
	return plain
}

// pinnedTools are the frozen tools and the added ones.
func pinnedTools() map[string][]frozen {
	pinned := maps.Clone(frozenTools)
	maps.Copy(pinned, addedTools)
	return pinned
}

// TestToolSchemaFrozen lists the tools as a client sees them, through a
// real MCP client session.
func TestToolSchemaFrozen(t *testing.T) {
	type schema struct {
		Type       string                     `json:"type"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	listed := map[string]schema{}
	hostListed := map[string]bool{}
	policy, err := host.Parse([]byte(`{"actors": {"default": {"allowed_hosts": ["docs.example.com"],
		"schemas": {"product": {"type": "object", "properties": {"name": {"type": "string"}}}}}}}`), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	plain, hostMode := connect(t, nil), connectTo(t, NewHost(quiet, nil, host.Fixed(policy), "", "test"))
	for tool, err := range chainTools(plain, hostMode, hostListed) {
		if err != nil {
			t.Fatal(err)
		}
		if tool.Description == "" {
			t.Errorf("%s has no description", tool.Name)
		}
		b, err := json.Marshal(tool.InputSchema)
		if err != nil {
			t.Fatal(err)
		}
		var s schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: input schema %s: %v", tool.Name, b, err)
		}
		listed[tool.Name] = s
	}

	for name := range hostListed {
		if !slices.Contains(hostTools, name) {
			t.Errorf("host mode serves %s, which is not a host tool: every tool there must be the host's", name)
		}
		if _, ok := listed[name].Properties["allow_local"]; ok {
			t.Errorf("host tool %s takes allow_local", name)
		}
	}
	for _, name := range hostTools {
		if !hostListed[name] {
			t.Errorf("host mode does not serve %s", name)
		}
	}
	pinned := pinnedTools()
	for name := range listed {
		if _, ok := pinned[name]; !ok {
			t.Errorf("tool %s is in neither frozenTools nor addedTools", name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(pinned)) {
		s, ok := listed[name]
		if !ok {
			t.Errorf("tool %s is gone", name)
			continue
		}
		if s.Type != "object" {
			t.Errorf("%s: input schema type %q, want object", name, s.Type)
		}
		for _, p := range pinned[name] {
			raw, ok := s.Properties[p.name]
			if !ok {
				t.Errorf("%s: parameter %s is gone", name, p.name)
				continue
			}
			var prop struct {
				Default     json.RawMessage `json:"default"`
				Description string          `json:"description"`
			}
			if err := json.Unmarshal(raw, &prop); err != nil {
				t.Fatalf("%s.%s: %v", name, p.name, err)
			}
			if p.def != "" && string(prop.Default) != p.def {
				t.Errorf("%s.%s defaults to %s, want %s", name, p.name, prop.Default, p.def)
			}
			if prop.Description == "" {
				t.Errorf("%s.%s has no description", name, p.name)
			}
			if p.required && !slices.Contains(s.Required, p.name) {
				t.Errorf("%s.%s is no longer required", name, p.name)
			}
		}
	}
}

// chainTools lists plain's tools, then hostMode's, noting the latter in
// host.
func chainTools(plain, hostMode *mcpsdk.ClientSession, host map[string]bool) iter.Seq2[*mcpsdk.Tool, error] {
	return func(yield func(*mcpsdk.Tool, error) bool) {
		for tool, err := range plain.Tools(context.Background(), nil) {
			if !yield(tool, err) {
				return
			}
		}
		for tool, err := range hostMode.Tools(context.Background(), nil) {
			if err == nil {
				host[tool.Name] = true
			}
			if !yield(tool, err) {
				return
			}
		}
	}
}
