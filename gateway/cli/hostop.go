package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"distill.dev/gateway/app"
	"distill.dev/gateway/host"
)

// hostOpFlags are the host's own commands (approvals, operations): the
// operator's, never the model's, made against the store the calls use,
// the user's host state folder or, with --cluster, the cluster's.
type hostOpFlags struct {
	hf hostFlags
	sf serveFlags
}

func (f *hostOpFlags) register(cmd *cobra.Command, g *globals) {
	f.sf.register(cmd.Flags(), g.env)
	f.hf.register(cmd.Flags(), g.env)
}

// run opens the policy and the store and hands them to do, whose answer
// it prints as JSON.
func (f *hostOpFlags) run(cmd *cobra.Command, g *globals, do func(ctx context.Context, p *host.Policy, js jetstream.JetStream, opts host.BudgetsOption) (any, error)) error {
	if !f.hf.enabled() {
		return usagef("--policy is required: the host's records are made for the actors of its policy")
	}
	policies, err := f.hf.load(g.env)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	logger := g.logger()
	var sys *app.System
	if f.sf.cluster.enabled {
		var stop func()
		if sys, stop, err = f.sf.start(ctx, g, logger, "host"); err != nil {
			return err
		}
		defer stop()
	}
	js, storage, replicas, done, err := hostKeyValue(ctx, logger, sys, &f.sf, &f.hf)
	if err != nil {
		return err
	}
	defer done()
	out, err := do(ctx, policies.Current(), js, host.WithStorage(storage, replicas))
	if err != nil {
		return err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "%s\n", b)
	return nil
}

func knownActor(p *host.Policy, actor string) error {
	if _, ok := p.Actor(actor); !ok {
		return usagef("--actor %q: the policy names no such actor", actor)
	}
	return nil
}

func newHostApproveCmd(g *globals) *cobra.Command {
	f := &hostOpFlags{}
	var actor, run, method, selector, operation, page, session string
	var arguments []string
	var ttl time.Duration
	var allowUnsafe bool
	cmd := &cobra.Command{
		Use:   "approve <url>",
		Short: "Approve one action for an actor's run, as the host (act uses it once)",
		Long: "Approve one click, typing or scroll at a selector of this exact URL for the actor's run:\n" +
			"act (the MCP tool, or distill host act) performs it once with the approval's id, which\n" +
			"this prints with the approval as JSON. Without --cluster the approval goes in the user's\n" +
			"host state folder, where a distill mcp --policy over stdio on this machine finds it: name\n" +
			"the run it was started with (--run).",
		Example: "  distill host approve --policy policy.yaml --run agent-1 --method type --selector '#q' \\\n" +
			"    --arg text=widgets --arg key=Enter https://shop.example.org/",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			action := host.Action{Method: method, Selector: selector}
			for _, a := range arguments {
				k, v, ok := strings.Cut(a, "=")
				if !ok || k == "" {
					return usagef("--arg %q: want name=value", a)
				}
				if action.Arguments == nil {
					action.Arguments = map[string]string{}
				}
				action.Arguments[k] = v
			}
			if run == "" {
				return usagef("--run is required: an approval is for one run of the actor")
			}
			if err := host.CheckAction(action); err != nil {
				return usageError{err}
			}
			return f.run(cmd, g, func(ctx context.Context, p *host.Policy, js jetstream.JetStream, opts host.BudgetsOption) (any, error) {
				if err := knownActor(p, actor); err != nil {
					return nil, err
				}
				return host.NewApprovals(js, opts).Create(ctx, actor, run, args[0], action, ttl,
					host.Bindings{OperationID: operation, PageDigest: page, SessionID: session}, allowUnsafe)
			})
		},
	}
	f.register(cmd, g)
	cmd.Flags().StringVar(&actor, "actor", host.DefaultActor, "the actor whose act may use it")
	cmd.Flags().StringVar(&run, "run", "", "the run whose act may use it (a distill mcp's --run)")
	cmd.Flags().StringVar(&method, "method", "", "click, type or scroll")
	cmd.Flags().StringVar(&selector, "selector", "", "the CSS selector of the element")
	cmd.Flags().StringArrayVar(&arguments, "arg", nil, "an argument, name=value, repeated: text and key for type, direction and amount for scroll")
	cmd.Flags().DurationVar(&ttl, "ttl", 10*time.Minute, "how long the approval lasts (at most 24h)")
	cmd.Flags().BoolVar(&allowUnsafe, "allow-unsafe", false, "consent to the action sending requests other than GET (a form's POST); without it they are withheld")
	cmd.Flags().StringVar(&operation, "bind-operation", "", "only for this operation (one the host reserved)")
	cmd.Flags().StringVar(&page, "bind-page", "", "only while the page shows these candidates (an untruncated inspect's digest, without instruction)")
	cmd.Flags().StringVar(&session, "bind-session", "", "only in this client session (the MCP session)")
	return cmd
}

func newHostRevokeCmd(g *globals) *cobra.Command {
	f := &hostOpFlags{}
	cmd := &cobra.Command{
		Use:   "revoke <approval-id>",
		Short: "Withdraw an approval: act answers APPROVAL_STALE from then on",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.run(cmd, g, func(ctx context.Context, _ *host.Policy, js jetstream.JetStream, opts host.BudgetsOption) (any, error) {
				return host.NewApprovals(js, opts).Revoke(ctx, args[0])
			})
		},
	}
	f.register(cmd, g)
	return cmd
}

func newHostReserveCmd(g *globals) *cobra.Command {
	f := &hostOpFlags{}
	var actor, run string
	cmd := &cobra.Command{
		Use:   "reserve",
		Short: "Reserve an operation for an actor's run, which one call starts (operation_id)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if run == "" || len(run) > 128 {
				return usagef("--run is required, 1 to 128 bytes")
			}
			return f.run(cmd, g, func(ctx context.Context, p *host.Policy, js jetstream.JetStream, opts host.BudgetsOption) (any, error) {
				if err := knownActor(p, actor); err != nil {
					return nil, err
				}
				return host.NewOperations(js, opts).Reserve(ctx, actor, run)
			})
		},
	}
	f.register(cmd, g)
	cmd.Flags().StringVar(&actor, "actor", host.DefaultActor, "the actor whose call may start it")
	cmd.Flags().StringVar(&run, "run", "", "the run whose call may start it")
	return cmd
}

func newHostOperationCmd(g *globals) *cobra.Command {
	f := &hostOpFlags{}
	cmd := &cobra.Command{
		Use:   "operation <operation-id>",
		Short: "Print an operation's durable record, to review a call (after a crash, say)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.run(cmd, g, func(ctx context.Context, _ *host.Policy, js jetstream.JetStream, opts host.BudgetsOption) (any, error) {
				return host.NewOperations(js, opts).Get(ctx, args[0])
			})
		},
	}
	f.register(cmd, g)
	return cmd
}
