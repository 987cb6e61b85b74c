package grpcauth

import (
	"testing"

	"google.golang.org/grpc/metadata"
)

func TestNames(t *testing.T) {
	n, err := NewNames(map[string]string{"team-a-token-0123456789": "team-a", "team-b-token-0123456789": "team-b"})
	if err != nil {
		t.Fatal(err)
	}
	for token, want := range map[string]string{
		"team-a-token-0123456789":  "team-a",
		"team-b-token-0123456789":  "team-b",
		"unknown-token-0123456789": "",
	} {
		ctx := metadata.NewIncomingContext(t.Context(), metadata.Pairs("authorization", "Bearer "+token))
		got, ok := n.Of(ctx)
		if got != want || ok != (want != "") {
			t.Errorf("Of(%s) = %q, %v; want %q", token, got, ok, want)
		}
	}
	if _, ok := n.Of(t.Context()); ok {
		t.Error("a call without a token has a name")
	}
	if _, err := NewNames(map[string]string{"short": "x"}); err == nil {
		t.Error("a short token was taken")
	}
}
