package grpcauth_test

import (
	"context"

	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
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

// Scoped tokens change while the server runs, as a host policy reloaded on
// SIGHUP changes them; the guard stays on when none is left, and a scoped
// token never makes an operator's call, even under its prefix.
func TestSetScoped(t *testing.T) {
	cfg := guarded
	cfg.ScopedTokens = []string{scopedToken}
	cfg.ScopedPrefix = "/distill.v1.DistillService/"
	g, err := grpcauth.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	addr := serveGuard(t, g)
	const added = "added-scoped-token-0123456789"
	call := func(token string) codes.Code {
		_, err := distillv1.NewDistillServiceClient(dial(t, addr, grpcauth.DialOption(token))).SessionClose(t.Context(), &distillv1.SessionCloseRequest{})
		return status.Code(err)
	}
	if got := call(added); got != codes.Unauthenticated {
		t.Fatalf("a token not yet added: %v", got)
	}
	if err := g.SetScoped([]string{added}); err != nil {
		t.Fatal(err)
	}
	if got := call(added); got != codes.Unimplemented {
		t.Fatalf("an added token: %v", got)
	}
	if got := call(scopedToken); got != codes.Unauthenticated {
		t.Fatalf("a removed token: %v", got)
	}
	_, err = distillv1.NewDistillServiceClient(dial(t, addr, grpcauth.DialOption(added))).CacheClear(t.Context(), &distillv1.CacheClearRequest{})
	if status.Code(err) != codes.PermissionDenied {
		t.Fatalf("a scoped token made an operator's call: %v", err)
	}
	if err := g.SetScoped(nil); err != nil || !g.Enabled() {
		t.Fatalf("emptied: %v, enabled %v", err, g.Enabled())
	}
	if got := call(added); got != codes.Unauthenticated {
		t.Fatalf("after emptying: %v", got)
	}
	if err := g.SetScoped([]string{"short"}); err == nil {
		t.Fatal("a short token was taken")
	}
}

func TestOperator(t *testing.T) {
	g, err := grpcauth.New(guarded)
	if err != nil {
		t.Fatal(err)
	}
	ctx := func(token string) context.Context {
		return metadata.NewIncomingContext(t.Context(), metadata.Pairs("authorization", "Bearer "+token))
	}
	if !g.Operator(ctx(operatorToken)) || g.Operator(ctx(apiToken)) || g.Operator(t.Context()) {
		t.Fatal("operator tokens misjudged")
	}
	open, _ := grpcauth.New(grpcauth.Config{})
	if !open.Operator(t.Context()) {
		t.Fatal("an open guard's caller is its operator")
	}
}
