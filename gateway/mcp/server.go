// Package mcp serves distill's tools to Model Context Protocol clients, over
// stdio or streamable HTTP. Every tool calls the same Service methods as
// the gRPC API and the CLI; this package only decodes a tool's arguments
// into the request, and the answer or error into the tool result.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/crawl"
)

// Service is what the tools call: api.Server, distill's one implementation.
type Service interface {
	Fetch(ctx context.Context, req *distillv1.FetchRequest) (*distillv1.FetchResponse, error)
	Observe(ctx context.Context, req *distillv1.ObserveRequest) (*distillv1.ObserveResponse, error)
	Batch(ctx context.Context, req *distillv1.FetchBatchRequest, deliver func(*distillv1.FetchBatchResponse)) error
	SessionStart(ctx context.Context, req *distillv1.SessionStartRequest) (*distillv1.SessionStartResponse, error)
	SessionObserve(ctx context.Context, req *distillv1.SessionObserveRequest) (*distillv1.SessionObserveResponse, error)
	SessionFollow(ctx context.Context, req *distillv1.SessionFollowRequest) (*distillv1.SessionFollowResponse, error)
	SessionSubmitForm(ctx context.Context, req *distillv1.SessionSubmitFormRequest) (*distillv1.SessionSubmitFormResponse, error)
	SessionClose(ctx context.Context, req *distillv1.SessionCloseRequest) (*distillv1.SessionCloseResponse, error)
	SessionAct(ctx context.Context, req *distillv1.SessionActRequest) (*distillv1.SessionActResponse, error)
	MapSite(ctx context.Context, req *distillv1.MapRequest, deliver func(*distillv1.MapResponse) error) error
	CrawlSite(ctx context.Context, req *distillv1.CrawlRequest, journal crawl.Journal, deliver func(*distillv1.CrawlResponse) error) error
}

const instructions = "distill reads web pages for you. fetch_url returns a page as clean Markdown " +
	"(or text, or JSON); fetch_urls reads several pages at once; observe_url lists what can be done " +
	"on a page (links, forms, buttons, downloads); map lists a site's URLs without reading them; crawl reads a " +
	"site by following its links, best first toward a question when given one; select picks values, records or " +
	"elements out of a page as JSON; screenshot returns a picture of a rendered page. The reading tools take " +
	"steps (click, type, scroll, ...) to run in the page first. For multi-step browsing with cookies, open a " +
	"session with session_start, act with session_follow, session_submit_form, session_act and session_observe, " +
	"and end it with session_close."

// Server is distill's MCP server.
type Server struct {
	logger *slog.Logger
	// sdk serves stdio, and HTTP outside host mode; in host mode it is the
	// "default" actor's.
	sdk *mcpsdk.Server
	// host, in host mode, has a server per actor, which a request's token
	// names.
	host *hostServers
	// tokenRequired refuses requests without a token even when the
	// operator's is empty: host mode serving only the policy's tokens.
	tokenRequired bool
}

// RequireToken refuses, over HTTP, every request without a token the
// server knows, even with no operator token: host mode then serves the
// policy's tokens only.
func (s *Server) RequireToken() { s.tokenRequired = true }

// New returns a server whose tools call svc; version is announced to
// clients.
func New(logger *slog.Logger, svc Service, version string) *Server {
	sdk := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "distill", Version: version}, &mcpsdk.ServerOptions{
		Instructions: instructions,
		Logger:       logger,
	})
	for _, t := range tools(svc) {
		sdk.AddTool(t.spec(), t.handler(logger))
	}
	return &Server{logger: logger, sdk: sdk}
}

// ServeStdio serves one client over in and out until the client hangs up
// or ctx ends; neither is an error.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	// A read from a terminal or pipe cannot be interrupted, so in is copied
	// through a pipe the session can close: stopping never waits for input.
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(pw, in)
		pw.CloseWithError(err)
	}()
	ss, err := s.sdk.Connect(ctx, &mcpsdk.IOTransport{Reader: pr, Writer: nopCloser{out}}, nil)
	if err != nil {
		return fmt.Errorf("mcp stdio: %w", err)
	}
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case err = <-ended:
	case <-ctx.Done():
		ss.Close()
		<-ended
		s.logger.Info("mcp stopped")
		return nil
	}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, mcpsdk.ErrConnectionClosed) {
		return fmt.Errorf("mcp stdio: %w", err)
	}
	return nil
}

// nopCloser leaves the writer open: closing stdout is the process's call.
type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
