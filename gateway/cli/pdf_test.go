package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"distill.dev/services/extractor/pdf"
	"distill.dev/services/extractor/pdf/pdftest"
)

// pdfs serves the extractor's PDF fixtures the two ways servers send them:
// as application/pdf, and as a download of no particular type.
func pdfs(t *testing.T) *httptest.Server {
	t.Helper()
	dir := filepath.Join("..", "..", "services", "extractor", "pdf", "testdata")
	serve := func(name, contentType string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", contentType)
			_, _ = w.Write(b)
		}
	}
	// PDFium is compiled once per process, on the first PDF; under the race
	// detector that can take longer than a fetch's budget, so it is done
	// here, before any fetch's clock starts.
	b, err := os.ReadFile(filepath.Join(dir, "two-column.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	warm := pdf.NewEngine(pdf.WithCacheDir(pdftest.CacheDir()))
	if _, err := warm.Read(context.Background(), b, 0); err != nil {
		t.Fatal(err)
	}
	_ = warm.Close()

	mux := http.NewServeMux()
	mux.HandleFunc("/x.pdf", serve("two-column.pdf", "application/pdf"))
	mux.HandleFunc("/download", serve("two-column.pdf", "application/octet-stream"))
	mux.HandleFunc("/locked.pdf", serve("encrypted.pdf", "application/pdf"))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestFetchPDF(t *testing.T) {
	srv := pdfs(t)
	for _, path := range []string{"/x.pdf", "/download"} {
		t.Run(path, func(t *testing.T) {
			out, errOut, code := run(t, "--pdf-cache-dir", pdftest.CacheDir(), "fetch", "--allow-local", "--format", "json", "--diagnostics", srv.URL+path)
			if code != ExitOK {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			var d struct {
				Title       string `json:"title"`
				Byline      string `json:"byline"`
				Markdown    string `json:"markdown"`
				Diagnostics struct {
					PageCount  *int32 `json:"page_count"`
					LowContent bool   `json:"low_content"`
				} `json:"diagnostics"`
			}
			if err := json.Unmarshal([]byte(out), &d); err != nil {
				t.Fatal(err)
			}
			if d.Title != "Sparse Lattices in Practice" || d.Byline != "Ada Example" {
				t.Errorf("title %q, byline %q", d.Title, d.Byline)
			}
			left, right := strings.Index(d.Markdown, "## 1 Introduction"), strings.Index(d.Markdown, "## 2 Method")
			if left < 0 || right < left {
				t.Errorf("columns missing or out of order:\n%s", d.Markdown)
			}
			if d.Diagnostics.PageCount == nil || *d.Diagnostics.PageCount != 1 || d.Diagnostics.LowContent {
				t.Errorf("diagnostics %+v, want page_count 1 and content", d.Diagnostics)
			}
		})
	}
}

func TestFetchEncryptedPDFFailsInOneLine(t *testing.T) {
	srv := pdfs(t)
	out, errOut, code := run(t, "--pdf-cache-dir", pdftest.CacheDir(), "fetch", "--allow-local", srv.URL+"/locked.pdf")
	if code != ExitFailure || out != "" {
		t.Fatalf("exit %d, stdout %q; want a failure", code, out)
	}
	if strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, "encrypted") {
		t.Errorf("stderr %q, want one line saying the PDF is encrypted", errOut)
	}
}
