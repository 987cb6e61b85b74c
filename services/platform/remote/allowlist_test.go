package remote_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	"distill.dev/services/platform/grpcserve"
	"distill.dev/services/platform/netpolicy"
	"distill.dev/services/platform/remote"
)

// judging renders nothing: it judges the URL by the allowlists its call's
// context carries, as the real renderer's guard does.
type judging struct {
	internalv1.UnimplementedRendererServiceServer
}

func (judging) Render(ctx context.Context, req *internalv1.RenderRequest) (*internalv1.RenderResponse, error) {
	p := netpolicy.Policy{Allowlists: netpolicy.Allowlists(ctx)}
	if _, err := p.CheckURL(req.GetUrl()); err != nil {
		return nil, failure.Wrap(failure.Blocked, err, "render %s", req.GetUrl())
	}
	return &internalv1.RenderResponse{FinalUrl: req.GetUrl(), Status: 200}, nil
}

// A gateway's allowlists cross to the service with the call.
func TestAllowlistsCrossProcesses(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpcserve.New(slog.New(slog.NewTextHandler(io.Discard, nil)), func(s *grpc.Server) {
		internalv1.RegisterRendererServiceServer(s, judging{})
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, lis) }()
	defer func() { cancel(); <-done }()

	conn, err := remote.Dial("renderer", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := remote.NewRenderer(conn)

	wide, _ := netpolicy.NewAllowlist([]string{"*.example.com"}, nil, nil)
	narrow, _ := netpolicy.NewAllowlist([]string{"docs.example.com"}, nil, nil)
	callCtx := netpolicy.WithAllowlist(netpolicy.WithAllowlist(t.Context(), wide), narrow)

	if _, err := r.Render(callCtx, &internalv1.RenderRequest{Url: "https://docs.example.com/"}); err != nil {
		t.Fatalf("listed host: %v", err)
	}
	_, err = r.Render(callCtx, &internalv1.RenderRequest{Url: "https://www.example.com/"})
	if failure.CodeOf(err) != failure.Blocked || !strings.Contains(err.Error(), "not in the host's allowed hosts") {
		t.Fatalf("the narrower list did not reach the service: %v", err)
	}
	// Without lists the service judges by its own policy alone.
	if _, err := r.Render(t.Context(), &internalv1.RenderRequest{Url: "https://www.example.com/"}); err != nil {
		t.Fatalf("no lists: %v", err)
	}
}
