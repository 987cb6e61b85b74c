// Package remote reaches distill's services over gRPC in cluster mode. Its
// clients have the same methods as the in-process services, so the
// pipeline, the batch workers and the gateway run the same code whichever
// way they are wired. A call waits out a service's restart (up to Grace),
// and fails fast with a clear error once a service has stayed away that
// long: requests never queue behind a service that is down.
package remote

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/grpcserve"
	"distill.dev/services/platform/netpolicy"
)

// Grace is how long a call waits for a service whose connection is not
// ready (a restart, a rolling update) before it fails.
const Grace = 2 * time.Second

// Conn is a connection to one distill service.
type Conn struct {
	*grpc.ClientConn
	// Name says which service it is, for error messages.
	Name string
	Addr string
	// away is set when a call waited a whole Grace for the service in
	// vain; until the connection is ready again, calls do not wait.
	away atomic.Bool
	// grace, when set, replaces Grace: the wait ends with the context it
	// returns (tests decide when).
	grace func(context.Context) (context.Context, context.CancelFunc)
}

// Dial connects lazily to the service name (fetcher, extractor, renderer,
// gateway) at addr. A service that goes away is reconnected to within about
// a second of its return.
func Dial(name, addr string, opts ...grpc.DialOption) (*Conn, error) {
	if addr == "" {
		return nil, fmt.Errorf("%s address is empty", name)
	}
	base := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(grpcserve.MaxMessageBytes), grpc.MaxCallSendMsgSize(grpcserve.MaxMessageBytes)),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: 2 * time.Second,
		}),
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 30 * time.Second, Timeout: 10 * time.Second}),
	}
	cc, err := grpc.NewClient(addr, append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("%s at %s: %w", name, addr, err)
	}
	return &Conn{ClientConn: cc, Name: name, Addr: addr}, nil
}

// Healthy returns nil when the service reports itself ready.
func (c *Conn) Healthy(ctx context.Context) error {
	res, err := healthpb.NewHealthClient(c).Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return fmt.Errorf("%s at %s: %v", c.Name, c.Addr, status.Convert(err).Message())
	}
	if res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("%s at %s is %s", c.Name, c.Addr, res.GetStatus())
	}
	return nil
}

// await returns when the connection is ready, when it has waited Grace
// for it in vain, or at once when an earlier call already did.
func (c *Conn) await(ctx context.Context) {
	s := c.GetState()
	if s == connectivity.Ready {
		c.away.Store(false)
		return
	}
	c.Connect()
	if c.away.Load() {
		return
	}
	wait, cancel := c.graceWait(ctx)
	defer cancel()
	for s != connectivity.Ready {
		if !c.WaitForStateChange(wait, s) {
			if ctx.Err() == nil {
				c.away.Store(true)
			}
			return
		}
		s = c.GetState()
	}
	c.away.Store(false)
}

// graceWait is the context a call waits for the service under: Grace
// from now.
func (c *Conn) graceWait(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.grace != nil {
		return c.grace(ctx)
	}
	return context.WithTimeout(ctx, Grace)
}

// call runs one unary call: it waits out a restarting service, learns
// whether the request reached the service, and turns an error into a
// *failure.Error.
func call[Req, Res any](ctx context.Context, c *Conn, method func(context.Context, Req, ...grpc.CallOption) (Res, error), req Req) (Res, error) {
	c.await(ctx)
	ctx, err := allowlistsOut(ctx)
	if err != nil {
		var zero Res
		return zero, err
	}
	var reached peer.Peer
	res, err := method(ctx, req, grpc.Peer(&reached))
	if err != nil {
		var zero Res
		return zero, c.fail(err, reached.Addr != nil)
	}
	return res, nil
}

// allowlistsOut sends the host allowlists of ctx along, so that the service
// judges every URL it reaches for this call by them too.
func allowlistsOut(ctx context.Context) (context.Context, error) {
	for _, a := range netpolicy.Allowlists(ctx) {
		b, err := a.MarshalText()
		if err != nil {
			return ctx, failure.Wrap(failure.Internal, err, "send allowlist")
		}
		ctx = metadata.AppendToOutgoingContext(ctx, netpolicy.MetadataKey, string(b))
	}
	return ctx, nil
}

// fail turns a call's error into a *failure.Error. An error the service
// returned keeps its code; a service the call never reached is
// Unavailable, one that went away with the request in hand Internal, and
// the message names it.
func (c *Conn) fail(err error, reached bool) error {
	st, ok := status.FromError(err)
	if !ok {
		return failure.FromRemote(err)
	}
	for _, d := range st.Details() {
		if _, ok := d.(*distillv1.Error); ok {
			return failure.FromRemote(err)
		}
	}
	switch st.Code() {
	case codes.Unavailable:
		if reached {
			// The call reached the service, which then went away: the
			// request may be what broke it, and is not worth sending again.
			return failure.New(failure.Internal, "%s at %s went away during the call: %s", c.Name, c.Addr, firstLine(st.Message()))
		}
		return failure.New(failure.Unavailable, "%s at %s is unavailable: %s", c.Name, c.Addr, firstLine(st.Message()))
	case codes.Unimplemented:
		return failure.New(failure.Unavailable, "%s at %s does not serve this call: %s", c.Name, c.Addr, firstLine(st.Message()))
	}
	return failure.FromRemote(err)
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// Fetcher is FetcherService over a connection.
type Fetcher struct{ c *Conn }

// NewFetcher returns the fetcher at c.
func NewFetcher(c *Conn) *Fetcher { return &Fetcher{c} }

// Fetch retrieves one URL.
func (f *Fetcher) Fetch(ctx context.Context, req *internalv1.FetcherServiceFetchRequest) (*internalv1.FetcherServiceFetchResponse, error) {
	return call(ctx, f.c, internalv1.NewFetcherServiceClient(f.c).Fetch, req)
}

// Resource retrieves one URL of any media type.
func (f *Fetcher) Resource(ctx context.Context, req *internalv1.FetcherServiceResourceRequest) (*internalv1.FetcherServiceResourceResponse, error) {
	return call(ctx, f.c, internalv1.NewFetcherServiceClient(f.c).Resource, req)
}

// Robots returns the robots.txt that governs a URL, parsed.
func (f *Fetcher) Robots(ctx context.Context, req *internalv1.FetcherServiceRobotsRequest) (*internalv1.FetcherServiceRobotsResponse, error) {
	return call(ctx, f.c, internalv1.NewFetcherServiceClient(f.c).Robots, req)
}

// Extractor is ExtractorService over a connection.
type Extractor struct{ c *Conn }

// NewExtractor returns the extractor at c.
func NewExtractor(c *Conn) *Extractor { return &Extractor{c} }

// Extract distils one page.
func (e *Extractor) Extract(ctx context.Context, req *internalv1.ExtractRequest) (*internalv1.ExtractResponse, error) {
	return call(ctx, e.c, internalv1.NewExtractorServiceClient(e.c).Extract, req)
}

// Renderer is RendererService over a connection.
type Renderer struct{ c *Conn }

// NewRenderer returns the renderer at c.
func NewRenderer(c *Conn) *Renderer { return &Renderer{c} }

// Render renders one page headless.
func (r *Renderer) Render(ctx context.Context, req *internalv1.RenderRequest) (*internalv1.RenderResponse, error) {
	return call(ctx, r.c, internalv1.NewRendererServiceClient(r.c).Render, req)
}
