package extract

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/extractor/pdf"
	"distill.dev/services/extractor/pdf/pdftest"
	"distill.dev/services/extractor/tokens"
)

// pdfExtractor is shared by the PDF tests, so that PDFium is compiled once
// for the package; it closes when the tests are done.
var pdfExtractor = sync.OnceValue(func() *Extractor {
	return New(slog.New(slog.NewTextHandler(io.Discard, nil)), WithPDFCacheDir(pdftest.CacheDir()))
})

func pdfFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "pdf", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func extractPDF(t *testing.T, body []byte, contentType string, opts *distillv1.FetchOptions) (*internalv1.ExtractResponse, error) {
	t.Helper()
	if opts == nil {
		opts = &distillv1.FetchOptions{}
	}
	return pdfExtractor().Extract(context.Background(), &internalv1.ExtractRequest{
		Html: body, Url: "https://papers.example.org/files/lattices.pdf", Status: 200,
		ContentType: contentType, Options: opts,
	})
}

func TestPDF(t *testing.T) {
	t.Parallel()
	all := &distillv1.FetchOptions{Diagnostics: true, Stats: true, ExtractLinks: true, ExtractTables: true}
	tests := []struct {
		name        string
		fixture     string
		contentType string
		wantTitle   string
		wantByline  string
		wantIn      []string
		lowContent  string
	}{
		{
			name: "two columns", fixture: "two-column.pdf", contentType: "application/pdf",
			wantTitle: "Sparse Lattices in Practice", wantByline: "Ada Example",
			wantIn: []string{"# Sparse Lattices in Practice", "## 1 Introduction", "LEFTEND\n\n## 2 Method\n\nRIGHTSTART"},
		},
		{
			name: "known by its magic", fixture: "two-column.pdf", contentType: "application/octet-stream",
			wantTitle: "Sparse Lattices in Practice", wantByline: "Ada Example",
			wantIn: []string{"## 2 Method"},
		},
		{
			name: "no type at all", fixture: "two-column.pdf", contentType: "",
			wantTitle: "Sparse Lattices in Practice", wantByline: "Ada Example",
			wantIn: []string{"## 1 Introduction"},
		},
		{
			name: "greek", fixture: "greek.pdf", contentType: "application/pdf; charset=binary",
			wantTitle: "Η γλώσσα των αριθμών", wantByline: "Ελένη Παπαδοπούλου",
			wantIn: []string{"Οι αριθμοί είναι η κοινή γλώσσα της επιστήμης."},
		},
		{
			// Neither metadata nor a heading: the URL names it.
			name: "scan without a text layer", fixture: "scan.pdf", contentType: "application/pdf",
			wantTitle: "lattices.pdf", lowContent: reasonNoTextLayer,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := pdfFixture(t, tt.fixture)
			resp, err := extractPDF(t, body, tt.contentType, all)
			if err != nil {
				t.Fatal(err)
			}
			d := resp.GetDistilled()
			if d.GetTitle() != tt.wantTitle || d.GetByline() != tt.wantByline {
				t.Errorf("title %q, byline %q; want %q, %q", d.GetTitle(), d.GetByline(), tt.wantTitle, tt.wantByline)
			}
			for _, want := range tt.wantIn {
				if !strings.Contains(d.GetMarkdown(), want) {
					t.Errorf("markdown lacks %q:\n%s", want, d.GetMarkdown())
				}
			}
			diag := d.GetDiagnostics()
			if diag.PageCount == nil || diag.GetPageCount() != 1 {
				t.Errorf("page_count %v, want 1", diag.PageCount)
			}
			if diag.GetProfile() != profileFull || diag.GetRawBytes() != int64(len(body)) {
				t.Errorf("profile %q, raw_bytes %d", diag.GetProfile(), diag.GetRawBytes())
			}
			if diag.GetLowContent() != (tt.lowContent != "") || resp.GetLowContentReason() != tt.lowContent {
				t.Errorf("low_content %t (%q), want %q", diag.GetLowContent(), resp.GetLowContentReason(), tt.lowContent)
			}
			if d.GetLinks() == nil || d.GetTables() == nil {
				t.Error("links and tables asked for but nil")
			}
			if tt.lowContent == "" && d.GetStats().GetRawTokens() == 0 {
				t.Error("raw tokens not counted from the document's text")
			}
		})
	}
}

func TestPDFWithinTheTokenBudget(t *testing.T) {
	t.Parallel()
	const budget = 40
	resp, err := extractPDF(t, pdfFixture(t, "two-column.pdf"), "application/pdf",
		&distillv1.FetchOptions{MaxOutputTokens: new(int64(budget)), Diagnostics: true})
	if err != nil {
		t.Fatal(err)
	}
	d := resp.GetDistilled()
	if n := tokens.Count(d.GetMarkdown()); n > budget {
		t.Errorf("%d tokens over a budget of %d:\n%s", n, budget, d.GetMarkdown())
	}
	if !d.GetDiagnostics().GetTruncated() || !strings.HasPrefix(d.GetMarkdown(), "# Sparse Lattices in Practice") {
		t.Errorf("truncated %t; markdown:\n%s", d.GetDiagnostics().GetTruncated(), d.GetMarkdown())
	}
}

func TestPDFWithinTheByteBudget(t *testing.T) {
	t.Parallel()
	body := pdfFixture(t, "two-column.pdf")
	_, err := extractPDF(t, body, "application/pdf", &distillv1.FetchOptions{MaxBytes: new(int64(len(body) - 1))})
	if failure.CodeOf(err) != failure.TooLarge || !strings.Contains(err.Error(), "max_bytes") {
		t.Errorf("err %v, want TooLarge naming max_bytes", err)
	}
}

func TestPDFRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body []byte
		want error
	}{
		{name: "encrypted", body: pdfFixture(t, "encrypted.pdf"), want: pdf.ErrEncrypted},
		{name: "truncated", body: pdfFixture(t, "truncated.pdf"), want: pdf.ErrBroken},
		{name: "header only", body: []byte("%PDF-1.7"), want: pdf.ErrBroken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := extractPDF(t, tt.body, "application/pdf", nil)
			if failure.CodeOf(err) != failure.UnsupportedContent || !errors.Is(err, tt.want) {
				t.Fatalf("err %v, want UnsupportedContent and %v", err, tt.want)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "pdf: ") {
				t.Errorf("message %q is not one line starting pdf:", msg)
			}
		})
	}
}

// HTML diagnostics carry no page count: the field is a PDF's alone.
func TestHTMLHasNoPageCount(t *testing.T) {
	t.Parallel()
	d := run(t, htmlReq(articlePage, &distillv1.FetchOptions{Diagnostics: true}))
	if d.GetDiagnostics().PageCount != nil {
		t.Errorf("page_count %d on an HTML page", d.GetDiagnostics().GetPageCount())
	}
}

// Pages past what the budget can hold are not read, and the output says
// it was cut even where the budget itself did not cut it.
func TestPDFPagesPastTheBudgetAreNotRead(t *testing.T) {
	t.Parallel()
	resp, err := extractPDF(t, pdfFixture(t, "pages.pdf"), "application/pdf",
		&distillv1.FetchOptions{MaxOutputTokens: new(int64(2)), Diagnostics: true})
	if err != nil {
		t.Fatal(err)
	}
	d := resp.GetDistilled()
	if d.GetDiagnostics().GetPageCount() != 3 || !d.GetDiagnostics().GetTruncated() {
		t.Errorf("page_count %d, truncated %t; want 3 and true", d.GetDiagnostics().GetPageCount(), d.GetDiagnostics().GetTruncated())
	}
	resp, err = extractPDF(t, pdfFixture(t, "pages.pdf"), "application/pdf", &distillv1.FetchOptions{Diagnostics: true})
	if err != nil {
		t.Fatal(err)
	}
	if md := resp.GetDistilled().GetMarkdown(); !strings.Contains(md, "## Page 3\n\nPAGE3START") || resp.GetDistilled().GetDiagnostics().GetTruncated() {
		t.Errorf("without a budget every page is read:\n%s", md)
	}
}
