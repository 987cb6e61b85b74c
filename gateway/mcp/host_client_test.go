package mcp

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"distill.dev/gateway/host"
)

// distill mcp --policy through the official TypeScript client: only the
// host's tools, envelopes as their text, allow_local refused, a host off the
// list NOT_AUTHORIZED, and no provider configured refusing extraction.
func TestHostMCPWithTypeScriptClient(t *testing.T) {
	t.Parallel()
	needNode(t)
	site := pages(t)
	u, _ := url.Parse(site.URL)
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte(fmt.Sprintf(`
actors:
  default:
    allowed_hosts: [127.0.0.1]
    allowed_schemes: [http]
    allowed_ports: [%s]
    schemas:
      product: {type: object, properties: {name: {type: string}}, required: [name]}
`, u.Port())), 0o600); err != nil {
		t.Fatal(err)
	}
	r := runClient(t, clientConfig{
		Transport: "stdio", Command: distillBinary(t), Host: true, Pages: sitePages(site.URL),
		Args: []string{"--cache-dir", t.TempDir(), "mcp", "--allow-local", "--policy", policy, "--host-state", t.TempDir()},
	})
	var names []string
	for _, tool := range r.Tools {
		names = append(names, tool.Name)
		if slices.Contains(tool.Params, "allow_local") {
			t.Errorf("%s takes allow_local", tool.Name)
		}
		// act is the one the client must ask its user about.
		if act := tool.Name == "act"; tool.Destructive != act || tool.ReadOnly == act || (act && !strings.Contains(tool.Title, "approval")) {
			t.Errorf("%s: readOnly %v destructive %v title %q", tool.Name, tool.ReadOnly, tool.Destructive, tool.Title)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"act", "extract_product", "inspect", "summarize"}) {
		t.Fatalf("tools %v", names)
	}
	envelope := func(label string) (host.Envelope, bool) {
		o := r.Calls[label]
		if o.ProtocolError != "" || len(o.Texts) != 1 {
			t.Fatalf("%s: %+v", label, o)
		}
		var env host.Envelope
		if err := json.Unmarshal([]byte(o.Texts[0]), &env); err != nil {
			t.Fatalf("%s: not an envelope: %s", label, o.Texts[0])
		}
		return env, o.IsError
	}
	if env, isErr := envelope("inspect"); isErr || env.Status != host.StatusOK || env.Digest == "" {
		t.Errorf("inspect: %+v", env)
	}
	for label, code := range map[string]host.Code{
		"inspect_allow_local": host.InvalidInput,
		"inspect_off_list":    host.NotAuthorized,
		"extract":             host.UnsupportedSecurityCapability,
		"act_unapproved":      host.ApprovalRequired,
		"act_bad_method":      host.InvalidInput,
		"inspect_operation":   host.SessionUnknown,
	} {
		if env, isErr := envelope(label); !isErr || env.Error == nil || env.Error.Code != code {
			t.Errorf("%s: %+v, want %s", label, env, code)
		}
	}
	// approval_id is required: the SDK's schema check refuses the call.
	if o := r.Calls["act_no_approval"]; o.ProtocolError == "" && !o.IsError {
		t.Errorf("act without approval_id answered: %+v", o)
	}
	if o := r.Calls["fetch_url"]; o.ProtocolError == "" && !o.IsError {
		t.Errorf("fetch_url answered in host mode: %+v", o)
	}
}
