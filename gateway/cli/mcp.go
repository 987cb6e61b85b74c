package cli

import (
	"context"
	"fmt"
	"io"
	"net/netip"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"distill.dev/gateway/doors"
	"distill.dev/gateway/host"
	"distill.dev/gateway/mcp"
	"distill.dev/services/platform/envflag"
	"distill.dev/services/platform/version"
)

// mcpLong is mcp's help.
const mcpLong = "Serve the Model Context Protocol: the fetch_url, observe_url and fetch_urls tools and\n" +
	"the session_* browsing tools.\n\n" +
	"The server speaks MCP on stdin and stdout, for a client that starts it. With --http it\n" +
	"serves streamable HTTP at " + mcp.Path + " instead, and every request must carry\n" +
	"'Authorization: Bearer <token>' with the token in " + string(envflag.MCPToken) + "; --no-auth serves\n" +
	"without one, on loopback only unless --" + unauthRemoteFlag + " says\n" +
	"otherwise. --http takes several addresses, comma-separated or repeated; a request whose\n" +
	"Host names none of them (or, on loopback or every address, this machine) is refused.\n\n" +
	"Every service runs in this process unless --cluster points to them over the network,\n" +
	"as for `distill serve --cluster`. Stops gracefully on SIGINT or SIGTERM.\n\n" +
	"With --policy FILE it is in host mode: it serves only inspect, summarize, act and one\n" +
	"extract_<schema> tool per schema of the actor it runs as, each answering a result\n" +
	"envelope. Over stdio that actor is the policy's \"default\"; over HTTP it is the actor\n" +
	"the request's token names: a token of the policy (its tokens section), or\n" +
	string(envflag.MCPToken) + " for \"default\" (with policy tokens, " + string(envflag.MCPToken) + " may be unset:\n" +
	"then only they are served). A SIGHUP reloads the policy, and the extract tools follow it\n" +
	"in connected clients (tools/list_changed). extract and summarize use the LLM provider\n" +
	"the environment names (" + string(envflag.LLMProvider) + ", or " + string(envflag.AnthropicAPIKey) + ", " + string(envflag.OpenAIAPIKey) + ", " + string(envflag.OllamaHost) + ").\n" +
	"act runs only with an approval the host created for the run --run names: with\n" +
	"distill host approve, which without --cluster shares this process's records through the\n" +
	"user's host state folder (--host-state), or HostService.CreateApproval on a distill\n" +
	"serve --policy sharing this one's NATS (--cluster)."

// mcpExample is mcp's examples.
const mcpExample = "  distill mcp\n" +
	"  " + string(envflag.MCPToken) + "=$(openssl rand -hex 32) distill mcp --http 127.0.0.1:7001"

// mcpCmd is one `distill mcp`: the flags cobra fills; run does the work.
type mcpCmd struct {
	httpAddrs            []string
	noAuth, unauthRemote bool
	sf                   serveFlags
	hf                   hostFlags

	g     *globals
	stdin io.Reader
}

func newMCPCmd(g *globals) *cobra.Command {
	c := &mcpCmd{g: g}
	cmd := &cobra.Command{
		Use:     "mcp",
		Short:   "Serve distill's tools to MCP clients, over stdio or streamable HTTP",
		Long:    mcpLong,
		Example: mcpExample,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c.stdin = cmd.InOrStdin()
			return c.run(cmd.Context())
		},
	}
	c.register(cmd.Flags())
	return cmd
}

// register declares mcp's flags: its transport and auth, the services and
// host mode it shares with serve, then host mode's run.
func (c *mcpCmd) register(fs *pflag.FlagSet) {
	fs.StringSliceVar(&c.httpAddrs, "http", nil, "serve streamable HTTP on these addresses, host:port (comma-separated or repeated), instead of stdio")
	fs.BoolVar(&c.noAuth, "no-auth", false, "with --http, serve without a bearer token (loopback addresses only, unless --"+unauthRemoteFlag+")")
	fs.BoolVar(&c.unauthRemote, unauthRemoteFlag, false, "with --http --no-auth, serve without a token on addresses other machines can reach: anyone who reaches them uses distill")
	c.sf.register(fs, c.g.env)
	c.hf.register(fs, c.g.env)
	fs.StringVar(&c.hf.run, "run", "", "host mode: the run every call belongs to, for approvals and operations the host makes for it (default: one run per MCP session)")
}

// mcpAuth is what the flags and the environment say about who may call.
type mcpAuth struct {
	token    string
	policies *host.Policies
	// policyTokensOnly: in host mode over HTTP the policy's tokens are
	// enough; each runs as its actor, and "default" is reached only with
	// the operator's token or --no-auth.
	policyTokensOnly bool
}

// check refuses the flags that contradict each other and loads the policy.
func (c *mcpCmd) check() (a mcpAuth, err error) {
	g := c.g
	a.token, _ = g.env.Lookup(envflag.MCPToken)
	serveHTTP := len(c.httpAddrs) > 0
	if c.hf.run != "" && (!c.hf.enabled() || len(c.hf.run) > 128) {
		return a, usagef("--run names a host mode run (with --policy) of 1 to 128 bytes")
	}
	if c.hf.enabled() {
		if a.policies, err = c.hf.load(g.env); err != nil {
			return a, err
		}
	}
	a.policyTokensOnly = serveHTTP && !c.noAuth && a.token == "" && a.policies != nil && len(a.policies.Current().Tokens()) > 0
	switch {
	case c.noAuth && !serveHTTP:
		return a, usagef("--no-auth applies to --http only")
	case c.unauthRemote && !c.noAuth:
		return a, usagef("--%s applies to --http --no-auth only", unauthRemoteFlag)
	case c.noAuth:
		a.token = ""
	case serveHTTP && a.token == "" && !a.policyTokensOnly:
		return a, fmt.Errorf("mcp --http needs a bearer token: set %s, or pass --no-auth to serve without authentication", string(envflag.MCPToken))
	case !serveHTTP && g.env.String(envflag.OTelTracesExporter, "") == "console":
		// The console exporter writes to stdout, which carries the
		// protocol.
		return a, usagef("OTEL_TRACES_EXPORTER=console would write spans into the MCP stream on stdout: use otlp or none with stdio")
	}
	if a.policies != nil && !a.policyTokensOnly {
		if _, err := c.hf.defaultSchemas(a.policies); err != nil {
			return a, err
		}
	}
	return a, nil
}

// run opens the listeners, starts distill and host mode, and serves them
// through doors.Serve. What the command line gets wrong, and an address
// refused or taken, stop it before distill starts.
func (c *mcpCmd) run(ctx context.Context) error {
	a, err := c.check()
	if err != nil {
		return err
	}
	var listeners []mcp.Listener
	if len(c.httpAddrs) > 0 {
		if listeners, err = listenMCP(&c.sf, c.httpAddrs, c.noAuth && !c.unauthRemote); err != nil {
			return err
		}
	}
	logger := c.g.logger()
	sys, stop, err := c.sf.start(ctx, c.g, logger, "mcp")
	if err != nil {
		for _, l := range listeners {
			_ = l.Close()
		}
		return err
	}
	defer stop()
	var engine *host.Engine
	if a.policies != nil {
		var done func()
		if engine, done, err = hostEngine(ctx, logger, c.g.env, a.policies, sys, &c.sf, &c.hf); err != nil {
			return err
		}
		defer done()
	}
	for _, l := range listeners {
		fmt.Fprintf(c.g.stderr, "distill mcp: serving http://%s%s\n", l.Addr(), mcp.Path)
	}
	return doors.Serve(ctx, logger, sys, doors.Config{Version: version.String(), Host: engine, MCP: &doors.MCP{
		Listeners: listeners, Token: a.token, RequireToken: a.policyTokensOnly, Run: c.hf.run,
		In: c.stdin, Out: c.g.stdout,
	}})
}

// unauthRemoteFlag must be spelled out to serve MCP without a token on an
// address other machines can reach.
const unauthRemoteFlag = "allow-unauthenticated-remote"

// listenMCP opens a listener for each address; loopbackOnly refuses, in
// one line naming the flag that allows it, an address that is not
// loopback (an unspecified host listens on every address). Every listener
// is one of the process's own ports, which no fetch may reach.
func listenMCP(sf *serveFlags, addrs []string, loopbackOnly bool) ([]mcp.Listener, error) {
	var out []mcp.Listener
	closeAll := func() {
		for _, l := range out {
			_ = l.Close()
		}
	}
	for _, addr := range addrs {
		lis, err := sf.listen(addr, "MCP HTTP port")
		if err != nil {
			closeAll()
			return nil, err
		}
		out = append(out, mcp.Listener{Listener: lis, Asked: addr})
		if ap, err := netip.ParseAddrPort(lis.Addr().String()); loopbackOnly && (err != nil || !ap.Addr().IsLoopback()) {
			closeAll()
			return nil, usagef("mcp --http %s --no-auth would serve, without a token, anyone who can reach that address: pass --%s too if that is meant, or set %s", addr, unauthRemoteFlag, string(envflag.MCPToken))
		}
	}
	return out, nil
}
