package session

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"distill.dev/services/extractor/pdf"
	"distill.dev/services/extractor/pdf/pdftest"
)

// A download_* action that points at a PDF follows to the document's text.
func TestFollowDownloadOfAPDF(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "services", "extractor", "pdf", "testdata", "two-column.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, page("Papers", prose("the papers")+`<p><a href="/files/lattices.pdf">Sparse lattices (PDF)</a></p>`))
	})
	mux.HandleFunc("GET /files/lattices.pdf", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		_, _ = w.Write(doc)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	// PDFium is compiled once per process, on the first PDF; under the race
	// detector that takes longer than a step's deadline, so it is done
	// here, before the session's clock starts.
	warm := pdf.NewEngine(pdf.WithCacheDir(pdftest.CacheDir()))
	if _, err := warm.Read(context.Background(), doc, 0); err != nil {
		t.Fatal(err)
	}
	_ = warm.Close()

	m := newManager(t, Config{})
	v := start(t, m, srv.URL+"/", nil)
	v = follow(t, m, v.GetSessionId(), actionID(t, v, "download", "Sparse lattices"))
	if v.GetCurrentUrl() != srv.URL+"/files/lattices.pdf" || v.GetSnapshot().GetTitle() != "Sparse Lattices in Practice" {
		t.Fatalf("after the download: %s, %q", v.GetCurrentUrl(), v.GetSnapshot().GetTitle())
	}
	md := v.GetSnapshot().GetMarkdown()
	if i, j := strings.Index(md, "LEFTEND"), strings.Index(md, "RIGHTSTART"); i < 0 || j < i {
		t.Errorf("the PDF's columns are missing or out of order:\n%s", md)
	}
	if ops := v.GetOperationLog(); len(ops) != 2 || ops[1].GetOp() != "follow" || ops[1].GetOutcome() != "ok" {
		t.Errorf("operation log = %v", ops)
	}
}
