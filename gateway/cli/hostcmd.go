package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"distill.dev/gateway/host"
)

// hostCallFlags are what a `distill host` call may choose: the model's
// arguments, asked here by the operator on the command line.
type hostCallFlags struct {
	hf          hostFlags
	sf          serveFlags
	instruction string
	maxBytes    int
	operation   string
}

func (f *hostCallFlags) register(cmd *cobra.Command, g *globals) {
	f.sf.register(cmd.Flags(), g.env)
	f.hf.register(cmd.Flags(), g.env)
	cmd.Flags().StringVar(&f.hf.run, "run", "", "the run the call belongs to, whose budget it spends (default: a run of its own)")
	cmd.Flags().IntVar(&f.maxBytes, "max-result-bytes", 0, "keep the returned data to at most this many bytes of canonical JSON; only tightens the policy's max_result_bytes")
	cmd.Flags().StringVar(&f.operation, "operation-id", "", "start this operation the host reserved for the run (never a retry)")
}

// call runs one host-mode call as the policy's "default" actor and prints
// its envelope; an envelope that carries no data exits 1.
func (f *hostCallFlags) call(cmd *cobra.Command, g *globals, do func(context.Context, *host.Engine, host.Who) *host.Envelope) error {
	if !f.hf.enabled() {
		return usagef("--policy is required: host mode runs under the host's policy file")
	}
	if f.maxBytes < 0 {
		return usagef("--max-result-bytes must be a positive integer")
	}
	if len(f.hf.run) > 128 {
		return usagef("--run is 1 to 128 bytes")
	}
	policies, err := f.hf.load(g.env)
	if err != nil {
		return err
	}
	if _, err := f.hf.defaultSchemas(policies); err != nil {
		return err
	}
	ctx := cmd.Context()
	logger := g.logger()
	sys, stop, err := f.sf.start(ctx, g, logger, "host")
	if err != nil {
		return err
	}
	defer stop()
	engine, done, err := hostEngine(ctx, logger, g.env, policies, sys, &f.sf, &f.hf)
	if err != nil {
		return err
	}
	defer done()
	who := host.Who{Actor: host.DefaultActor, Run: f.hf.run}
	if who.Run == "" {
		who.Run = "cli-" + randomID()
	}
	env := do(ctx, engine, who)
	b, err := env.JSON()
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "%s\n", b)
	if !env.OK() {
		return exitError{ExitFailure}
	}
	return nil
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (f *hostCallFlags) input(url string) host.Input {
	return host.Input{URL: url, Instruction: f.instruction, MaxBytes: f.maxBytes, OperationID: f.operation}
}

func newHostCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "host",
		Short: "Host mode from the command line: calls as the policy's \"default\" actor, approvals, operations",
		Long: "Make one host-mode call (see distill mcp --policy and distill serve --policy) under\n" +
			"the policy file, as its \"default\" actor, and print the result envelope as JSON.\n" +
			"The exit code is 0 when the envelope carries data (ok or truncated), 1 otherwise.\n" +
			"Or act as the host: approve an action (approve, revoke), reserve an operation, read\n" +
			"an operation's record.\n\n" +
			"Budgets, operations and approvals live in NATS key-value: with --cluster the cluster's,\n" +
			"shared by every gateway; otherwise in the user's host state folder (--host-state),\n" +
			"shared by every distill process of the user, a distill mcp over stdio included.\n" +
			"A run given with --run spends one budget across calls.",
	}
	cmd.AddCommand(newHostInspectCmd(g), newHostSummarizeCmd(g), newHostExtractCmd(g), newHostActCmd(g),
		newHostApproveCmd(g), newHostRevokeCmd(g), newHostReserveCmd(g), newHostOperationCmd(g))
	return cmd
}

func newHostInspectCmd(g *globals) *cobra.Command {
	f := &hostCallFlags{}
	cmd := &cobra.Command{
		Use:     "inspect <url>",
		Short:   "List a page's candidate interactions; nothing is dispatched",
		Example: "  distill host inspect --policy policy.yaml --instruction 'the search form' https://docs.example.com/",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.call(cmd, g, func(ctx context.Context, e *host.Engine, who host.Who) *host.Envelope {
				return e.Inspect(ctx, who, f.input(args[0]))
			})
		},
	}
	f.register(cmd, g)
	cmd.Flags().StringVar(&f.instruction, "instruction", "", "what you are looking for on the page, in a sentence")
	return cmd
}

func newHostSummarizeCmd(g *globals) *cobra.Command {
	f := &hostCallFlags{}
	var length string
	cmd := &cobra.Command{
		Use:   "summarize <url>",
		Short: "Summarize a page with the operator's LLM provider",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.call(cmd, g, func(ctx context.Context, e *host.Engine, who host.Who) *host.Envelope {
				in := f.input(args[0])
				in.Length = length
				return e.Summarize(ctx, who, in)
			})
		},
	}
	f.register(cmd, g)
	cmd.Flags().StringVar(&f.instruction, "instruction", "", "what the summary should focus on")
	cmd.Flags().StringVar(&length, "length", "medium", "short, medium or long")
	return cmd
}

func newHostExtractCmd(g *globals) *cobra.Command {
	f := &hostCallFlags{}
	cmd := &cobra.Command{
		Use:     "extract <schema> <url>",
		Short:   "Extract a page's data in the shape of one of the policy's schemas",
		Example: "  distill host extract --policy policy.yaml product https://shop.example.org/widget",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.call(cmd, g, func(ctx context.Context, e *host.Engine, who host.Who) *host.Envelope {
				return e.Extract(ctx, who, args[0], f.input(args[1]))
			})
		},
	}
	f.register(cmd, g)
	cmd.Flags().StringVar(&f.instruction, "instruction", "", "what to look for on the page")
	return cmd
}

func newHostActCmd(g *globals) *cobra.Command {
	f := &hostCallFlags{}
	var in host.ActInput
	var arguments []string
	cmd := &cobra.Command{
		Use:   "act <url>",
		Short: "Perform one action the host approved (HostService.CreateApproval)",
		Long: "Perform one click, typing or scroll on the page, only with an approval the host\n" +
			"created for the run, this exact URL and action (distill host approve, or\n" +
			"HostService.CreateApproval with --cluster); it is used once.",
		Example: "  distill host act --policy policy.yaml --cluster --nats nats://nats:4222 --run run-7 \\\n" +
			"    --approval-id 5f1c... --method type --selector '#q' --arg text=widgets --arg key=Enter https://shop.example.org/",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range arguments {
				k, v, ok := strings.Cut(a, "=")
				if !ok || k == "" {
					return usagef("--arg %q: want name=value", a)
				}
				if in.Arguments == nil {
					in.Arguments = map[string]string{}
				}
				in.Arguments[k] = v
			}
			return f.call(cmd, g, func(ctx context.Context, e *host.Engine, who host.Who) *host.Envelope {
				in.URL, in.MaxBytes, in.OperationID = args[0], f.maxBytes, f.operation
				return e.Act(ctx, who, in)
			})
		},
	}
	f.register(cmd, g)
	cmd.Flags().StringVar(&in.ApprovalID, "approval-id", "", "the host's approval of exactly this URL and action")
	cmd.Flags().StringVar(&in.Method, "method", "", "click, type or scroll")
	cmd.Flags().StringVar(&in.Selector, "selector", "", "the CSS selector of the element, as approved")
	cmd.Flags().StringVar(&in.Description, "description", "", "what the action is meant to do, in a sentence")
	cmd.Flags().StringArrayVar(&arguments, "arg", nil, "an argument, name=value, repeated: text and key for type, direction and amount for scroll")
	return cmd
}
