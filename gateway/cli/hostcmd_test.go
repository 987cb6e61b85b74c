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
	vars := map[string]string{"OPENAI_API_KEY": cfg.APIKey, "OPENAI_BASE_URL": cfg.BaseURL, "DISTILL_LLM_MODEL": cfg.Model,
		"DISTILL_HOST_STATE": t.TempDir()}
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
		"approve without a run":    {"host", "approve", "--policy", policy, "--method", "click", "--selector", "a", srv.URL},
		"approve a bad action":     {"host", "approve", "--policy", policy, "--run", "r", "--method", "hover", "--selector", "a", srv.URL},
		"approve an unknown actor": {"host", "approve", "--policy", policy, "--run", "r", "--actor", "nobody", "--method", "click", "--selector", "a", srv.URL},
		"reserve without a run":    {"host", "reserve", "--policy", policy},
		"no policy":                {"host", "inspect", srv.URL + "/article"},
		"bad arg":                  {"host", "act", "--policy", policy, "--arg", "novalue", srv.URL},
		"negative":                 {"host", "inspect", "--policy", policy, "--max-result-bytes", "-1", srv.URL},
		"no url":                   {"host", "inspect", "--policy", policy},
		"extra args":               {"host", "extract", "--policy", policy, "article"},
	} {
		if _, stderr, code := run(args...); code != ExitUsage || !strings.HasPrefix(stderr, "distill: ") {
			t.Errorf("%s: exit %d, stderr %q", name, code, stderr)
		}
	}
	if _, stderr, code := run("host", "inspect", "--policy", filepath.Join(t.TempDir(), "none.yaml"), srv.URL); code != ExitFailure || !strings.Contains(stderr, "none.yaml") {
		t.Errorf("a missing policy: exit %d, stderr %q", code, stderr)
	}
}

// The host's commands and the calls share the records of the user's host
// state folder, one process after another: an approval distill host
// approve made is revoked by distill host revoke and found so by act; an
// operation reserved is started once by a call and read back.
func TestHostOperatorCommands(t *testing.T) {
	srv := pages(t)
	u, _ := url.Parse(srv.URL)
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte(fmt.Sprintf(`
actors:
  default:
    allowed_hosts: [127.0.0.1]
    allowed_schemes: [http]
    allowed_ports: [%s]
`, u.Port())), 0o600); err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{"DISTILL_HOST_STATE": filepath.Join(t.TempDir(), "state")}
	run := func(v any, args ...string) int {
		t.Helper()
		var out, errOut bytes.Buffer
		env := envflag.New(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
		args = append([]string{"--cache-dir", t.TempDir()}, args...)
		code := Run(context.Background(), args, env, &out, &errOut)
		if code == ExitUsage || (code != ExitOK && out.Len() == 0) {
			t.Fatalf("%v: exit %d, %s", args, code, errOut.String())
		}
		if err := json.Unmarshal(out.Bytes(), v); err != nil {
			t.Fatalf("%v: stdout %q", args, out.String())
		}
		return code
	}
	var ap host.Approval
	run(&ap, "host", "approve", "--policy", policy, "--run", "run-1", "--method", "type", "--selector", "#q",
		"--arg", "text=crabs", "--arg", "key=Enter", "--ttl", "5m", srv.URL+"/article")
	if ap.ID == "" || ap.Actor != host.DefaultActor || ap.Run != "run-1" || ap.URL != srv.URL+"/article" || ap.Revoked {
		t.Fatalf("approval %+v", ap)
	}
	var revoked host.Approval
	run(&revoked, "host", "revoke", "--policy", policy, ap.ID)
	if revoked.ID != ap.ID || !revoked.Revoked {
		t.Fatalf("revoked %+v", revoked)
	}
	var env host.Envelope
	if code := run(&env, "host", "act", "--allow-local", "--policy", policy, "--run", "run-1", "--approval-id", ap.ID,
		"--method", "type", "--selector", "#q", "--arg", "text=crabs", "--arg", "key=Enter", srv.URL+"/article"); code != ExitFailure || env.Error == nil || env.Error.Code != host.ApprovalStale {
		t.Fatalf("act with the revoked approval: exit %d, %+v", code, env)
	}

	var op host.Operation
	run(&op, "host", "reserve", "--policy", policy, "--run", "run-1")
	if op.ID == "" || op.State != host.OpReserved {
		t.Fatalf("reserved %+v", op)
	}
	env = host.Envelope{}
	if code := run(&env, "host", "inspect", "--allow-local", "--policy", policy, "--run", "run-1", "--operation-id", op.ID, srv.URL+"/article"); code != ExitOK || env.OperationID != op.ID {
		t.Fatalf("inspect starting the operation: exit %d, %+v", code, env)
	}
	var rec host.Operation
	run(&rec, "host", "operation", "--policy", policy, op.ID)
	if rec.State != host.OpClosed || rec.Tool != "inspect" {
		t.Fatalf("the operation after the call %+v", rec)
	}
	env = host.Envelope{}
	if code := run(&env, "host", "inspect", "--allow-local", "--policy", policy, "--run", "run-1", "--operation-id", op.ID, srv.URL+"/article"); code != ExitFailure || env.Error == nil || env.Error.Code != host.SessionUnknown {
		t.Fatalf("the operation started again: exit %d, %+v", code, env)
	}
}
