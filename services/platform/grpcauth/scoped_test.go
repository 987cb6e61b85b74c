package grpcauth_test

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/grpcauth"
)

const scopedToken = "scoped-token-0123456789abcdef"

// A scoped token reaches only the methods under its prefix: here the
// session calls stand for a host mode's service.
func TestScopedTokens(t *testing.T) {
	cfg := guarded
	cfg.ScopedTokens = []string{scopedToken}
	cfg.ScopedPrefix = "/distill.v1.DistillService/Session"
	addr := serve(t, cfg)
	client := distillv1.NewDistillServiceClient(dial(t, addr, grpcauth.DialOption(scopedToken)))
	if _, err := client.SessionClose(t.Context(), &distillv1.SessionCloseRequest{}); status.Code(err) != codes.Unimplemented {
		t.Fatalf("a method under the prefix: %v", err)
	}
	_, err := client.Fetch(t.Context(), &distillv1.FetchRequest{Url: "https://example.com/"})
	if status.Code(err) != codes.PermissionDenied || !strings.Contains(status.Convert(err).Message(), "may call only") {
		t.Fatalf("a method outside the prefix: %v", err)
	}
	if _, err := grpcauth.New(grpcauth.Config{ScopedTokens: []string{scopedToken}}); err == nil {
		t.Fatal("scoped tokens without a prefix were taken")
	}
}
