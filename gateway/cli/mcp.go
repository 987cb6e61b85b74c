package cli

import (
	"fmt"
	"net/netip"

	"github.com/spf13/cobra"

	"distill.dev/gateway/host"
	"distill.dev/gateway/mcp"
	"distill.dev/services/platform/envflag"
	"distill.dev/services/platform/version"
)

func newMCPCmd(g *globals) *cobra.Command {
	var httpAddrs []string
	var noAuth, unauthRemote bool
	var sf serveFlags
	var hf hostFlags
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve distill's tools to MCP clients, over stdio or streamable HTTP",
		Long: "Serve the Model Context Protocol: the fetch_url, observe_url and fetch_urls tools and\n" +
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
			"serve --policy sharing this one's NATS (--cluster).",
		Example: "  distill mcp\n" +
			"  " + string(envflag.MCPToken) + "=$(openssl rand -hex 32) distill mcp --http 127.0.0.1:7001",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			token, _ := g.env.Lookup(envflag.MCPToken)
			serveHTTP := len(httpAddrs) > 0
			if hf.run != "" && (!hf.enabled() || len(hf.run) > 128) {
				return usagef("--run names a host mode run (with --policy) of 1 to 128 bytes")
			}
			var policies *host.Policies
			if hf.enabled() {
				var err error
				if policies, err = hf.load(g.env); err != nil {
					return err
				}
			}
			// In host mode over HTTP the policy's tokens are enough: each
			// runs as its actor, and "default" is reached only with the
			// operator's token or --no-auth.
			policyTokensOnly := serveHTTP && !noAuth && token == "" && policies != nil && len(policies.Current().Tokens()) > 0
			switch {
			case noAuth && !serveHTTP:
				return usagef("--no-auth applies to --http only")
			case unauthRemote && !noAuth:
				return usagef("--%s applies to --http --no-auth only", unauthRemoteFlag)
			case noAuth:
				token = ""
			case serveHTTP && token == "" && !policyTokensOnly:
				return fmt.Errorf("mcp --http needs a bearer token: set %s, or pass --no-auth to serve without authentication", string(envflag.MCPToken))
			case !serveHTTP && g.env.String(envflag.OTelTracesExporter, "") == "console":
				// The console exporter writes to stdout, which carries the
				// protocol.
				return usagef("OTEL_TRACES_EXPORTER=console would write spans into the MCP stream on stdout: use otlp or none with stdio")
			}
			if policies != nil && !policyTokensOnly {
				if _, err := hf.defaultSchemas(policies); err != nil {
					return err
				}
			}

			// Listening first: an address refused or taken stops the
			// command before distill starts.
			var listeners []mcp.Listener
			if serveHTTP {
				var err error
				if listeners, err = listenMCP(&sf, httpAddrs, noAuth && !unauthRemote); err != nil {
					return err
				}
			}
			ctx := cmd.Context()
			logger := g.logger()
			sys, stop, err := sf.start(ctx, g, logger, "mcp")
			if err != nil {
				for _, l := range listeners {
					_ = l.Close()
				}
				return err
			}
			defer stop()
			var srv *mcp.Server
			if policies != nil {
				engine, done, err := hostEngine(ctx, logger, g.env, policies, sys, &sf, &hf)
				if err != nil {
					return err
				}
				defer done()
				srv = mcp.NewHost(logger, engine, policies, hf.run, version.String())
				if policyTokensOnly {
					srv.RequireToken()
				}
			} else {
				srv = mcp.New(logger, serveAPI(logger, sys), version.String())
			}
			if !serveHTTP {
				return srv.ServeStdio(ctx, cmd.InOrStdin(), g.stdout)
			}
			for _, l := range listeners {
				fmt.Fprintf(g.stderr, "distill mcp: serving http://%s%s\n", l.Addr(), mcp.Path)
			}
			return srv.ServeListeners(ctx, token, listeners...)
		},
	}
	cmd.Flags().StringSliceVar(&httpAddrs, "http", nil, "serve streamable HTTP on these addresses, host:port (comma-separated or repeated), instead of stdio")
	cmd.Flags().BoolVar(&noAuth, "no-auth", false, "with --http, serve without a bearer token (loopback addresses only, unless --"+unauthRemoteFlag+")")
	cmd.Flags().BoolVar(&unauthRemote, unauthRemoteFlag, false, "with --http --no-auth, serve without a token on addresses other machines can reach: anyone who reaches them uses distill")
	sf.register(cmd.Flags(), g.env)
	hf.register(cmd.Flags(), g.env)
	cmd.Flags().StringVar(&hf.run, "run", "", "host mode: the run every call belongs to, for approvals and operations the host makes for it (default: one run per MCP session)")
	return cmd
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
