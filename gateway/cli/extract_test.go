package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"distill.dev/services/platform/envflag"
)

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func runStdin(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRoot(envflag.FromOS(), &out, &errOut)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(args)
	code = exitCode(root.ExecuteContext(context.Background()), &errOut)
	return out.String(), errOut.String(), code
}

func TestExtractFile(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "tidepools.html", articleHTML)
	out, errOut, code := run(t, "extract", path)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "At low tide the rock shelf") || strings.Contains(out, "All rights reserved") {
		t.Errorf("markdown:\n%s", out)
	}
	// Without --url the base is the file itself, so relative links are not
	// http(s) and are kept as text only.
	if strings.Contains(out, "](/crabs)") || strings.Contains(out, "file://") {
		t.Errorf("relative link leaked as a non-http URL:\n%s", out)
	}
}

func TestExtractResolvesLinksAgainstURL(t *testing.T) {
	dir := t.TempDir()
	path := writeFile(t, dir, "tidepools.html", articleHTML)
	out, errOut, code := run(t, "extract", "--url", "https://shore.example/notes/tidepools", "--format", "json", "--links", path)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var d struct {
		FinalURL string                  `json:"final_url"`
		Markdown string                  `json:"markdown"`
		Links    []struct{ Href string } `json:"links"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if d.FinalURL != "https://shore.example/notes/tidepools" {
		t.Errorf("final_url = %q", d.FinalURL)
	}
	if len(d.Links) != 1 || d.Links[0].Href != "https://shore.example/crabs" {
		t.Errorf("links = %+v, want the crab notes resolved against --url", d.Links)
	}
}

func TestExtractStdin(t *testing.T) {
	out, errOut, code := runStdin(t, `<main><p>From a pipe, with <a href="page2">a link</a> in it.</p></main>`, "extract", "--url", "https://pipe.example/dir/", "-")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "[a link](https://pipe.example/dir/page2)") {
		t.Errorf("markdown:\n%s", out)
	}
}

func TestExtractBatchInInputOrder(t *testing.T) {
	dir := t.TempDir()
	a := writeFile(t, dir, "a.html", "<main><h1>Alpha</h1><p>The first saved page of the archive.</p></main>")
	b := writeFile(t, dir, "b.html", "<main><h1>Beta</h1><p>The second saved page of the archive.</p></main>")
	notes := writeFile(t, dir, "notes.txt", "plain notes, kept as they are")
	missing := filepath.Join(dir, "missing.html")
	files := []string{b, missing, a, notes}
	out, errOut, code := run(t, append([]string{"extract", "--format", "json"}, files...)...)
	if code != ExitFailure {
		t.Errorf("exit %d, want %d for the missing file", code, ExitFailure)
	}
	items := batchItems(t, out, files)
	if !strings.Contains(items[0].Result["markdown"].(string), "Beta") || !strings.Contains(items[2].Result["markdown"].(string), "Alpha") {
		t.Errorf("results do not match their files: %+v", items)
	}
	if items[1].OK || !strings.Contains(items[1].Error, "missing.html") {
		t.Errorf("missing file: %+v", items[1])
	}
	if !items[3].OK || !strings.Contains(items[3].Result["markdown"].(string), "plain notes, kept as they are") {
		t.Errorf("text file: %+v", items[3])
	}
	if strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "missing.html") {
		t.Errorf("stderr = %q, want one line for the missing file", errOut)
	}
}

func TestExtractErrors(t *testing.T) {
	dir := t.TempDir()
	big := writeFile(t, dir, "big.html", "<p>"+strings.Repeat("x", 2048)+"</p>")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"a directory", []string{"extract", dir}, ExitFailure, "is a directory"},
		{"relative --url", []string{"extract", "--url", "/just/a/path", big}, ExitUsage, "not an absolute URL"},
		{"ftp --url", []string{"extract", "--url", "ftp://x/", big}, ExitUsage, `scheme "ftp"`},
		{"stdin twice", []string{"extract", "-", "-"}, ExitUsage, "only once"},
		{"no file", []string{"extract"}, ExitUsage, "requires at least 1 arg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := run(t, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q", code, errOut, tt.code, tt.want)
			}
		})
	}
}
