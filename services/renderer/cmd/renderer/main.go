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
	env := envflag.FromOS()
	chromium := flag.String("chromium", env.String(envflag.Chromium, render.DefaultChromium), envflag.Usage("Chromium binary", envflag.Chromium))
	maxPages := flag.Int("max-pages", env.Int(envflag.MaxPages, render.DefaultMaxPages), envflag.Usage("pages rendered at once", envflag.MaxPages))
	noSandbox := flag.Bool("no-chromium-sandbox", env.Bool(envflag.ChromiumNoSandbox, false), envflag.Usage("run Chromium without its own sandbox, where the container is the sandbox (non-root pods without user namespaces)", envflag.ChromiumNoSandbox))
	noCookies := flag.Bool("fallback-no-cookies", env.Bool(envflag.FallbackNoCookies, false), envflag.Usage("render every page anonymously, never with the cookies a request carries", envflag.FallbackNoCookies))
	allowLocal := flag.Bool("allow-local", env.Bool(envflag.AllowLocal, false), envflag.Usage("honour requests' allow_local: let them render loopback pages (never private ranges, never this process's own ports)", envflag.AllowLocal))
	servicemain.Main("renderer", envflag.DefaultRendererAddr, env, func(ctx context.Context, p servicemain.Process) error {
		return server.Run(ctx, server.Config{
			Addr: p.Listen, Chromium: *chromium, MaxPages: *maxPages, NoSandbox: *noSandbox, NoCookies: *noCookies,
			AllowLocal: *allowLocal, Own: p.Own,
			GRPCOptions: telemetry.ServerOptions(),
		}, p.Logger)
	})
}
