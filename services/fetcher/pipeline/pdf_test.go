package pipeline

import (
	"context"
	"testing"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// A browser has nothing to add to a PDF: js=always and a thin PDF (a scan)
// under js=auto are extracted as fetched, never rendered.
func TestPDFsAreNeverRendered(t *testing.T) {
	for _, js := range []distillv1.JsMode{distillv1.JsMode_JS_MODE_AUTO, distillv1.JsMode_JS_MODE_ALWAYS} {
		renders := 0
		f := fetchFunc(func(_ context.Context, r *internalv1.FetcherServiceFetchRequest) (*internalv1.FetcherServiceFetchResponse, error) {
			// Under 10 bytes: the extractor calls it low content.
			return &internalv1.FetcherServiceFetchResponse{FinalUrl: r.GetUrl(), Status: 200, ContentType: "application/pdf", Body: []byte("%PDF-1.7")}, nil
		})
		ex := &charsExtractor{}
		p := New(quiet, f, ex, rendered("rendered viewer", &renders))
		res, err := p.Do(context.Background(), Request{URL: "http://site.test/a.pdf", Options: &distillv1.FetchOptions{Js: js}})
		if err != nil {
			t.Fatal(err)
		}
		if renders != 0 || res.FallbackReason != "" || res.Distilled.GetMarkdown() != "%PDF-1.7" {
			t.Fatalf("js %v: a PDF was rendered (%d renders, reason %q)", js, renders, res.FallbackReason)
		}
		if len(ex.calls) != 1 || ex.calls[0].GetContentType() != "application/pdf" {
			t.Fatalf("js %v: extract calls %v", js, ex.calls)
		}
	}
}
