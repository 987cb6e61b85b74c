package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/netpolicy"
)

// startFetcher serves a fetcher process's gRPC on a loopback port until
// the test ends.
func startFetcher(t *testing.T, fc FetcherConfig) (addr string, client internalv1.FetcherServiceClient) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	fc.NoCache = true
	go func() { done <- serve(ctx, lis, Config{FetcherConfig: fc}, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return lis.Addr().String(), internalv1.NewFetcherServiceClient(conn)
}

// A fetcher process honours allow_local only when its operator started it
// with -allow-local, whoever calls it: the gateway decides first, and the
// fetcher again on its own.
func TestFetcherRefusesAllowLocalUnlessStartedWithIt(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<p>hi</p>")
	}))
	defer page.Close()
	req := &internalv1.FetcherServiceFetchRequest{Url: page.URL, Options: &distillv1.FetchOptions{AllowLocal: true}}

	_, strict := startFetcher(t, FetcherConfig{})
	_, err := strict.Fetch(t.Context(), req)
	if status.Code(err) != codes.InvalidArgument || failure.CodeOf(err) != failure.InvalidArgument || !strings.Contains(err.Error(), failure.AllowLocalMessage) {
		t.Fatalf("err = %v (grpc %v), want InvalidArgument naming --allow-local", err, status.Code(err))
	}

	_, allowed := startFetcher(t, FetcherConfig{AllowLocal: true})
	if _, err := allowed.Fetch(t.Context(), req); err != nil {
		t.Fatalf("started with allow-local: %v", err)
	}
}

// Even with allow_local, the process's own ports are out of reach: its
// gRPC port, and the listeners it was given (metrics).
func TestFetcherRefusesItsOwnPorts(t *testing.T) {
	own := netpolicy.NewOwn()
	metrics := httptest.NewServer(http.NotFoundHandler())
	defer metrics.Close()
	own.Add(metrics.Listener.Addr(), "metrics port")
	addr, client := startFetcher(t, FetcherConfig{AllowLocal: true, Own: own})
	for url, want := range map[string]string{
		"http://" + addr + "/": "distill's own gRPC port",
		metrics.URL + "/":      "distill's own metrics port",
	} {
		_, err := client.Fetch(t.Context(), &internalv1.FetcherServiceFetchRequest{Url: url, Options: &distillv1.FetchOptions{AllowLocal: true}})
		if failure.CodeOf(err) != failure.Blocked || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want Blocked naming %q", url, err, want)
		}
	}
}
