// Command extractor serves distill's ExtractorService over gRPC, for
// cluster deployments. Every flag can also be set by the environment
// variable its help names.
package main

import (
	"context"

	"distill.dev/services/extractor/server"
	"distill.dev/services/platform/envflag"
	"distill.dev/services/platform/servicemain"
	"distill.dev/services/platform/telemetry"
)

func main() {
	servicemain.Main("extractor", envflag.DefaultExtractorAddr, envflag.FromOS(), func(ctx context.Context, p servicemain.Process) error {
		return server.Run(ctx, server.Config{Addr: p.Listen, GRPCOptions: telemetry.ServerOptions()}, p.Logger)
	})
}
