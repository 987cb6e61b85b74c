// Command extractor serves distill's ExtractorService over gRPC, for
// cluster deployments. Every flag can also be set by the environment
// variable its help names.
package main

import (
	"context"
	"flag"

	"distill.dev/services/extractor/extract"
	"distill.dev/services/extractor/server"
	"distill.dev/services/platform/envflag"
	"distill.dev/services/platform/servicemain"
	"distill.dev/services/platform/telemetry"
)

func main() {
	env := envflag.FromOS()
	memory := flag.Int("extract-memory", env.Int(envflag.ExtractMemory, extract.DefaultMemoryBudget>>20), envflag.Usage("MiB of memory the extractions may hold at once; more wait their turn (each page weighs about 25 times its size)", envflag.ExtractMemory))
	pdfCache := flag.String("pdf-cache-dir", env.String(envflag.PDFCacheDir, ""), envflag.Usage("keep the compiled PDF engine in this directory, so that a restarted process skips compiling it; empty: compile it once per process", envflag.PDFCacheDir))
	servicemain.Main("extractor", envflag.DefaultExtractorAddr, env, func(ctx context.Context, p servicemain.Process) error {
		return server.Run(ctx, server.Config{Addr: p.Listen, GRPCOptions: telemetry.ServerOptions(), MemoryBudget: int64(*memory) << 20, PDFCacheDir: *pdfCache}, p.Logger)
	})
}
