package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Picking in the CLI's own process: the JSON printed for each format, the
// stderr note of what --max-matches left out, a saved page from standard
// input, and one file a URL with --output-dir.
func TestPickingFlags(t *testing.T) {
	srv := pages(t)
	url := srv.URL + "/article"

	out, errOut, code := run(t, "fetch", "--allow-local", "--select", "td:first-child", "--max-matches", "1", url)
	if code != ExitOK || out != "[\n  \"Anemone\"\n]\n" || !strings.Contains(errOut, "1 more match left out (--max-matches") {
		t.Errorf("--select --max-matches 1: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	out, _, code = run(t, "fetch", "--allow-local", "--format", "json", "--xpath", "count(//li)", url)
	var page struct {
		Title  string `json:"title"`
		Picked struct {
			Value int `json:"value"`
		} `json:"picked"`
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &page) != nil || page.Title == "" || page.Picked.Value != 2 {
		t.Errorf("--format json --xpath: exit %d, %s", code, out)
	}

	out, errOut, code = runStdin(t, articleHTML, "extract", "--url", "https://shore.example/notes", "--format", "text", "--find-text", "crab notes", "-")
	if code != ExitOK || !strings.Contains(out, `"selector": "html > body > article > p:nth-of-type(2) > a"`) || !strings.Contains(out, `"text": "our crab notes"`) {
		t.Errorf("extract --find-text: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	dir := t.TempDir()
	if _, errOut, code := run(t, "fetch", "--allow-local", "--output-dir", dir, "--select", "h1", url, srv.URL+"/a"); code != ExitOK {
		t.Fatalf("--output-dir: exit %d, stderr %q", code, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	if len(files) != 2 {
		t.Fatalf("--output-dir wrote %q, want two .json files", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		var h1 []string
		if err != nil || json.Unmarshal(b, &h1) != nil || len(h1) != 1 {
			t.Errorf("%s holds %q, want a JSON array of one h1", f, b)
		}
	}
}
