// Package api serves DistillService, distill's public gRPC API, over a
// Backend that distills pages (in one process or across a cluster).
package api

import (
	"context"
	"log/slog"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/pipeline"
)

// MaxBatchURLs bounds one FetchBatch call.
const MaxBatchURLs = 10000

// Backend distills pages.
type Backend interface {
	Fetch(ctx context.Context, rawURL string, opts *distillv1.FetchOptions) (*pipeline.Result, error)
	Batch(ctx context.Context, urls []string, opts *distillv1.FetchOptions, deliver func(*distillv1.FetchJobResult)) error
}

// Server implements DistillService. Sessions and the cache are served by
// later parts of the gateway; until then those calls answer Unimplemented.
type Server struct {
	distillv1.UnimplementedDistillServiceServer
	logger  *slog.Logger
	backend Backend
}

// New returns a Server over backend.
func New(logger *slog.Logger, backend Backend) *Server {
	return &Server{logger: logger, backend: backend}
}

// Fetch distills one page.
func (s *Server) Fetch(ctx context.Context, req *distillv1.FetchRequest) (*distillv1.FetchResponse, error) {
	if req.GetUrl() == "" {
		return nil, status.Error(codes.InvalidArgument, "url is required")
	}
	res, err := s.backend.Fetch(ctx, req.GetUrl(), req.GetOptions())
	if err != nil {
		return nil, err
	}
	return &distillv1.FetchResponse{Distilled: res.Distilled}, nil
}

// Observe distills a page with its action tree and diagnostics.
func (s *Server) Observe(ctx context.Context, req *distillv1.ObserveRequest) (*distillv1.ObserveResponse, error) {
	if req.GetUrl() == "" {
		return nil, status.Error(codes.InvalidArgument, "url is required")
	}
	res, err := s.backend.Fetch(ctx, req.GetUrl(), ObserveOptions(req.GetOptions()))
	if err != nil {
		return nil, err
	}
	return &distillv1.ObserveResponse{Distilled: res.Distilled}, nil
}

// ObserveOptions are opts with what observing always asks for: the action
// tree, diagnostics and JSON.
func ObserveOptions(opts *distillv1.FetchOptions) *distillv1.FetchOptions {
	o := &distillv1.FetchOptions{}
	if opts != nil {
		o = proto.CloneOf(opts)
	}
	o.ExtractActions = true
	o.Diagnostics = true
	o.Format = distillv1.Format_FORMAT_JSON
	return o
}

// FetchBatch distills many pages and streams each result as it is ready.
func (s *Server) FetchBatch(req *distillv1.FetchBatchRequest, stream distillv1.DistillService_FetchBatchServer) error {
	urls := req.GetUrls()
	switch {
	case len(urls) == 0:
		return status.Error(codes.InvalidArgument, "urls is required")
	case len(urls) > MaxBatchURLs:
		return status.Errorf(codes.InvalidArgument, "a batch holds at most %d urls, got %d", MaxBatchURLs, len(urls))
	}
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	var sendErr error
	err := s.backend.Batch(ctx, urls, req.GetOptions(), func(r *distillv1.FetchJobResult) {
		if sendErr != nil {
			return
		}
		out := &distillv1.FetchBatchResponse{Index: r.GetIndex(), Url: r.GetUrl()}
		if e := r.GetError(); e != nil {
			out.Outcome = &distillv1.FetchBatchResponse_Error{Error: e}
		} else {
			out.Outcome = &distillv1.FetchBatchResponse_Result{Result: r.GetResult()}
		}
		if sendErr = stream.Send(out); sendErr != nil {
			// The client is gone: stop queueing the rest.
			cancel()
		}
	})
	if sendErr != nil {
		return sendErr
	}
	return err
}
