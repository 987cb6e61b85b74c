package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// longArticle opens with an article and runs on far past a small
// --max-bytes, ending with a marker that only a whole read would reach.
func longArticle() string {
	var b strings.Builder
	b.WriteString(`<html><head><title>A Long Read</title></head><body><article><h1>A Long Read</h1>
<p>The opening paragraph says what the piece is about, at length enough to count as the content of an article for a reader.</p>`)
	for i := range 400 {
		fmt.Fprintf(&b, "<p>Paragraph %d goes on about the same subject, adding detail after detail for whoever reads this far.</p>\n", i)
	}
	b.WriteString("<p>END-OF-THE-PAGE</p></article></body></html>")
	return b.String()
}

// A body longer than --max-bytes is distilled from its first max-bytes, as
// RustBrowser 1.x did, with a note on stderr; it is not a failure.
func TestFetchCapsTheBodyAtMaxBytes(t *testing.T) {
	page := longArticle()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, page)
	}))
	t.Cleanup(srv.Close)

	t.Run("markdown", func(t *testing.T) {
		out, errOut, code := run(t, "fetch", "--allow-local", "--no-cache", "--max-bytes", "4096", srv.URL)
		if code != ExitOK {
			t.Fatalf("exit %d, stderr %q; want 0", code, errOut)
		}
		if !strings.Contains(out, "The opening paragraph") || strings.Contains(out, "END-OF-THE-PAGE") {
			t.Errorf("want the beginning of the page and not its end:\n%s", out)
		}
		if strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, srv.URL) || !strings.Contains(errOut, "--max-bytes") || !strings.Contains(errOut, "4096") {
			t.Errorf("stderr = %q, want one note naming the URL and the cap", errOut)
		}
	})
	t.Run("json without diagnostics", func(t *testing.T) {
		out, errOut, code := run(t, "fetch", "--allow-local", "--no-cache", "--max-bytes", "4096", "--format", "json", srv.URL)
		if code != ExitOK || !strings.Contains(errOut, "--max-bytes") {
			t.Fatalf("exit %d, stderr %q; want 0 and a note", code, errOut)
		}
		var d map[string]any
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		if _, ok := d["diagnostics"]; ok {
			t.Errorf("diagnostics present though not asked for: %v", d["diagnostics"])
		}
	})
	t.Run("json with diagnostics", func(t *testing.T) {
		out, errOut, code := run(t, "fetch", "--allow-local", "--no-cache", "--max-bytes", "4096", "--format", "json", "--diagnostics", srv.URL)
		if code != ExitOK {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		var d struct {
			Diagnostics map[string]any `json:"diagnostics"`
		}
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		if d.Diagnostics["truncated_body"] != true || d.Diagnostics["raw_bytes"] != float64(4096) {
			t.Errorf("diagnostics = %v, want truncated_body true and raw_bytes 4096", d.Diagnostics)
		}
	})
	t.Run("under the cap", func(t *testing.T) {
		out, errOut, code := run(t, "fetch", "--allow-local", "--no-cache", "--format", "json", "--diagnostics", srv.URL)
		if code != ExitOK || errOut != "" || !strings.Contains(out, "END-OF-THE-PAGE") || strings.Contains(out, "truncated_body") {
			t.Errorf("exit %d, stderr %q; want the whole page, no note and no truncated_body:\n%s", code, errOut, out)
		}
	})
}

func TestExtractCapsTheFileAtMaxBytes(t *testing.T) {
	file := writeFile(t, t.TempDir(), "long.html", longArticle())
	out, errOut, code := run(t, "extract", "--max-bytes", "4096", file)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q; want 0", code, errOut)
	}
	if !strings.Contains(out, "The opening paragraph") || strings.Contains(out, "END-OF-THE-PAGE") {
		t.Errorf("want the beginning of the file and not its end:\n%s", out)
	}
	if strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, "long.html") || !strings.Contains(errOut, "4096") {
		t.Errorf("stderr = %q, want one note naming the file and the cap", errOut)
	}
}
