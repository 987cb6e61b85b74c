package grpcserve

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"distill.dev/services/platform/netpolicy"
)

// allowlistsIn puts the host allowlists a caller sent (netpolicy.MetadataKey)
// into the call's context, so that a fetcher or renderer in a cluster
// judges every hop as the gateway's host mode asked. Lists only narrow, so
// a caller can restrict nobody but itself with them; one that cannot be
// read refuses the call rather than run it unrestricted.
func allowlistsIn(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	for _, v := range md.Get(netpolicy.MetadataKey) {
		a := new(netpolicy.Allowlist)
		if err := a.UnmarshalText([]byte(v)); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "metadata %s: %v", netpolicy.MetadataKey, err)
		}
		ctx = netpolicy.WithAllowlist(ctx, a)
	}
	return handler(ctx, req)
}
