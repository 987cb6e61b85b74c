package host

import (
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
}

const seedPolicy = `
actors:
  default:                      # the CLI and stdio MCP run as "default"
    allowed_hosts: [docs.example.com, "*.example.org"]
    allowed_ports: [80, 443]
    budget: {max_seconds: 60, max_steps: 12, max_bytes: 262144, max_concurrent: 1}
    schemas:
      product: {type: object, properties: {name: {type: string}}, required: [name], additionalProperties: false}
  team-a:
    allowed_hosts: [shop.example.com]
    asset_origins: ["https://cdn.example.net"]
    act_refused_words: [Checkout]
    allowed_schemes: [https]
    verify_dns: false
    max_result_bytes: 1024
    budget: {max_steps: 3, max_cost_usd: 0.5}
tokens:
  - {token_env: TEAM_A_TOKEN, actor: team-a}
`

func TestParseSeedPolicy(t *testing.T) {
	p, err := Parse([]byte(seedPolicy), env(map[string]string{"TEAM_A_TOKEN": "team-a-secret-0123456789"}))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.Actors(), ","); got != "default,team-a" {
		t.Fatalf("actors %s", got)
	}
	d, _ := p.Actor("default")
	if !d.VerifyDNS || d.MaxResult != DefaultMaxResultBytes {
		t.Errorf("default's defaults: verify_dns %v, max_result_bytes %d", d.VerifyDNS, d.MaxResult)
	}
	want := Budget{MaxSeconds: 60, MaxSteps: 12, MaxBytes: 262144, MaxConcurrent: 1}
	if d.Budget.MaxSeconds != want.MaxSeconds || d.Budget.MaxSteps != want.MaxSteps || d.Budget.MaxBytes != want.MaxBytes || d.Budget.MaxConcurrent != want.MaxConcurrent || d.Budget.MaxCostUSD != nil {
		t.Errorf("default's budget %+v", d.Budget)
	}
	if _, ok := d.Schemas["product"]; !ok {
		t.Error("schema product missing")
	}
	a, _ := p.Actor("team-a")
	if cdn, _ := url.Parse("https://cdn.example.net/app.js"); a.Allowlist.CheckAsset(cdn) != nil || a.Allowlist.Check(cdn) == nil {
		t.Error("team-a's asset origin is not one for assets only")
	}
	if strings.Join(a.ActRefusedWords, ",") != "checkout" || strings.Join(d.ActRefusedWords, ",") != strings.Join(DefaultActRefusedWords(), ",") {
		t.Errorf("act_refused_words: team-a %v, default %v", a.ActRefusedWords, d.ActRefusedWords)
	}
	if a.VerifyDNS || a.MaxResult != 1024 || a.Budget.MaxSteps != 3 || a.Budget.MaxSeconds != DefaultMaxSeconds ||
		a.Budget.MaxBytes != DefaultMaxBytes || a.Budget.MaxConcurrent != DefaultMaxConcurrent || *a.Budget.MaxCostUSD != 0.5 {
		t.Errorf("team-a %+v budget %+v", a, a.Budget)
	}
	if got := p.Tokens(); len(got) != 1 || got[0] != "team-a-secret-0123456789" {
		t.Errorf("tokens %v", got)
	}
}

// Actors that take the default refused words each hold their own copy: one
// actor's list changed in place changes no other's, nor the default.
func TestDefaultActRefusedWordsAreNotShared(t *testing.T) {
	p, err := Parse([]byte(`{"actors": {"default": {"allowed_hosts": ["docs.example.com"]}, "team-b": {"allowed_hosts": ["shop.example.com"]}}}`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	d, _ := p.Actor("default")
	b, _ := p.Actor("team-b")
	want := DefaultActRefusedWords()
	d.ActRefusedWords[0] = "changed"
	if b.ActRefusedWords[0] != want[0] || DefaultActRefusedWords()[0] != want[0] {
		t.Errorf("one actor's change reached team-b %v or the default %v", b.ActRefusedWords, DefaultActRefusedWords())
	}
}

func TestParseJSONPolicy(t *testing.T) {
	p, err := Parse([]byte(`{"actors": {"default": {"allowed_hosts": ["docs.example.com"]}}}`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	d, _ := p.Actor("default")
	if d.Budget.MaxSteps != DefaultMaxSteps || d.Budget.MaxSeconds != DefaultMaxSeconds || d.Budget.MaxBytes != DefaultMaxBytes || d.Budget.MaxConcurrent != DefaultMaxConcurrent {
		t.Errorf("budget defaults %+v", d.Budget)
	}
}

func TestParseRefuses(t *testing.T) {
	vars := env(map[string]string{"SHORT": "abc", "GOOD": "good-token-0123456789"})
	tests := []struct {
		name, policy, want string
	}{
		{"not yaml", "actors: [", "not YAML or JSON"},
		{"unknown key", "actors: {default: {allowed_hosts: [a.example], allowed_host: [b.example]}}", `unknown field "allowed_host"`},
		{"no actors", "tokens: []", "actors: none"},
		{"no hosts", "actors: {default: {}}", "actors.default: allowed_hosts is empty"},
		{"bad host", "actors: {default: {allowed_hosts: ['https://a.example/']}}", `actors.default: allowed host "https://a.example/"`},
		{"bad scheme", "actors: {default: {allowed_hosts: [a.example], allowed_schemes: [ftp]}}", `allowed scheme "ftp"`},
		{"bad port", "actors: {default: {allowed_hosts: [a.example], allowed_ports: [0]}}", "allowed port 0"},
		{"port as text", "actors: {default: {allowed_hosts: [a.example], allowed_ports: [http]}}", "allowed_ports"},
		{"zero steps", "actors: {default: {allowed_hosts: [a.example], budget: {max_steps: 0}}}", "actors.default: budget.max_steps: 0, want a positive number"},
		{"negative cost", "actors: {default: {allowed_hosts: [a.example], budget: {max_cost_usd: -1}}}", "budget.max_cost_usd"},
		{"bad actor name", "actors: {'a b': {allowed_hosts: [a.example]}}", "an actor's name"},
		{"bad schema name", "actors: {default: {allowed_hosts: [a.example], schemas: {Product: {type: object}}}}", "schemas.Product: a schema's name"},
		{"schema not object", "actors: {default: {allowed_hosts: [a.example], schemas: {p: {type: string}}}}", "schemas.p: schema refused: the root must be an object schema"},
		{"schema ref", "actors: {default: {allowed_hosts: [a.example], schemas: {p: {type: object, properties: {a: {$ref: 'https://evil.example/s.json'}}}}}}", `uses "$ref"`},
		{"token env empty", "actors: {default: {allowed_hosts: [a.example]}}\ntokens: [{actor: default}]", "tokens[0]: token_env is empty"},
		{"token unset", "actors: {default: {allowed_hosts: [a.example]}}\ntokens: [{token_env: NOPE, actor: default}]", "tokens[0]: variable NOPE is not set"},
		{"token actor unknown", "actors: {default: {allowed_hosts: [a.example]}}\ntokens: [{token_env: GOOD, actor: ghost}]", `tokens[0]: actor "ghost" is not under actors`},
		{"token short", "actors: {default: {allowed_hosts: [a.example]}}\ntokens: [{token_env: SHORT, actor: default}]", "tokens: token of default: 3 characters"},
		{"bad asset origin", "actors: {default: {allowed_hosts: [a.example], asset_origins: [cdn.example]}}", `actors.default: asset_origins: asset origin "cdn.example"`},
		{"empty refused word", "actors: {default: {allowed_hosts: [a.example], act_refused_words: [' ']}}", "act_refused_words: an empty word"},
		{"hosts as defaults", "defaults: {allowed_hosts: [a.example]}\nactors: {default: {allowed_hosts: [a.example]}}", "defaults: allowed_hosts and schemas"},
		{"bad default", "defaults: {budget: {max_steps: 0}}\nactors: {default: {allowed_hosts: [a.example]}}", "actors.default: budget.max_steps: 0"},
		{"token twice", "actors: {default: {allowed_hosts: [a.example]}, b: {allowed_hosts: [a.example]}}\ntokens: [{token_env: GOOD, actor: default}, {token_env: GOOD, actor: b}]", "tokens[1]: the token in GOOD is already default's"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.policy), vars)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not say %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error is not one line: %q", err)
			}
		})
	}
}

func TestLoadNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	_, err := Load(filepath.Join(dir, "missing.yaml"), env(nil))
	if err == nil || !strings.HasPrefix(err.Error(), "policy "+filepath.Join(dir, "missing.yaml")+": ") {
		t.Fatalf("missing file: %v", err)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte(strings.Repeat("#", maxPolicyFileBytes+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(big, env(nil)); err == nil || !strings.Contains(err.Error(), "over") {
		t.Fatalf("big file: %v", err)
	}
}

func TestReloadOnHangup(t *testing.T) {
	path := filepath.Join(t.TempDir(), "policy.yaml")
	write := func(s string) {
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("actors: {default: {allowed_hosts: [a.example]}}")
	ps, err := OpenPolicies(path, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	ps.ReloadOnHangup(t.Context(), slog.New(slog.NewTextHandler(io.Discard, nil)))

	// A broken file keeps the policy in force.
	write("actors: {default: {}}")
	if err := ps.Reload(); err == nil {
		t.Fatal("a broken file reloaded")
	}
	if _, ok := ps.Current().Actor("default"); !ok {
		t.Fatal("the policy in force was lost")
	}

	write("actors: {default: {allowed_hosts: [a.example]}, team-b: {allowed_hosts: [b.example]}}")
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, ok := ps.Current().Actor("team-b"); ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("SIGHUP did not reload the policy")
		}
	}
}

// defaults fill what an actor leaves unset, and only that.
func TestPolicyDefaults(t *testing.T) {
	p, err := Parse([]byte(`
defaults:
  allowed_ports: [8443]
  max_result_bytes: 4096
  budget: {max_steps: 30, max_cost_usd: 2}
actors:
  a: {allowed_hosts: [a.example]}
  b: {allowed_hosts: [b.example], allowed_ports: [443], budget: {max_steps: 5}}
`), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := p.Actor("a")
	b, _ := p.Actor("b")
	if a.MaxResult != 4096 || a.Budget.MaxSteps != 30 || *a.Budget.MaxCostUSD != 2 || a.Budget.MaxSeconds != DefaultMaxSeconds {
		t.Errorf("a: max_result %d, budget %+v", a.MaxResult, a.Budget)
	}
	if b.MaxResult != 4096 || b.Budget.MaxSteps != 5 {
		t.Errorf("b: max_result %d, budget %+v", b.MaxResult, b.Budget)
	}
	on := func(ac *Actor, raw string) bool { u, _ := url.Parse(raw); return ac.Allowlist.Check(u) == nil }
	if !on(a, "https://a.example:8443/") || on(a, "https://a.example/") || !on(b, "https://b.example/") || on(b, "https://b.example:8443/") {
		t.Error("ports: the default went where an actor set its own, or not where it did not")
	}
}
