// Command renderer serves distill's RendererService on its own, for
// cluster deployments. Every flag can also be set by the environment
// variable its help names.
package main

import (
	"context"
	"flag"

	"distill.dev/services/platform/envflag"
	"distill.dev/services/platform/servicemain"
	"distill.dev/services/platform/telemetry"
	"distill.dev/services/renderer/render"
	"distill.dev/services/renderer/server"
)

func main() {
	fs := flag.CommandLine
	chromium := envflag.String(fs, "chromium", "DISTILL_CHROMIUM", render.DefaultChromium, "Chromium binary")
	maxPages := envflag.Int(fs, "max-pages", "DISTILL_MAX_PAGES", render.DefaultMaxPages, "pages rendered at once")
	noSandbox := envflag.Bool(fs, "no-chromium-sandbox", "DISTILL_CHROMIUM_NO_SANDBOX", false, "run Chromium without its own sandbox, where the container is the sandbox (non-root pods without user namespaces)")
	servicemain.Main("renderer", ":7003", func(ctx context.Context, p servicemain.Process) error {
		return server.Run(ctx, server.Config{
			Addr: p.Listen, Chromium: *chromium, MaxPages: *maxPages, NoSandbox: *noSandbox,
			GRPCOptions: telemetry.ServerOptions(),
		}, p.Logger)
	})
}
