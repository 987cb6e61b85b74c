package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// The service over a real gRPC connection: answers arrive whole, and
// failures keep their code and message across the wire.
func TestFetcherServiceOverGRPC(t *testing.T) {
	var userAgent string
	var hits atomic.Int32
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		userAgent = r.UserAgent()
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<p>hi</p>")
	}))
	defer page.Close()

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	logger := slog.New(slog.NewTextHandler(t.Output(), nil))
	go func() {
		done <- serve(ctx, lis, Config{FetcherConfig: FetcherConfig{UserAgentVersion: "9.9.9", CacheDir: t.TempDir(), AllowLocal: true}}, logger)
	}()

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := internalv1.NewFetcherServiceClient(conn)

	t.Run("answer", func(t *testing.T) {
		resp, err := client.Fetch(t.Context(), &internalv1.FetcherServiceFetchRequest{Url: page.URL, Options: &distillv1.FetchOptions{AllowLocal: true}})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetStatus() != 200 || string(resp.GetBody()) != "<p>hi</p>" || resp.GetContentType() != "text/html" {
			t.Fatalf("got %d %q %q", resp.GetStatus(), resp.GetContentType(), resp.GetBody())
		}
		if userAgent != "distill/9.9.9 (+https://distill.dev)" {
			t.Fatalf("User-Agent %q", userAgent)
		}
	})
	t.Run("second answer from the cache", func(t *testing.T) {
		before := hits.Load()
		resp, err := client.Fetch(t.Context(), &internalv1.FetcherServiceFetchRequest{Url: page.URL, Options: &distillv1.FetchOptions{AllowLocal: true}})
		if err != nil {
			t.Fatal(err)
		}
		if !resp.GetFromCache() || hits.Load() != before || string(resp.GetBody()) != "<p>hi</p>" {
			t.Fatalf("from_cache %v, server hits %d -> %d", resp.GetFromCache(), before, hits.Load())
		}
	})
	t.Run("browser chrome", func(t *testing.T) {
		// The request's profile crosses the wire with its options.
		opts := &distillv1.FetchOptions{AllowLocal: true, NoCache: true, Browser: "chrome"}
		if _, err := client.Fetch(t.Context(), &internalv1.FetcherServiceFetchRequest{Url: page.URL, Options: opts}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(userAgent, "Chrome/") {
			t.Fatalf("User-Agent %q, want the chrome profile's", userAgent)
		}
	})
	t.Run("unknown browser", func(t *testing.T) {
		opts := &distillv1.FetchOptions{AllowLocal: true, Browser: "netscape"}
		_, err := client.Fetch(t.Context(), &internalv1.FetcherServiceFetchRequest{Url: page.URL, Options: opts})
		err = failure.FromRemote(err)
		if !errors.Is(err, &failure.Error{Code: failure.InvalidArgument}) || !strings.Contains(err.Error(), "one of distill, chrome") {
			t.Fatalf("got %v, want InvalidArgument naming the profiles", err)
		}
	})
	t.Run("blocked", func(t *testing.T) {
		_, err := client.Fetch(t.Context(), &internalv1.FetcherServiceFetchRequest{Url: page.URL})
		err = failure.FromRemote(err)
		if !errors.Is(err, &failure.Error{Code: failure.Blocked}) {
			t.Fatalf("got %v, want code Blocked", err)
		}
		if want := "fetch " + page.URL + ": blocked by network policy: 127.0.0.1"; !strings.HasPrefix(err.Error(), want) {
			t.Fatalf("message %q, want it to start %q", err, want)
		}
	})

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("server did not stop")
	}
}

func TestRunReportsListenError(t *testing.T) {
	err := Run(t.Context(), Config{Addr: "256.0.0.1:0"}, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "listen 256.0.0.1:0") {
		t.Fatalf("got %v, want a listen error", err)
	}
}
