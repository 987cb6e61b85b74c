package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/extract"
	"distill.dev/services/extractor/pdf"
	"distill.dev/services/extractor/pdf/pdftest"
)

// A PDF's page count and a PDF's refusal cross gRPC intact, from a server
// whose extractor the caller closes.
func TestPDFOverGRPC(t *testing.T) {
	t.Parallel()
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("..", "pdf", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	doc, locked := read("two-column.pdf"), read("encrypted.pdf")
	// PDFium is compiled once per process, on the first PDF; under the race
	// detector that takes longer than a call's deadline below.
	warm := pdf.NewEngine(pdf.WithCacheDir(pdftest.CacheDir()))
	if _, err := warm.Read(context.Background(), doc, 0); err != nil {
		t.Fatal(err)
	}
	_ = warm.Close()

	ex := extract.New(slog.New(slog.NewTextHandler(io.Discard, nil)), extract.WithPDFCacheDir(pdftest.CacheDir()))
	lis := bufconn.Listen(1 << 20)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- NewWith(slog.New(slog.NewTextHandler(io.Discard, nil)), ex).Serve(ctx, lis) }()
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		if err := ex.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	client := internalv1.NewExtractorServiceClient(conn)
	callCtx, callCancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer callCancel()

	resp, err := client.Extract(callCtx, &internalv1.ExtractRequest{
		Html: doc, Url: "https://example.com/paper.pdf", Status: 200, ContentType: "application/pdf",
		Options: &distillv1.FetchOptions{Diagnostics: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	d := resp.GetDistilled()
	if d.GetTitle() != "Sparse Lattices in Practice" || d.GetDiagnostics().PageCount == nil || d.GetDiagnostics().GetPageCount() != 1 {
		t.Errorf("title %q, diagnostics %v", d.GetTitle(), d.GetDiagnostics())
	}

	_, err = client.Extract(callCtx, &internalv1.ExtractRequest{Html: locked, Url: "https://example.com/locked.pdf", ContentType: "application/pdf"})
	err = failure.FromRemote(err)
	if !errors.Is(err, &failure.Error{Code: failure.UnsupportedContent}) || !strings.Contains(err.Error(), "encrypted") {
		t.Errorf("err %v, want UnsupportedContent saying encrypted", err)
	}
}
