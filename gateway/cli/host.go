package cli

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/pflag"

	"distill.dev/gateway/app"
	"distill.dev/gateway/host"
	"distill.dev/services/platform/envflag"
)

// hostFlags turn on host mode: a policy file decides what each actor may
// browse, and only host mode's tools are served.
type hostFlags struct {
	policy string
	// state is where host mode keeps its records without a cluster;
	// empty is defaultHostState.
	state string
	env   *envflag.Env
	// run is distill mcp's --run.
	run string
}

func (f *hostFlags) register(fs *pflag.FlagSet, env *envflag.Env) {
	fs.StringVar(&f.policy, "policy", env.String(envflag.Policy, ""), envflag.Usage(
		"host mode: serve only the host tools (inspect, summarize, extract_<schema>) under this policy file (YAML or JSON; reloaded on SIGHUP)", envflag.Policy))
	fs.StringVar(&f.state, "host-state", env.String(envflag.HostState, ""), envflag.Usage(
		"host mode without --cluster: the folder of its budgets, operations and approvals, shared by every distill process of the user (default: distill/host under $XDG_STATE_HOME or ~/.local/state)", envflag.HostState))
	f.env = env
}

// defaultHostState is distill/host under the user's state folder
// (XDG_STATE_HOME, or ~/.local/state): records, not a cache, kept until
// their time runs out.
func defaultHostState(env *envflag.Env) string {
	base := env.String(envflag.XDGStateHome, "")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "distill", "host")
}

func (f *hostFlags) enabled() bool { return f.policy != "" }

// load reads the policy, so that a bad file stops the command before
// anything starts.
func (f *hostFlags) load(env *envflag.Env) (*host.Policies, error) {
	ps, err := host.OpenPolicies(f.policy, func(name string) (string, bool) { return env.Lookup(envflag.Var(name)) })
	if err != nil {
		// The file's fault, not the command line's: no usage hint.
		return nil, err
	}
	return ps, nil
}

// hostEngine builds host mode over sys (host.Open): budgets, operations
// and approvals in the cluster's key-value store, or, in a single binary,
// in the user's host state folder (host.LocalStore), which every distill
// process of the user shares; the provider the environment names (none:
// extract and summarize are refused); reloads on SIGHUP until ctx ends.
// done lets the store go.
func hostEngine(ctx context.Context, logger *slog.Logger, env *envflag.Env, ps *host.Policies, sys *app.System, sf *serveFlags, hf *hostFlags) (engine *host.Engine, done func(), err error) {
	js, storage, replicas, done, err := hostKeyValue(ctx, logger, sys, sf, hf)
	if err != nil {
		return nil, nil, err
	}
	provider, err := host.ProviderFromEnv(logger, func(name string) (string, bool) { return env.Lookup(envflag.Var(name)) })
	if err != nil {
		done()
		return nil, nil, usageError{err}
	}
	return host.Open(ctx, logger, host.Config{
		Policies: ps, Pages: sys, KeyValue: js, Storage: storage, Replicas: replicas, Provider: provider, AllowLocal: sf.allowLocal,
	}), done, nil
}

// hostKeyValue is where host mode's records live: the cluster's key-value
// store (sys's), or the user's host state folder, which every distill
// process of the user shares (sys may then be nil). done lets it go.
func hostKeyValue(ctx context.Context, logger *slog.Logger, sys *app.System, sf *serveFlags, hf *hostFlags) (js jetstream.JetStream, storage jetstream.StorageType, replicas int, done func(), err error) {
	if sf.cluster.enabled {
		if js, storage, replicas, err = sys.KeyValue(); err != nil {
			return nil, 0, 0, nil, fmt.Errorf("host mode needs NATS key-value for its budgets: %w", err)
		}
		return js, storage, replicas, func() {}, nil
	}
	dir := hf.state
	if dir == "" {
		dir = defaultHostState(hf.env)
	}
	if dir == "" {
		return nil, 0, 0, nil, usagef("host mode keeps its records in a folder: pass --host-state (there is no home folder to put it in)")
	}
	cfg := host.LocalConfig{Dir: dir, OnListen: func(a net.Addr) { sf.own.Add(a, "host state NATS port") }}
	if sys != nil {
		// One embedded NATS in the process: the store's, when it serves
		// it, is the one the job queue runs on.
		cfg.Server = sys.Embedded()
	}
	store, err := host.OpenLocal(ctx, logger, cfg)
	if err != nil {
		return nil, 0, 0, nil, err
	}
	js, storage, replicas = store.JetStream()
	return js, storage, replicas, store.Close, nil
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
