package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"distill.dev/gateway/host"
	"distill.dev/gateway/host/llm"
	"distill.dev/gateway/host/llm/llmtest"
	"distill.dev/services/platform/envflag"
)

// distill host: one call as the policy's "default" actor, its envelope on
// stdout and the exit code saying whether it carries data.
func TestHostCommands(t *testing.T) {
	srv := pages(t)
	u, _ := url.Parse(srv.URL)
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte(fmt.Sprintf(`
actors:
  default:
    allowed_hosts: [127.0.0.1]
    allowed_schemes: [http]
    allowed_ports: [%s]
    schemas:
      article: {type: object, properties: {title: {type: string}}, required: [title], additionalProperties: false}
`, u.Port())), 0o600); err != nil {
		t.Fatal(err)
	}
	wire, cfg := llmtest.Start(t, llm.OpenAI)
	vars := map[string]string{"OPENAI_API_KEY": cfg.APIKey, "OPENAI_BASE_URL": cfg.BaseURL, "DISTILL_LLM_MODEL": cfg.Model}
	run := func(args ...string) (host.Envelope, string, int) {
		t.Helper()
		var out, errOut bytes.Buffer
		env := envflag.New(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
		args = append([]string{"--cache-dir", t.TempDir()}, args...)
		code := Run(context.Background(), args, env, &out, &errOut)
		var e host.Envelope
		if out.Len() > 0 {
			if err := json.Unmarshal(out.Bytes(), &e); err != nil {
				t.Fatalf("%v: stdout is not an envelope: %q", args, out.String())
			}
		}
		return e, errOut.String(), code
	}

	env, stderr, code := run("host", "inspect", "--allow-local", "--policy", policy, "--instruction", "crab notes", srv.URL+"/article")
	if code != ExitOK || env.Status != host.StatusOK || env.Digest == "" {
		t.Fatalf("inspect: exit %d, %+v, %s", code, env, stderr)
	}
	env, _, code = run("host", "inspect", "--allow-local", "--policy", policy, "--max-result-bytes", "10", srv.URL+"/article")
	if code != ExitOK || env.Status != host.StatusTruncated || !env.Truncated {
		t.Fatalf("inspect with a tiny limit: exit %d, %+v", code, env)
	}
	env, _, code = run("host", "inspect", "--allow-local", "--policy", policy, "https://example.com/")
	if code != ExitFailure || env.Error == nil || env.Error.Code != host.NotAuthorized {
		t.Fatalf("a host off the list: exit %d, %+v", code, env)
	}

	wire.Set(`{"title":"Field Notes on Tidepools"}`, "", 0)
	env, stderr, code = run("host", "extract", "--allow-local", "--policy", policy, "article", srv.URL+"/article")
	if code != ExitOK || env.Data.(map[string]any)["title"] != "Field Notes on Tidepools" {
		t.Fatalf("extract: exit %d, %+v, %s", code, env, stderr)
	}
	wire.Set(`{"headline":"x"}`, "", 0)
	if env, _, code = run("host", "extract", "--allow-local", "--policy", policy, "article", srv.URL+"/article"); code != ExitFailure || env.Error.Code != host.ProviderError {
		t.Fatalf("extract failing the schema: exit %d, %+v", code, env)
	}
	wire.Set("Notes from a morning among the tidepools.", "", 0)
	if env, _, code = run("host", "summarize", "--allow-local", "--policy", policy, "--length", "short", srv.URL+"/article"); code != ExitOK || env.Data != "Notes from a morning among the tidepools." {
		t.Fatalf("summarize: exit %d, %+v", code, env)
	}
	if env, _, code = run("host", "act", "--allow-local", "--policy", policy, "--approval-id", "none", "--method", "click", "--selector", "a", srv.URL+"/article"); code != ExitFailure || env.Error.Code != host.ApprovalRequired {
		t.Fatalf("act without an approval: exit %d, %+v", code, env)
	}

	for name, args := range map[string][]string{
		"no policy":  {"host", "inspect", srv.URL + "/article"},
		"bad arg":    {"host", "act", "--policy", policy, "--arg", "novalue", srv.URL},
		"negative":   {"host", "inspect", "--policy", policy, "--max-result-bytes", "-1", srv.URL},
		"no url":     {"host", "inspect", "--policy", policy},
		"extra args": {"host", "extract", "--policy", policy, "article"},
	} {
		if _, stderr, code := run(args...); code != ExitUsage || !strings.HasPrefix(stderr, "distill: ") {
			t.Errorf("%s: exit %d, stderr %q", name, code, stderr)
		}
	}
	if _, stderr, code := run("host", "inspect", "--policy", filepath.Join(t.TempDir(), "none.yaml"), srv.URL); code != ExitFailure || !strings.Contains(stderr, "none.yaml") {
		t.Errorf("a missing policy: exit %d, stderr %q", code, stderr)
	}
}
