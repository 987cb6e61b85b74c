package api_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"distill.dev/gateway/api"
	"distill.dev/gateway/app"
	"distill.dev/proto/failure"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/grpcserve"
)

// serve starts the public API on a loopback port, as `distill serve` does,
// and returns a client connection to it. Each server has its own cache.
func serve(t *testing.T) *grpc.ClientConn {
	t.Helper()
	return serveCache(t, t.TempDir())
}

func serveCache(t *testing.T, cacheDir string) *grpc.ClientConn {
	t.Helper()
	return serveConfig(t, app.Config{UserAgentVersion: "test", Workers: 4, CacheDir: cacheDir, AllowLocal: true})
}

// serveConfig serves the API over a system opened with cfg.
func serveConfig(t *testing.T, cfg app.Config) *grpc.ClientConn {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, err := app.Open(t.Context(), logger, cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpcserve.New(logger, func(s *grpc.Server) {
		distillv1.RegisterDistillServiceServer(s, api.New(logger, a))
	})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, lis) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		if err := a.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

func site(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><head><title>Page %s</title></head><body><main><h1>Page %s</h1><p>Words about %s for a reader to read, several of them in a row.</p></main></body></html>", r.URL.Path, r.URL.Path, r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestFetchOverGRPC(t *testing.T) {
	pages := site(t)
	client := distillv1.NewDistillServiceClient(serve(t))
	res, err := client.Fetch(context.Background(), &distillv1.FetchRequest{
		Url:     pages.URL + "/hello",
		Options: &distillv1.FetchOptions{AllowLocal: true, Stats: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	d := res.GetDistilled()
	if d.GetStatus() != 200 || d.GetFinalUrl() != pages.URL+"/hello" || d.GetTitle() != "Page /hello" {
		t.Errorf("distilled = status %d url %q title %q", d.GetStatus(), d.GetFinalUrl(), d.GetTitle())
	}
	if d.GetStats() == nil || d.GetStats().GetRawBytes() == 0 {
		t.Errorf("stats missing: %v", d.GetStats())
	}
}

func TestFetchErrorsCarryTheirCode(t *testing.T) {
	client := distillv1.NewDistillServiceClient(serve(t))
	tests := []struct {
		name     string
		req      *distillv1.FetchRequest
		wantGRPC codes.Code
		wantCode distillv1.ErrorCode
	}{
		{"blocked private address", &distillv1.FetchRequest{Url: "http://192.168.1.1/"}, codes.PermissionDenied, failure.Blocked},
		{"loopback without allow_local", &distillv1.FetchRequest{Url: "http://127.0.0.1:1/"}, codes.PermissionDenied, failure.Blocked},
		{"missing url", &distillv1.FetchRequest{}, codes.InvalidArgument, failure.InvalidArgument},
		{"not http", &distillv1.FetchRequest{Url: "file:///etc/passwd"}, codes.InvalidArgument, failure.InvalidURL},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := client.Fetch(context.Background(), tt.req)
			if got := status.Code(err); got != tt.wantGRPC {
				t.Errorf("grpc code = %v, want %v (%v)", got, tt.wantGRPC, err)
			}
			if got := failure.CodeOf(err); got != tt.wantCode {
				t.Errorf("distill code = %v, want %v", got, tt.wantCode)
			}
		})
	}
}

func TestFetchBatchStreamsEveryURLOnce(t *testing.T) {
	pages := site(t)
	client := distillv1.NewDistillServiceClient(serve(t))
	urls := []string{pages.URL + "/1", pages.URL + "/2", "http://10.0.0.1/", pages.URL + "/3", pages.URL + "/4"}
	stream, err := client.FetchBatch(context.Background(), &distillv1.FetchBatchRequest{
		Urls:    urls,
		Options: &distillv1.FetchOptions{AllowLocal: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int32]*distillv1.FetchBatchResponse{}
	for {
		r, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, dup := seen[r.GetIndex()]; dup {
			t.Errorf("index %d streamed twice", r.GetIndex())
		}
		seen[r.GetIndex()] = r
	}
	if len(seen) != len(urls) {
		t.Fatalf("streamed %d results, want %d", len(seen), len(urls))
	}
	for i, u := range urls {
		r := seen[int32(i)]
		if r.GetUrl() != u {
			t.Errorf("index %d url %q, want %q", i, r.GetUrl(), u)
		}
		if i == 2 {
			if r.GetError().GetCode() != failure.Blocked {
				t.Errorf("private address result = %v, want a blocked error", r)
			}
		} else if r.GetResult().GetFinalUrl() != u {
			t.Errorf("index %d result = %v", i, r)
		}
	}
}

func TestFetchBatchRefusesEmpty(t *testing.T) {
	client := distillv1.NewDistillServiceClient(serve(t))
	stream, err := client.FetchBatch(context.Background(), &distillv1.FetchBatchRequest{})
	if err == nil {
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("err = %v, want InvalidArgument", err)
	}
}

func TestObserveAddsDiagnostics(t *testing.T) {
	pages := site(t)
	client := distillv1.NewDistillServiceClient(serve(t))
	res, err := client.Observe(context.Background(), &distillv1.ObserveRequest{Url: pages.URL + "/x", Options: &distillv1.FetchOptions{AllowLocal: true}})
	if err != nil {
		t.Fatal(err)
	}
	if res.GetDistilled().GetDiagnostics() == nil {
		t.Error("observe without diagnostics")
	}
}

func TestHealthAndReflection(t *testing.T) {
	conn := serve(t)
	ctx := context.Background()

	h, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "distill.v1.DistillService"})
	if err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health = %v, %v; want SERVING", h, err)
	}

	stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	for _, want := range []string{"distill.v1.DistillService", "grpc.health.v1.Health"} {
		if !slices.Contains(names, want) {
			t.Errorf("reflection lists %v, missing %s", names, want)
		}
	}
}

func TestSessionsOverGRPC(t *testing.T) {
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/slow":
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
			return
		case "/next":
			fmt.Fprint(w, "<html><head><title>Next</title></head><body><main><p>The second page, with words enough to read.</p></main></body></html>")
			return
		}
		fmt.Fprint(w, `<html><head><title>First</title></head><body><main><p>The first page, with words enough to read.</p>
			<a href="/next">Onwards</a><form method="post" action="/order"><input name="qty"><button>Order</button></form></main></body></html>`)
	}))
	defer pages.Close()
	client := distillv1.NewDistillServiceClient(serve(t))
	ctx := context.Background()

	started, err := client.SessionStart(ctx, &distillv1.SessionStartRequest{Url: pages.URL + "/", AllowLocal: true, Js: distillv1.JsMode_JS_MODE_OFF})
	if err != nil {
		t.Fatal(err)
	}
	v := started.GetView()
	if v.GetSessionId() == "" || v.GetSnapshot().GetTitle() != "First" || len(v.GetLoop().GetAvailableActions()) != 2 {
		t.Fatalf("start view = %v", v)
	}
	followed, err := client.SessionFollow(ctx, &distillv1.SessionFollowRequest{SessionId: v.GetSessionId(), ActionId: "link_0"})
	if err != nil || followed.GetView().GetCurrentUrl() != pages.URL+"/next" {
		t.Fatalf("follow: %v %v", followed.GetView().GetCurrentUrl(), err)
	}
	back, err := client.SessionObserve(ctx, &distillv1.SessionObserveRequest{SessionId: v.GetSessionId(), Url: pages.URL + "/"})
	if err != nil || back.GetView().GetLoop().GetState().GetStepsTaken() != 3 {
		t.Fatalf("observe: %v %v", back.GetView().GetLoop().GetState(), err)
	}
	withheld, err := client.SessionSubmitForm(ctx, &distillv1.SessionSubmitFormRequest{
		SessionId: v.GetSessionId(), FormId: "form_0", Values: map[string]*distillv1.FieldValues{"qty": {Values: []string{"2"}}},
	})
	if err != nil || !withheld.GetNeedsConfirmation() || withheld.GetWouldSubmit().GetFields()["qty"].GetValues()[0] != "2" {
		t.Fatalf("submit without confirm: %v %v", withheld, err)
	}
	closed, err := client.SessionClose(ctx, &distillv1.SessionCloseRequest{SessionId: v.GetSessionId()})
	if err != nil || !closed.GetClosed() {
		t.Fatalf("close: %v %v", closed, err)
	}

	failures := []struct {
		name     string
		call     func() error
		wantGRPC codes.Code
	}{
		{"closed session", func() error {
			_, err := client.SessionFollow(ctx, &distillv1.SessionFollowRequest{SessionId: v.GetSessionId(), ActionId: "link_0"})
			return err
		}, codes.NotFound},
		{"missing url", func() error {
			_, err := client.SessionStart(ctx, &distillv1.SessionStartRequest{})
			return err
		}, codes.InvalidArgument},
		{"private address", func() error {
			_, err := client.SessionStart(ctx, &distillv1.SessionStartRequest{Url: "http://10.1.2.3/"})
			return err
		}, codes.PermissionDenied},
		{"deadline", func() error {
			_, err := client.SessionStart(ctx, &distillv1.SessionStartRequest{Url: pages.URL + "/slow", AllowLocal: true, TimeoutSecs: proto.Int32(1), MaxActionRetries: proto.Int32(0)})
			return err
		}, codes.DeadlineExceeded},
		{"nothing listening", func() error {
			_, err := client.SessionStart(ctx, &distillv1.SessionStartRequest{Url: "http://127.0.0.1:1/", AllowLocal: true, MaxActionRetries: proto.Int32(0)})
			return err
		}, codes.Unavailable},
	}
	for _, tt := range failures {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); status.Code(err) != tt.wantGRPC {
				t.Fatalf("err = %v, want %v", err, tt.wantGRPC)
			}
		})
	}
}

func TestCacheRPCs(t *testing.T) {
	pages := site(t)
	dir := t.TempDir()
	client := distillv1.NewDistillServiceClient(serveCache(t, dir))
	ctx := context.Background()
	for _, path := range []string{"/a", "/b", "/a"} {
		if _, err := client.Fetch(ctx, &distillv1.FetchRequest{Url: pages.URL + path, Options: &distillv1.FetchOptions{AllowLocal: true}}); err != nil {
			t.Fatal(err)
		}
	}

	info, err := client.CacheInfo(ctx, &distillv1.CacheInfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.GetEntries() != 2 || info.GetTotalBytes() <= 0 {
		t.Fatalf("CacheInfo = %v, want 2 entries", info)
	}
	// Where the cache lives is the server's business.
	if info.GetDir() != "" {
		t.Errorf("CacheInfo discloses the server's cache directory %q", info.GetDir())
	}
	pruned, err := client.CachePrune(ctx, &distillv1.CachePruneRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if pruned.GetRemoved() != 0 {
		t.Errorf("default prune removed %d young entries", pruned.GetRemoved())
	}
	zero := int64(0)
	pruned, err = client.CachePrune(ctx, &distillv1.CachePruneRequest{OlderThanSecs: &zero})
	if err != nil {
		t.Fatal(err)
	}
	if pruned.GetRemoved() != 2 || pruned.GetFreedBytes() != info.GetTotalBytes() {
		t.Errorf("prune of everything = %v, want 2 entries and %d bytes", pruned, info.GetTotalBytes())
	}
	if _, err := client.Fetch(ctx, &distillv1.FetchRequest{Url: pages.URL + "/c", Options: &distillv1.FetchOptions{AllowLocal: true}}); err != nil {
		t.Fatal(err)
	}
	cleared, err := client.CacheClear(ctx, &distillv1.CacheClearRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if cleared.GetRemoved() != 1 || cleared.GetFreedBytes() <= 0 {
		t.Errorf("CacheClear = %v, want 1 entry", cleared)
	}

	negative := int64(-1)
	_, err = client.CachePrune(ctx, &distillv1.CachePruneRequest{OlderThanSecs: &negative})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("negative age: err = %v, want InvalidArgument", err)
	}
}

func TestCacheRPCsWithoutACache(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	client := distillv1.NewDistillServiceClient(serveCache(t, filepath.Join(file, "cache")))
	ctx := context.Background()
	_, err := client.CacheInfo(ctx, &distillv1.CacheInfoRequest{})
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("CacheInfo: err = %v, want FailedPrecondition saying why", err)
	}
	if err != nil && strings.Contains(err.Error(), file) {
		t.Errorf("CacheInfo: err = %v discloses the server's path", err)
	}
	_, err = client.CacheClear(ctx, &distillv1.CacheClearRequest{})
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("CacheClear: err = %v, want FailedPrecondition", err)
	}
	pages := site(t)
	if _, err := client.Fetch(ctx, &distillv1.FetchRequest{Url: pages.URL + "/a", Options: &distillv1.FetchOptions{AllowLocal: true}}); err != nil {
		t.Errorf("fetch without a cache: %v", err)
	}
}
