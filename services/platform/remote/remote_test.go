package remote_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	"distill.dev/services/platform/grpcserve"
	"distill.dev/services/platform/remote"
)

// renderer answers every render with the URL it was asked for, and a
// policy refusal for one URL.
type renderer struct {
	internalv1.UnimplementedRendererServiceServer
}

func (renderer) Render(_ context.Context, req *internalv1.RenderRequest) (*internalv1.RenderResponse, error) {
	if req.GetUrl() == "http://10.0.0.1/" {
		return nil, failure.New(failure.Blocked, "render %s: private range", req.GetUrl())
	}
	return &internalv1.RenderResponse{FinalUrl: req.GetUrl(), Status: 200, Html: []byte(strings.Repeat("x", 6<<20))}, nil
}

// serve runs the renderer on addr ("127.0.0.1:0" for any port) until the
// returned stop is called.
func serve(t *testing.T, addr string) (string, func()) {
	t.Helper()
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := grpcserve.New(slog.New(slog.NewTextHandler(io.Discard, nil)), func(s *grpc.Server) {
		internalv1.RegisterRendererServiceServer(s, renderer{})
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, lis) }()
	return lis.Addr().String(), func() {
		cancel()
		<-done
	}
}

func TestRemoteRenderer(t *testing.T) {
	addr, stop := serve(t, "127.0.0.1:0")
	conn, err := remote.Dial("renderer", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := remote.NewRenderer(conn)
	ctx := context.Background()

	if err := conn.Healthy(ctx); err != nil {
		t.Fatalf("healthy: %v", err)
	}
	// Bigger than gRPC's default 4 MiB message.
	res, err := r.Render(ctx, &internalv1.RenderRequest{Url: "http://example.com/"})
	if err != nil || len(res.GetHtml()) != 6<<20 {
		t.Fatalf("render: %d bytes, %v", len(res.GetHtml()), err)
	}
	if _, err := r.Render(ctx, &internalv1.RenderRequest{Url: "http://10.0.0.1/"}); failure.CodeOf(err) != failure.Blocked {
		t.Fatalf("the service's own error lost its code: %v", err)
	}

	// Stopped for good: once the client has seen the connection go, the
	// first call waits out the grace for a restart, the next ones fail at
	// once.
	stop()
	awaitGone(t, conn)
	down := func(i int, err error) {
		t.Helper()
		if failure.CodeOf(err) != failure.Unavailable || !strings.Contains(err.Error(), "renderer at "+addr+" is unavailable") {
			t.Fatalf("call %d with the renderer down: %v (%v)", i, err, failure.CodeOf(err))
		}
	}
	grace := holdGrace(conn)
	failed := make(chan error, 1)
	go func() {
		_, err := r.Render(ctx, &internalv1.RenderRequest{Url: "http://example.com/"})
		failed <- err
	}()
	<-grace.waiting
	grace.end()
	down(0, <-failed)
	conn.SetGrace(func(ctx context.Context) (context.Context, context.CancelFunc) {
		t.Error("the call after a grace waited in vain waits again")
		wait, cancel := context.WithCancel(ctx)
		cancel()
		return wait, cancel
	})
	_, err = r.Render(ctx, &internalv1.RenderRequest{Url: "http://example.com/"})
	down(1, err)
	if err := conn.Healthy(ctx); err == nil {
		t.Fatal("a stopped service reports healthy")
	}

	// The service comes back on the same address: once the client has
	// reconnected, calls succeed again.
	_, stop = serve(t, addr)
	for s := conn.GetState(); s != connectivity.Ready; s = conn.GetState() {
		conn.Connect()
		conn.WaitForStateChange(ctx, s)
	}
	if _, err := r.Render(ctx, &internalv1.RenderRequest{Url: "http://example.com/"}); err != nil {
		t.Fatalf("no recovery after the service returned: %v", err)
	}

	// A restart within the grace costs no request: the call made while
	// the service is away waits for it. The grace never ends here, so the
	// call can only return with the service.
	stop()
	awaitGone(t, conn)
	grace = holdGrace(conn)
	back := make(chan func())
	go func() {
		<-grace.waiting
		_, stop := serve(t, addr)
		back <- stop
	}()
	_, err = r.Render(ctx, &internalv1.RenderRequest{Url: "http://example.com/"})
	defer (<-back)()
	if err != nil {
		t.Fatalf("a call during a restart: %v", err)
	}
}

// awaitGone returns once the client has seen the service's connection go.
func awaitGone(t *testing.T, conn *remote.Conn) {
	t.Helper()
	for s := conn.GetState(); s == connectivity.Ready; s = conn.GetState() {
		conn.WaitForStateChange(t.Context(), s)
	}
}

// heldGrace is a grace that ends when the test says: waiting receives once
// a call begins to wait for the service.
type heldGrace struct {
	waiting chan struct{}
	end     context.CancelFunc
}

// holdGrace makes conn's calls wait for their service until the test ends
// the grace.
func holdGrace(conn *remote.Conn) heldGrace {
	over, end := context.WithCancel(context.Background())
	g := heldGrace{waiting: make(chan struct{}, 1), end: end}
	conn.SetGrace(func(ctx context.Context) (context.Context, context.CancelFunc) {
		wait, cancel := context.WithCancel(ctx)
		stop := context.AfterFunc(over, cancel)
		g.waiting <- struct{}{}
		return wait, func() { stop(); cancel() }
	})
	return g
}

// hanging holds every render until its server stops.
type hanging struct {
	internalv1.UnimplementedRendererServiceServer
	started chan struct{}
}

func (h hanging) Render(ctx context.Context, _ *internalv1.RenderRequest) (*internalv1.RenderResponse, error) {
	close(h.started)
	<-ctx.Done()
	return nil, ctx.Err()
}

// A service that dies with the request in hand is not "unavailable": the
// request may be what killed it, and the error says it went away.
func TestRemoteServiceGoneMidCall(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := hanging{started: make(chan struct{})}
	s := grpc.NewServer()
	internalv1.RegisterRendererServiceServer(s, h)
	go func() { _ = s.Serve(lis) }()
	conn, err := remote.Dial("renderer", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go func() {
		<-h.started
		s.Stop()
	}()
	_, err = remote.NewRenderer(conn).Render(context.Background(), &internalv1.RenderRequest{Url: "http://example.com/"})
	if failure.CodeOf(err) != failure.Internal || !strings.Contains(err.Error(), "renderer at "+lis.Addr().String()+" went away during the call") {
		t.Fatalf("a service stopped mid-call: %v (%v)", err, failure.CodeOf(err))
	}
}
