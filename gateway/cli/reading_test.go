package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestExtractReadingFlags runs the reading flags on a saved page, as a
// user would: the output each prints, and the one-line refusals.
func TestExtractReadingFlags(t *testing.T) {
	t.Parallel()
	path := writeFile(t, t.TempDir(), "tidepools.html", articleHTML)
	base := "https://shore.example/notes/tidepools"
	tests := []struct {
		name    string
		args    []string
		present []string
		absent  []string
	}{
		{"query", []string{"--query", "how many hermit crabs were counted?"},
			[]string{"## What we counted", "| Hermit crab | 17 |"}, []string{"Bring a notebook", "At low tide"}},
		{"citations", []string{"--citations"},
			[]string{"our crab notes[^1]", "## Links\n\n[^1]: https://shore.example/crabs"}, []string{"](https://"}},
		{"llm", []string{"--format", "llm"},
			[]string{"# Field Notes on Tidepools\nURL: " + base + "\nAuthor: Mara Quill", "our crab notes[^1]"}, []string{"](https://"}},
		{"html", []string{"--format", "html"},
			[]string{"<h1>Field Notes on Tidepools</h1>", "<td>Hermit crab</td>", `<a href="https://shore.example/crabs">`}, []string{"<nav", "All rights reserved"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, errOut, code := run(t, append(append([]string{"extract", "--url", base}, tt.args...), path)...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, s := range tt.present {
				if !strings.Contains(out, s) {
					t.Errorf("missing %q in:\n%s", s, out)
				}
			}
			for _, s := range tt.absent {
				if strings.Contains(out, s) {
					t.Errorf("has %q:\n%s", s, out)
				}
			}
		})
	}
}

func TestExtractChunksAsJSONLines(t *testing.T) {
	t.Parallel()
	path := writeFile(t, t.TempDir(), "tidepools.html", articleHTML)
	out, errOut, code := run(t, "extract", "--url", "https://shore.example/t", "--chunk", "32", "--chunk-overlap", "8", path)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 2 {
		t.Fatalf("%d chunk lines:\n%s", len(lines), out)
	}
	for i, l := range lines {
		var c struct {
			URL         string   `json:"url"`
			Index       *int     `json:"index"`
			HeadingPath []string `json:"heading_path"`
			Tokens      int      `json:"tokens"`
			Text        string   `json:"text"`
		}
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatalf("line %d is not a chunk: %v\n%s", i, err, l)
		}
		if c.URL != "https://shore.example/t" || c.Index == nil || *c.Index != i || c.HeadingPath == nil || c.Tokens > 32 || c.Text == "" {
			t.Errorf("line %d = %s", i, l)
		}
	}

	// With --format json the chunks are the page's "chunks".
	out, errOut, code = run(t, "extract", "--url", "https://shore.example/t", "--format", "json", "--chunk", "32", "--chunk-overlap", "8", path)
	var page struct {
		Chunks []json.RawMessage `json:"chunks"`
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &page) != nil || len(page.Chunks) != len(lines) {
		t.Errorf("--format json --chunk: exit %d, %d chunks (want %d): %s", code, len(page.Chunks), len(lines), errOut)
	}
}

func TestReadingFlagsRefused(t *testing.T) {
	t.Parallel()
	path := writeFile(t, t.TempDir(), "tidepools.html", articleHTML)
	for _, tt := range []struct {
		args []string
		flag string
	}{
		{[]string{"--chunk", "4"}, "--chunk"},
		{[]string{"--chunk", "64", "--chunk-overlap", "40"}, "--chunk-overlap"},
		{[]string{"--citations", "--format", "text"}, "--citations"},
		{[]string{"--query", "crabs", "--format", "html"}, "--query"},
		{[]string{"--format", "pdf"}, "--format"},
	} {
		_, errOut, code := run(t, append(append([]string{"extract"}, tt.args...), path)...)
		msg := strings.TrimSpace(errOut)
		if code != ExitUsage || !strings.Contains(msg, tt.flag) {
			t.Errorf("extract %v: exit %d, stderr %q; want exit %d naming %s", tt.args, code, errOut, ExitUsage, tt.flag)
		}
	}
}

// TestCitationsCountAcrossABatch prints two saved pages citing the same
// URL: it keeps one number in the whole output.
func TestCitationsCountAcrossABatch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := writeFile(t, dir, "a.html", articleHTML)
	b := writeFile(t, dir, "b.html", `<html><head><title>More</title></head><body><article><h1>More notes</h1>
<p>Read <a href="https://shore.example/about">about us</a> and <a href="https://shore.example/crabs">the crab notes</a> again, with enough words to count.</p></article></body></html>`)
	out, errOut, code := run(t, "extract", "--url", "https://shore.example/t", "--citations", a, b)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// The first page cites the crab notes as 1; the second cites about
	// as 2 and the crab notes as 1 again.
	if !strings.Contains(out, "about us[^2] and the crab notes[^1]") || !strings.Contains(out, "[^2]: https://shore.example/about\n[^1]: https://shore.example/crabs") {
		t.Errorf("batch with citations:\n%s", out)
	}
}
