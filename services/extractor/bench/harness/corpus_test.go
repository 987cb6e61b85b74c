package harness

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wcxbFixture is a WCXB-shaped repository of three pages of our own:
// two articles (one in German) and a forum thread.
const wcxbFixture = "testdata/wcxb"

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
	c, err := LoadCorpus(dir)
	if err != nil {
		t.Fatal(err)
	}
	if c.Layout != Scrapinghub || c.Dir != dir {
		t.Errorf("corpus %s in layout %s, want %s in scrapinghub", c.Dir, c.Layout, dir)
	}
	pages := c.Pages
	if len(pages) != 2 || pages[0].ID != "a" || pages[1].ID != "b" {
		t.Fatalf("pages = %+v, want a then b", pages)
	}
	if pages[1].URL != "https://example.com/b" || pages[1].Truth != "Second." || string(pages[1].HTML) != "<p>Second.</p>" || pages[1].Type != "" {
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

func TestLoadCorpusWCXB(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{wcxbFixture, filepath.Join(wcxbFixture, "dev")} {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			c, err := LoadCorpus(dir)
			if err != nil {
				t.Fatal(err)
			}
			if c.Layout != WCXB || c.Dir != filepath.Join(wcxbFixture, "dev") {
				t.Errorf("corpus %s in layout %s, want the dev split in WCXB", c.Dir, c.Layout)
			}
			var got []string
			for _, p := range c.Pages {
				got = append(got, p.ID+":"+p.Type)
			}
			if want := "0001:article 0002:article 0003:forum"; strings.Join(got, " ") != want {
				t.Errorf("pages = %s, want %s", strings.Join(got, " "), want)
			}
			p := c.Pages[1]
			if p.URL != "https://radwerk.example/blog/rahmengroesse" || !strings.HasPrefix(p.Truth, "Welche Rahmengröße passt?\n\n") {
				t.Errorf("page 0002: url %q, truth %.30q", p.URL, p.Truth)
			}
			// The HTML is the page unzipped.
			if !strings.HasPrefix(string(p.HTML), "<!doctype html>") || !strings.Contains(string(p.HTML), "Schrittlänge") {
				t.Errorf("page 0002 html starts %.40q", p.HTML)
			}
		})
	}
}

// copyDir copies the fixture's dev split to dir/dev.
func copyDev(t *testing.T, dir string) {
	t.Helper()
	if err := os.CopyFS(filepath.Join(dir, "dev"), os.DirFS(filepath.Join(wcxbFixture, "dev"))); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadCorpusWCXBRootReadsDevOnly(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	copyDev(t, root)
	// A held-out split that would fail to load if it were read at all.
	writeFile(t, filepath.Join(root, "test", "ground-truth", "9999.json"), "not json")
	writeFile(t, filepath.Join(root, "test", "html", "9999.html.gz"), "not gzip")
	c, err := LoadCorpus(root)
	if err != nil {
		t.Fatal(err)
	}
	if c.Dir != filepath.Join(root, "dev") || len(c.Pages) != 3 {
		t.Errorf("loaded %d pages from %s, want the 3 of %s", len(c.Pages), c.Dir, filepath.Join(root, "dev"))
	}
}

func TestLoadCorpusWCXBBadInput(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(t *testing.T, split string)
		want  string
	}{
		{"page missing", func(t *testing.T, split string) {
			writeFile(t, filepath.Join(split, "ground-truth", "0004.json"), `{"ground_truth": {"main_content": "x"}}`)
		}, "0004.html.gz"},
		{"html not gzipped", func(t *testing.T, split string) {
			writeFile(t, filepath.Join(split, "ground-truth", "0004.json"), `{"ground_truth": {"main_content": "x"}}`)
			writeFile(t, filepath.Join(split, "html", "0004.html.gz"), "<html><body><p>not compressed</p></body></html>")
		}, "0004.html.gz: gzip: invalid header"},
		{"truth not json", func(t *testing.T, split string) {
			writeFile(t, filepath.Join(split, "ground-truth", "0004.json"), `{"ground_truth": `)
		}, "0004.json: unexpected end of JSON input"},
		{"page type of the wrong kind", func(t *testing.T, split string) {
			writeFile(t, filepath.Join(split, "ground-truth", "0004.json"), `{"_internal": {"page_type": 7}}`)
		}, "0004.json: page_type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := t.TempDir()
			copyDev(t, root)
			tt.setup(t, filepath.Join(root, "dev"))
			_, err := LoadCorpus(root)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %v, want one line with %q", err, tt.want)
			}
		})
	}
}

func TestLoadCorpusNotACorpus(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "html", "a.html"), "<p>a</p>")
	if _, err := LoadCorpus(dir); !errors.Is(err, ErrNotCorpus) {
		t.Errorf("err = %v, want ErrNotCorpus", err)
	}
}

func TestPageType(t *testing.T) {
	t.Parallel()
	tests := []struct{ raw, want string }{
		{`{"primary": "forum", "confidence": "verified"}`, "forum"},
		{`{"primary": "category"}`, "collection"},
		{`{"primary": "recipe"}`, "other"},
		{`{"confidence": "inferred"}`, "article"},
		{`"listing"`, "listing"},
		{``, "article"},
		{`null`, "article"},
	}
	for _, tt := range tests {
		got, err := pageType([]byte(tt.raw))
		if err != nil || got != tt.want {
			t.Errorf("pageType(%s) = %q, %v; want %q", tt.raw, got, err, tt.want)
		}
	}
}
