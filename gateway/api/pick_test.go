package api_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// Picking options that cannot run are refused by every call with
// InvalidArgument, and no request reaches the site; good ones come back
// in Distilled.picked.
func TestPickingOverGRPC(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<html><body><main><ul><li><a href="/a">A</a></li><li><a href="/b">B</a></li></ul><p>Two links and some words.</p></main></body></html>`)
	}))
	t.Cleanup(srv.Close)
	c := distillv1.NewDistillServiceClient(serve(t))
	ctx := context.Background()

	bad := &distillv1.FetchOptions{AllowLocal: true, Select: "a", FindText: "A"}
	_, err := c.Fetch(ctx, &distillv1.FetchRequest{Url: srv.URL, Options: bad})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "one picker at a time") {
		t.Errorf("Fetch: %v, want InvalidArgument", err)
	}
	_, err = c.Observe(ctx, &distillv1.ObserveRequest{Url: srv.URL, Options: bad})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("Observe: %v, want InvalidArgument", err)
	}
	stream, err := c.FetchBatch(ctx, &distillv1.FetchBatchRequest{Urls: []string{srv.URL}, Options: bad})
	if err == nil {
		_, err = stream.Recv()
	}
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("FetchBatch: %v, want InvalidArgument", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the site got %d requests, want none", n)
	}

	res, err := c.Fetch(ctx, &distillv1.FetchRequest{Url: srv.URL, Options: &distillv1.FetchOptions{AllowLocal: true, Js: distillv1.JsMode_JS_MODE_OFF, Select: "li a::attr(href)"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.GetDistilled().GetPicked().GetValues(); strings.Join(got, " ") != srv.URL+"/a "+srv.URL+"/b" {
		t.Errorf("picked %q", got)
	}
}
