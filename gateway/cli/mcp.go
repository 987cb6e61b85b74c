package cli

import (
	"fmt"
	"net"

	"github.com/spf13/cobra"

	"distill.dev/gateway/mcp"
	"distill.dev/services/platform/envflag"
	"distill.dev/services/platform/version"
)

func newMCPCmd(g *globals) *cobra.Command {
	var httpAddr string
	var noAuth bool
	var sf serveFlags
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve distill's tools to MCP clients, over stdio or streamable HTTP",
		Long: "Serve the Model Context Protocol: the fetch_url, observe_url and fetch_urls tools and\n" +
			"the session_* browsing tools.\n\n" +
			"The server speaks MCP on stdin and stdout, for a client that starts it. With --http it\n" +
			"serves streamable HTTP at " + mcp.Path + " instead, and every request must carry\n" +
			"'Authorization: Bearer <token>' with the token in " + string(envflag.MCPToken) + "; --no-auth serves\n" +
			"without one. On a loopback address, requests naming another host are refused.\n\n" +
			"Every service runs in this process unless --cluster points to them over the network,\n" +
			"as for `distill serve --cluster`. Stops gracefully on SIGINT or SIGTERM.",
		Example: "  distill mcp\n" +
			"  " + string(envflag.MCPToken) + "=$(openssl rand -hex 32) distill mcp --http 127.0.0.1:7001",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			token, _ := g.env.Lookup(envflag.MCPToken)
			switch {
			case noAuth && httpAddr == "":
				return usagef("--no-auth applies to --http only")
			case noAuth:
				token = ""
			case httpAddr != "" && token == "":
				return fmt.Errorf("mcp --http needs a bearer token: set %s, or pass --no-auth to serve without authentication", string(envflag.MCPToken))
			case httpAddr == "" && g.env.String(envflag.OTelTracesExporter, "") == "console":
				// The console exporter writes to stdout, which carries the
				// protocol.
				return usagef("OTEL_TRACES_EXPORTER=console would write spans into the MCP stream on stdout: use otlp or none with stdio")
			}

			ctx := cmd.Context()
			logger := g.logger()
			sys, stop, err := sf.start(ctx, g, logger, "mcp")
			if err != nil {
				return err
			}
			defer stop()
			srv := mcp.New(logger, serveAPI(logger, sys), version.String())
			if httpAddr == "" {
				return srv.ServeStdio(ctx, cmd.InOrStdin(), g.stdout)
			}
			lis, err := net.Listen("tcp", httpAddr)
			if err != nil {
				return fmt.Errorf("listen %s: %w", httpAddr, err)
			}
			fmt.Fprintf(g.stderr, "distill mcp: serving http://%s%s\n", lis.Addr(), mcp.Path)
			return srv.Serve(ctx, lis, token)
		},
	}
	cmd.Flags().StringVar(&httpAddr, "http", "", "serve streamable HTTP on this address, host:port, instead of stdio")
	cmd.Flags().BoolVar(&noAuth, "no-auth", false, "with --http, serve without a bearer token")
	sf.register(cmd.Flags(), g.env)
	return cmd
}
