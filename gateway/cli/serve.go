package cli

import (
	"github.com/spf13/cobra"
	"google.golang.org/grpc"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/envflag"
	"distill.dev/services/platform/grpcserve"
	"distill.dev/services/platform/telemetry"
)

// DefaultListen keeps a fresh server on loopback: exposing it is a choice.
const DefaultListen = "127.0.0.1:7000"

func newServeCmd(g *globals) *cobra.Command {
	var listen string
	var sf serveFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the public gRPC API (DistillService)",
		Long: "Serve DistillService over gRPC, with gRPC health checking and server\n" +
			"reflection. By default the fetcher, extractor, renderer and an embedded NATS\n" +
			"server run in this process; with --cluster the gateway uses them over the\n" +
			"network (--nats, --fetcher, --extractor, --renderer) and is ready only while\n" +
			"NATS, the fetcher and the extractor answer. Stops gracefully on SIGINT or SIGTERM.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			logger := g.logger()
			sys, stop, err := sf.start(cmd.Context(), g, logger, "gateway")
			if err != nil {
				return err
			}
			defer stop()
			srv := grpcserve.New(logger, func(s *grpc.Server) {
				distillv1.RegisterDistillServiceServer(s, serveAPI(logger, sys))
			}, telemetry.ServerOptions()...)
			srv.SetReadiness(sys.Ready)
			lis, err := sf.listen(listen, "gRPC port")
			if err != nil {
				return err
			}
			return srv.Serve(cmd.Context(), lis)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", g.env.String(envflag.Listen, DefaultListen), envflag.Usage("gRPC listen address, host:port", envflag.Listen))
	sf.register(cmd.Flags(), g.env)
	return cmd
}
