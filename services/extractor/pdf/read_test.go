package pdf_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"distill.dev/proto/failure"
	"distill.dev/services/extractor/pdf"
	"distill.dev/services/extractor/pdf/pdftest"
)

// engine is shared by the package's tests: compiling PDFium is the slow
// part, and sharing it also has the tests' reads run side by side on one
// engine.
var engine = sync.OnceValue(func() *pdf.Engine { return pdf.NewEngine(pdf.WithCacheDir(pdftest.CacheDir())) })

func TestMain(m *testing.M) {
	code := m.Run()
	_ = engine().Close()
	os.Exit(code)
}

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// An engine given a directory keeps the compiled PDFium there, for the
// processes after it.
func TestCacheDirKeepsTheCompiledEngine(t *testing.T) {
	t.Parallel()
	if _, err := engine().Read(context.Background(), fixture(t, "two-column.pdf"), 0); err != nil {
		t.Fatal(err)
	}
	var files int
	err := filepath.WalkDir(pdftest.CacheDir(), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files++
		}
		return err
	})
	if err != nil || files == 0 {
		t.Errorf("%s holds %d files (%v), want the compiled engine", pdftest.CacheDir(), files, err)
	}
}

func read(t *testing.T, name string) *pdf.Document {
	t.Helper()
	doc, err := engine().Read(context.Background(), fixture(t, name), 0)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return doc
}

func TestTwoColumnsReadLeftThenRight(t *testing.T) {
	t.Parallel()
	doc := read(t, "two-column.pdf")
	if doc.Title != "Sparse Lattices in Practice" || doc.Author != "Ada Example" {
		t.Errorf("title %q, author %q", doc.Title, doc.Author)
	}
	if doc.Pages != 1 {
		t.Errorf("pages %d, want 1", doc.Pages)
	}
	// The fixture writes the right column first, so only the layout can
	// put the left one first.
	order := []string{
		"# Sparse Lattices in Practice",
		"Ada Example, Institute of Examples",
		"## 1 Introduction",
		"LEFTSTART Lattices appear",
		"that matter. LEFTEND",
		"## 2 Method",
		"RIGHTSTART The method",
		"smooth inputs. RIGHTEND",
	}
	at := 0
	for _, want := range order {
		i := strings.Index(doc.Markdown[at:], want)
		if i < 0 {
			t.Fatalf("%q missing or out of order after byte %d in:\n%s", want, at, doc.Markdown)
		}
		at += i + len(want)
	}
	// A paragraph is one block, however many lines it had on the page.
	if !strings.Contains(doc.Markdown, "LEFTSTART Lattices appear wherever a problem is cut into regular cells: images, simulations and the tables behind many measurements.\n\n") {
		t.Errorf("first paragraph not joined into one:\n%s", doc.Markdown)
	}
	if strings.Contains(doc.Text, "#") || !strings.HasPrefix(doc.Text, "Sparse Lattices in Practice\n\n") {
		t.Errorf("plain text has Markdown marks or lost its heading:\n%s", doc.Text)
	}
	if doc.Heading != "Sparse Lattices in Practice" {
		t.Errorf("heading %q", doc.Heading)
	}
}

func TestScanHasNoText(t *testing.T) {
	t.Parallel()
	doc := read(t, "scan.pdf")
	if doc.Pages != 1 || doc.TextChars != 0 || strings.TrimSpace(doc.Markdown) != "" {
		t.Errorf("pages %d, chars %d, markdown %q; want 1 page and no text", doc.Pages, doc.TextChars, doc.Markdown)
	}
	if doc.Title != "" || doc.Author != "" {
		t.Errorf("title %q, author %q; the scan has no metadata", doc.Title, doc.Author)
	}
}

func TestGreekTextAndMetadataIntact(t *testing.T) {
	t.Parallel()
	doc := read(t, "greek.pdf")
	if doc.Title != "Η γλώσσα των αριθμών" || doc.Author != "Ελένη Παπαδοπούλου" {
		t.Errorf("title %q, author %q", doc.Title, doc.Author)
	}
	want := "# Η γλώσσα των αριθμών\n\nΟι αριθμοί είναι η κοινή γλώσσα της επιστήμης. Κάθε μέτρηση γράφεται με αυτούς, και κάθε απόδειξη στηρίζεται σε αυτούς."
	if doc.Markdown != want {
		t.Errorf("markdown\n%q\nwant\n%q", doc.Markdown, want)
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body []byte
		want error
		msg  string
	}{
		{name: "encrypted", body: fixture(t, "encrypted.pdf"), want: pdf.ErrEncrypted, msg: "pdf: document is encrypted: it needs a password to open"},
		{name: "truncated", body: fixture(t, "truncated.pdf"), want: pdf.ErrBroken, msg: "pdf: document is damaged or not a PDF"},
		{name: "header only", body: []byte("%PDF-1.7\n"), want: pdf.ErrBroken, msg: "pdf: document is damaged or not a PDF"},
		{name: "not a pdf", body: []byte("<html><body>hello</body></html>"), want: pdf.ErrBroken, msg: "pdf: document is damaged or not a PDF"},
		{name: "empty", body: nil, want: pdf.ErrBroken, msg: "pdf: document is damaged or not a PDF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := engine().Read(context.Background(), tt.body, 0)
			if !errors.Is(err, tt.want) || !errors.Is(err, &failure.Error{Code: failure.UnsupportedContent}) {
				t.Fatalf("err %v; want %v as UnsupportedContent", err, tt.want)
			}
			if err.Error() != tt.msg {
				t.Errorf("message %q, want %q", err.Error(), tt.msg)
			}
		})
	}
}

func TestReadStopsWithItsContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := engine().Read(ctx, fixture(t, "two-column.pdf"), 0)
	if failure.CodeOf(err) != failure.Canceled {
		t.Errorf("err %v (%v); want Canceled", err, failure.CodeOf(err))
	}
}

func TestReadStopsAtItsTimeout(t *testing.T) {
	t.Parallel()
	e := pdf.NewEngine(pdf.WithTimeout(time.Nanosecond), pdf.WithCacheDir(pdftest.CacheDir()))
	t.Cleanup(func() { _ = e.Close() })
	_, err := e.Read(context.Background(), fixture(t, "two-column.pdf"), 0)
	if failure.CodeOf(err) != failure.Timeout {
		t.Errorf("err %v (%v); want Timeout", err, failure.CodeOf(err))
	}
}

func TestClosedEngineRefuses(t *testing.T) {
	t.Parallel()
	e := pdf.NewEngine(pdf.WithCacheDir(pdftest.CacheDir()))
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Read(context.Background(), fixture(t, "two-column.pdf"), 0); err == nil {
		t.Fatal("a closed engine read a document")
	}
	if err := e.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
}

func TestPagesWithoutHeadingsGetASectionEach(t *testing.T) {
	t.Parallel()
	doc := read(t, "pages.pdf")
	if doc.Pages != 3 || doc.PagesRead != 3 || doc.Heading != "" {
		t.Fatalf("pages %d, read %d, heading %q", doc.Pages, doc.PagesRead, doc.Heading)
	}
	for i := 1; i <= 3; i++ {
		want := fmt.Sprintf("## Page %d\n\nPAGE%dSTART", i, i)
		if !strings.Contains(doc.Markdown, want) {
			t.Errorf("no %q in:\n%s", want, doc.Markdown)
		}
	}
	if strings.Index(doc.Markdown, "PAGE2START") < strings.Index(doc.Markdown, "PAGE1END") {
		t.Errorf("pages out of order:\n%s", doc.Markdown)
	}
}

func TestReadStopsAtItsTextLimit(t *testing.T) {
	t.Parallel()
	doc, err := engine().Read(context.Background(), fixture(t, "pages.pdf"), 10)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Pages != 3 || doc.PagesRead != 1 || strings.Contains(doc.Markdown, "PAGE2START") {
		t.Errorf("pages %d, read %d; markdown:\n%s", doc.Pages, doc.PagesRead, doc.Markdown)
	}
}

// A document that does not fit in a worker's memory is refused as too
// large, and the engine goes on reading the next one.
func TestReadWithinItsMemory(t *testing.T) {
	t.Parallel()
	e := pdf.NewEngine(pdf.WithMemoryLimit(24<<20), pdf.WithWorkers(1), pdf.WithCacheDir(pdftest.CacheDir()))
	t.Cleanup(func() { _ = e.Close() })
	doc := fixture(t, "two-column.pdf")
	// Readers skip what follows a PDF's end; the bytes still have to be
	// held while it is read.
	big := append(slices.Clip(doc), bytes.Repeat([]byte("%pad\n"), 12<<20)...)
	_, err := e.Read(context.Background(), big, 0)
	if !errors.Is(err, pdf.ErrMemory) || failure.CodeOf(err) != failure.TooLarge {
		t.Fatalf("err %v, want TooLarge and ErrMemory", err)
	}
	if err.Error() != "pdf over the 24 MiB memory limit: document needs more memory than one document may use" {
		t.Errorf("message %q", err.Error())
	}
	if _, err := e.Read(context.Background(), doc, 0); err != nil {
		t.Errorf("the next document: %v", err)
	}
}
