package server

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/extract"
)

// TestGRPCMatchesInProcess checks that a remote extractor and the
// in-process one, as the single binary uses it, give identical results for
// the extractor's fixture pages under every option.
func TestGRPCMatchesInProcess(t *testing.T) {
	t.Parallel()
	var pages []string
	for _, pkg := range []string{"extract", "actions", "tables"} {
		found, err := filepath.Glob(filepath.Join("..", pkg, "testdata", "*.html"))
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, found...)
	}
	if len(pages) == 0 {
		t.Fatal("no fixture pages")
	}
	budget := int64(60)
	optionSets := map[string]*distillv1.FetchOptions{
		"defaults": nil,
		"everything": {
			Stats: true, Diagnostics: true, ExtractLinks: true, LinksFull: true,
			ExtractTables: true, ExtractActions: true, Format: distillv1.Format_FORMAT_TEXT,
		},
		"full profile truncated": {Profile: distillv1.Profile_PROFILE_FULL, MaxOutputTokens: &budget, Diagnostics: true},
		"metadata":               {Profile: distillv1.Profile_PROFILE_METADATA},
		"selector":               {Selector: "p, h1, h2", ExtractLinks: true},
	}
	remote := internalv1.NewExtractorServiceClient(dial(t))
	local := extract.New(slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, page := range pages {
		html, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for name, opts := range optionSets {
			t.Run(filepath.Base(page)+"/"+name, func(t *testing.T) {
				t.Parallel()
				req := &internalv1.ExtractRequest{Html: html, Url: "https://example.com/dir/page", Status: 200, Options: opts}
				want, err := local.Extract(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				got, err := remote.Extract(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				if !proto.Equal(got, want) {
					t.Errorf("gRPC result differs from in-process:\n got %v\nwant %v", got, want)
				}
			})
		}
	}
}
