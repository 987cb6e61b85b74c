package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/renderer/render"
)

// shared is the renderer, and the Chromium, of the tests that need none of
// their own, made from a Config as Run makes it. Every render gets its own
// browser context, as in production, so the tests share what the service
// shares.
var shared *render.Renderer

func TestMain(m *testing.M) {
	shared = newRenderer(Config{AllowLocal: true}, slog.New(slog.DiscardHandler))
	code := m.Run()
	_ = shared.Close()
	os.Exit(code)
}

// TestRenderOverGRPC serves the renderer on a loopback port, as the
// renderer process does, and renders through a gRPC client.
func TestRenderOverGRPC(t *testing.T) {
	t.Parallel()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, `<!doctype html><title>t</title><div id="app"></div><script>
			setTimeout(() => { document.getElementById('app').innerHTML = '<p id="done">built remotely</p>' }, 100)</script>`)
	}))
	defer page.Close()

	logger := slog.New(slog.DiscardHandler)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- New(logger, shared).Serve(ctx, lis) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	}()

	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := internalv1.NewRendererServiceClient(conn)
	rctx, rcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer rcancel()

	health, err := healthpb.NewHealthClient(conn).Check(rctx, &healthpb.HealthCheckRequest{})
	if err != nil || health.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health = %v, %v", health, err)
	}

	res, err := client.Render(rctx, &internalv1.RenderRequest{
		Url:     page.URL,
		Options: &distillv1.FetchOptions{AllowLocal: true, JsWaitFor: "#done", TimeoutSecs: proto.Int32(20)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.GetHtml()), "built remotely") || res.GetStatus() != 200 {
		t.Fatalf("render = %d %s", res.GetStatus(), res.GetHtml())
	}

	// A policy refusal crosses the wire as PermissionDenied with distill's
	// own code attached.
	_, err = client.Render(rctx, &internalv1.RenderRequest{Url: page.URL})
	if status.Code(err) != codes.PermissionDenied || failure.CodeOf(err) != failure.Blocked {
		t.Fatalf("err = %v (grpc %v, distill %v), want PermissionDenied/Blocked", err, status.Code(err), failure.CodeOf(err))
	}
}

// TestConfigNoCookies: the renderer process's -fallback-no-cookies, through
// Config.NoCookies, renders pages without the cookies a request carries.
func TestConfigNoCookies(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/members", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, `<!doctype html><title>t</title><div id="who">checking</div><script>
			fetch('/api/me').then(r => r.text()).then(t => {
				document.getElementById('who').textContent = t;
				const d = document.createElement('div'); d.id = 'done'; document.body.append(d);
			});</script>`)
	})
	mux.HandleFunc("/api/me", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("sid"); err == nil && c.Value == "s3cret" {
			_, _ = io.WriteString(w, "member: alice")
			return
		}
		_, _ = io.WriteString(w, "anonymous")
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()

	anon := newRenderer(Config{NoCookies: true, AllowLocal: true}, slog.New(slog.DiscardHandler))
	defer func() { _ = anon.Close() }()
	who := func(r *render.Renderer) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := r.Render(ctx, &internalv1.RenderRequest{
			Url:     srv.URL + "/members",
			Options: &distillv1.FetchOptions{AllowLocal: true, JsWaitFor: "#done", TimeoutSecs: proto.Int32(20)},
			Cookies: []*internalv1.Cookie{{Name: "sid", Value: "s3cret", Path: "/"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range []string{"member: alice", "anonymous"} {
			if strings.Contains(string(res.GetHtml()), w) {
				return w
			}
		}
		t.Fatalf("no answer on the page:\n%s", res.GetHtml())
		return ""
	}
	// Without NoCookies the cookie must get through, or the refusal below
	// proves nothing.
	if got := who(shared); got != "member: alice" {
		t.Fatalf("default Config: the page says %q, want the session's member", got)
	}
	if got := who(anon); got != "anonymous" {
		t.Fatalf("Config.NoCookies: the page says %q, want anonymous", got)
	}
}
