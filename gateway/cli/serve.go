package cli

import (
	"os"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"

	"distill.dev/gateway/api"
	"distill.dev/gateway/app"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/proto/grpcserve"
)

// DefaultListen keeps a fresh server on loopback: exposing it is a choice.
const DefaultListen = "127.0.0.1:7000"

func newServeCmd(g *globals) *cobra.Command {
	listen := DefaultListen
	if v := os.Getenv("DISTILL_LISTEN"); v != "" {
		listen = v
	}
	workers := 32
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the public gRPC API (DistillService) with every service in-process",
		Long: "Serve DistillService over gRPC, with gRPC health checking and server\n" +
			"reflection, running the fetcher, extractor, renderer and an embedded NATS\n" +
			"server in this process. Stops gracefully on SIGINT or SIGTERM.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger := g.logger()
			a := app.New(logger, app.Config{Version: Version, Workers: workers, CacheDir: g.cacheDir})
			defer a.Close()
			srv := grpcserve.New(logger, func(s *grpc.Server) {
				distillv1.RegisterDistillServiceServer(s, api.New(logger, a))
			})
			return srv.ListenAndServe(cmd.Context(), listen)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", listen, "gRPC listen address, host:port (env DISTILL_LISTEN)")
	cmd.Flags().IntVar(&workers, "workers", workers, "batch jobs run at once by the in-process workers")
	return cmd
}
