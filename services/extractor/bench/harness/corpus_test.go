package harness

import (
	"os"
	"path/filepath"
	"testing"
)

func writeCorpus(t *testing.T, truth string, pages map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "html"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ground-truth.json"), []byte(truth), 0o644); err != nil {
		t.Fatal(err)
	}
	for id, body := range pages {
		if err := os.WriteFile(filepath.Join(dir, "html", id+".html"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadCorpus(t *testing.T) {
	t.Parallel()
	dir := writeCorpus(t, `{"b": {"articleBody": "Second.", "url": "https://example.com/b"}, "a": {"articleBody": "First."}}`,
		map[string]string{"a": "<p>First.</p>", "b": "<p>Second.</p>"})
	pages, err := LoadCorpus(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 2 || pages[0].ID != "a" || pages[1].ID != "b" {
		t.Fatalf("pages = %+v, want a then b", pages)
	}
	if pages[1].URL != "https://example.com/b" || pages[1].Truth != "Second." || string(pages[1].HTML) != "<p>Second.</p>" {
		t.Errorf("page b = %+v", pages[1])
	}
}

func TestLoadCorpusMissingPage(t *testing.T) {
	t.Parallel()
	dir := writeCorpus(t, `{"a": {"articleBody": "First."}}`, nil)
	if _, err := LoadCorpus(dir); err == nil {
		t.Error("want an error for a page without its html file")
	}
}
