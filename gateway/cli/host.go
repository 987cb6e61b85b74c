package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"

	"github.com/spf13/pflag"

	"distill.dev/gateway/app"
	"distill.dev/gateway/host"
	"distill.dev/gateway/host/llm"
	"distill.dev/services/platform/envflag"
)

// hostFlags turn on host mode: a policy file decides what each actor may
// browse, and only host mode's tools are served.
type hostFlags struct {
	policy string
	// run is distill mcp's --run.
	run string
}

func (f *hostFlags) register(fs *pflag.FlagSet, env *envflag.Env) {
	fs.StringVar(&f.policy, "policy", env.String(envflag.Policy, ""), envflag.Usage(
		"host mode: serve only the host tools (inspect, summarize, extract_<schema>) under this policy file (YAML or JSON; reloaded on SIGHUP)", envflag.Policy))
}

func (f *hostFlags) enabled() bool { return f.policy != "" }

// load reads the policy, so that a bad file stops the command before
// anything starts.
func (f *hostFlags) load(env *envflag.Env) (*host.Policies, error) {
	ps, err := host.Open(f.policy, func(name string) (string, bool) { return env.Lookup(envflag.Var(name)) })
	if err != nil {
		// The file's fault, not the command line's: no usage hint.
		return nil, err
	}
	return ps, nil
}

// engine builds host mode over sys: budgets in its key-value store, the
// provider the environment names (none: extract and summarize are
// refused), reloads on SIGHUP until ctx ends.
func hostEngine(ctx context.Context, logger *slog.Logger, env *envflag.Env, ps *host.Policies, sys *app.System, allowLocal bool) (*host.Engine, error) {
	js, storage, replicas, err := sys.KeyValue()
	if err != nil {
		return nil, fmt.Errorf("host mode needs NATS key-value for its budgets: %w", err)
	}
	var provider llm.Provider
	cfg, err := llm.FromEnv(func(name string) (string, bool) { return env.Lookup(envflag.Var(name)) })
	switch {
	case errors.Is(err, llm.ErrNoProvider):
		logger.Warn("host mode has no LLM provider: extract and summarize are refused", "hint", err.Error())
	case err != nil:
		return nil, usageError{err}
	default:
		if provider, err = llm.New(cfg); err != nil {
			return nil, usageError{err}
		}
		logger.Info("host mode LLM provider", "provider", provider.Name())
	}
	ps.ReloadOnHangup(ctx, logger)
	budgets := host.NewBudgets(js, host.WithStorage(storage, replicas))
	ops := host.NewOperations(js, host.WithStorage(storage, replicas))
	approvals := host.NewApprovals(js, host.WithStorage(storage, replicas))
	return host.NewEngine(logger, ps, budgets, sys, host.EngineConfig{Provider: provider, AllowLocal: allowLocal, Operations: ops, Approvals: approvals}), nil
}

// defaultSchemas are the schema names of the actor the CLI and stdio MCP
// run as, which must be in the policy.
func (f *hostFlags) defaultSchemas(ps *host.Policies) ([]string, error) {
	a, ok := ps.Current().Actor(host.DefaultActor)
	if !ok {
		return nil, fmt.Errorf("policy %s: distill mcp runs as the actor %q, which the policy does not name", f.policy, host.DefaultActor)
	}
	return slices.Sorted(maps.Keys(a.Schemas)), nil
}
