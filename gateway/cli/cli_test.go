package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"distill.dev/services/platform/envflag"
	"distill.dev/services/platform/version"

	"golang.org/x/text/encoding/japanese"
)

var update = flag.Bool("update", false, "rewrite golden files")

const articleHTML = `<!doctype html>
<html lang="en"><head><title>Field Notes on Tidepools | The Shore</title>
<meta name="author" content="Mara Quill">
<meta name="description" content="What lives in the rock pools at low tide.">
</head><body>
<nav><a href="/">Home</a> <a href="/about">About</a> <a href="/subscribe">Subscribe</a></nav>
<article>
<h1>Field Notes on Tidepools</h1>
<p>At low tide the rock shelf opens into dozens of small pools, each one a world of its own.
Anemones close when the water leaves and open again as it returns.</p>
<h2>What we counted</h2>
<table><thead><tr><th>Species</th><th>Count</th></tr></thead>
<tbody><tr><td>Anemone</td><td>41</td></tr><tr><td>Hermit crab</td><td>17</td></tr></tbody></table>
<p>Hermit crabs traded shells twice while we watched; see <a href="/crabs">our crab notes</a>.</p>
<ul><li>Bring a notebook.</li><li>Step only on bare rock.</li></ul>
</article>
<footer>© The Shore. All rights reserved.</footer>
</body></html>`

func pages(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/article", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, articleHTML)
	})
	for _, name := range []string{"a", "b", "c"} {
		mux.HandleFunc("/"+name, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, "<html><head><title>Page %s</title></head><body><main><h1>Page %s</h1><p>This is page %s, with enough words in it to count as content for a reader.</p></main></body></html>", name, name, name)
		})
	}
	mux.HandleFunc("/missing", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, "<html><head><title>Not found</title></head><body><main><h1>Not found</h1><p>There is no page at this address on our site.</p></main></body></html>")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = Run(context.Background(), args, testEnv(t), &out, &errOut)
	return out.String(), errOut.String(), code
}

// testCaches holds each test's own fetch cache directory, by test.
var testCaches sync.Map

// testEnv is the process's environment for a run of test t, but for the
// fetch cache: unless t set its own, t gets a cache of its own, shared by
// its runs only. Tests reuse loopback ports, so in a cache shared by the
// package a page one test cached would answer for another test's server
// on the same port.
func testEnv(t *testing.T) *envflag.Env {
	dir, ok := testCaches.Load(t)
	if !ok {
		dir, _ = testCaches.LoadOrStore(t, t.TempDir())
	}
	return envflag.New(func(key string) (string, bool) {
		v, ok := os.LookupEnv(key)
		if key == string(envflag.CacheDir) && (!ok || v == packageCacheDir) {
			return dir.(string), true
		}
		return v, ok
	})
}

func TestFetchMarkdown(t *testing.T) {
	srv := pages(t)
	out, errOut, code := run(t, "fetch", "--allow-local", srv.URL+"/article")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"Field Notes on Tidepools", "At low tide the rock shelf", "| Species | Count |", "[our crab notes](" + srv.URL + "/crabs)", "- Bring a notebook."} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	for _, boilerplate := range []string{"Subscribe", "All rights reserved"} {
		if strings.Contains(out, boilerplate) {
			t.Errorf("markdown keeps boilerplate %q:\n%s", boilerplate, out)
		}
	}
	if errOut != "" {
		t.Errorf("stderr not empty: %q", errOut)
	}
}

func TestFetchText(t *testing.T) {
	srv := pages(t)
	out, errOut, code := run(t, "fetch", "--allow-local", "--format", "text", srv.URL+"/article")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "At low tide the rock shelf") {
		t.Errorf("text lacks the content:\n%s", out)
	}
	for _, syntax := range []string{"](", "## ", "| --- |"} {
		if strings.Contains(out, syntax) {
			t.Errorf("text keeps Markdown syntax %q:\n%s", syntax, out)
		}
	}
}

// TestFetchJSONGolden pins the JSON a user gets for a known page with every
// optional part asked for (the server's address is replaced by a fixed one).
func TestFetchJSONGolden(t *testing.T) {
	srv := pages(t)
	out, errOut, code := run(t, "fetch", "--allow-local", "--format", "json", "--stats", "--diagnostics", "--links", "--tables", srv.URL+"/article")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if errOut != "" {
		t.Errorf("with --format json, stats and diagnostics belong in the JSON, not stderr: %q", errOut)
	}
	got := []byte(strings.ReplaceAll(out, srv.URL, "http://pages.test"))
	path := filepath.Join("testdata", "article.json")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("JSON differs from %s (rerun with -update after review):\n%s", path, got)
	}
}

func TestFetchJSONLeavesOutWhatWasNotAskedFor(t *testing.T) {
	srv := pages(t)
	out, _, code := run(t, "fetch", "--allow-local", "--format", "json", srv.URL+"/article")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	for _, absent := range []string{"stats", "links", "tables", "actions", "diagnostics"} {
		if _, ok := m[absent]; ok {
			t.Errorf("%q present without being asked for", absent)
		}
	}
	for _, present := range []string{"final_url", "status", "title", "markdown", "byline", "excerpt"} {
		if _, ok := m[present]; !ok {
			t.Errorf("%q missing", present)
		}
	}
}

func TestFetchStatsAndDiagnosticsGoToStderr(t *testing.T) {
	srv := pages(t)
	out, errOut, code := run(t, "fetch", "--allow-local", "--stats", "--diagnostics", srv.URL+"/article")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(errOut, "stats: ") || !strings.Contains(errOut, "diagnostics: ") {
		t.Errorf("stderr lacks stats and diagnostics: %q", errOut)
	}
	if strings.Contains(out, "stats:") || strings.Contains(out, "diagnostics:") {
		t.Errorf("stdout carries stats or diagnostics: %q", out)
	}
}

func TestFetchBatchJSONInInputOrder(t *testing.T) {
	srv := pages(t)
	urls := []string{srv.URL + "/c", srv.URL + "/a", "http://10.1.2.3/private", srv.URL + "/missing", srv.URL + "/b"}
	out, errOut, code := run(t, append([]string{"fetch", "--allow-local", "--format", "json", "--concurrency", "2"}, urls...)...)
	if code != ExitFailure {
		t.Errorf("exit %d, want %d: one URL failed", code, ExitFailure)
	}
	items := batchItems(t, out, urls)
	if items[2].OK || !strings.Contains(items[2].Error, "blocked") {
		t.Errorf("private address: %+v, want a blocked error", items[2])
	}
	if !items[3].OK || items[3].Result["status"] != float64(404) {
		t.Errorf("404 page: %+v, want ok with status 404", items[3])
	}
	if !items[0].OK || !strings.Contains(items[0].Result["markdown"].(string), "This is page c") {
		t.Errorf("first item is not page c: %+v", items[0])
	}
	// One line for the failure, one noting the 404 page (which stays a
	// success without --fail-on-http-error).
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "10.1.2.3") || lines[1] != "distill: "+srv.URL+"/missing answered HTTP 404 Not Found" {
		t.Errorf("stderr = %q, want a line naming the failed URL and one noting the 404", errOut)
	}
}

func TestFetchBatchMarkdownSections(t *testing.T) {
	srv := pages(t)
	out, errOut, code := run(t, "fetch", "--allow-local", srv.URL+"/b", srv.URL+"/a")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	ib, ia := strings.Index(out, "==> "+srv.URL+"/b <=="), strings.Index(out, "==> "+srv.URL+"/a <==")
	if ib < 0 || ia < 0 || ib > ia {
		t.Fatalf("sections missing or out of order:\n%s", out)
	}
	if !strings.Contains(out[ib:ia], "This is page b") || !strings.Contains(out[ia:], "This is page a") {
		t.Errorf("section bodies do not match their URLs:\n%s", out)
	}
}

func TestFetchRefusesLoopbackUnlessAllowed(t *testing.T) {
	srv := pages(t)
	out, errOut, code := run(t, "fetch", srv.URL+"/article")
	if code != ExitFailure {
		t.Fatalf("exit %d, want %d", code, ExitFailure)
	}
	if out != "" {
		t.Errorf("stdout = %q, want nothing", out)
	}
	if !strings.Contains(errOut, "blocked") || !strings.Contains(errOut, "127.0.0.1") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("stderr = %q, want one line naming the blocked loopback address", errOut)
	}
}

func TestFetchTruncatesToTokenBudget(t *testing.T) {
	srv := pages(t)
	full, _, _ := run(t, "fetch", "--allow-local", srv.URL+"/article")
	out, errOut, code := run(t, "fetch", "--allow-local", "--max-output-tokens", "20", "--format", "json", "--diagnostics", srv.URL+"/article")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var d struct {
		Markdown    string `json:"markdown"`
		Diagnostics struct {
			Truncated    bool  `json:"truncated"`
			OutputTokens int64 `json:"output_tokens"`
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatal(err)
	}
	if !d.Diagnostics.Truncated || d.Diagnostics.OutputTokens > 20 || len(d.Markdown) >= len(full) {
		t.Errorf("not truncated to 20 tokens: truncated=%v tokens=%d len=%d (full %d)", d.Diagnostics.Truncated, d.Diagnostics.OutputTokens, len(d.Markdown), len(full))
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no url", []string{"fetch"}, "requires at least 1 arg"},
		{"unknown flag", []string{"fetch", "--bogus", "http://x/"}, "unknown flag: --bogus"},
		{"bad format", []string{"fetch", "--format", "xml", "http://x/"}, "must be one of markdown, text, json"},
		{"bad js", []string{"fetch", "--js", "sometimes", "http://x/"}, "must be one of off, auto, always"},
		{"zero timeout", []string{"fetch", "--timeout", "0", "http://x/"}, "--timeout must be between"},
		{"negative retries", []string{"fetch", "--max-retries", "-1", "http://x/"}, "--max-retries must be between"},
		{"not a number", []string{"fetch", "--max-bytes", "lots", "http://x/"}, "invalid argument"},
		{"unknown command", []string{"fetc"}, "unknown command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := run(t, tt.args...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d", code, ExitUsage)
			}
			if !strings.Contains(errOut, tt.want) {
				t.Errorf("stderr = %q, want it to mention %q", errOut, tt.want)
			}
			if out != "" {
				t.Errorf("stdout = %q, want nothing", out)
			}
		})
	}
}

func TestInvalidURLIsAFailureNotAUsageError(t *testing.T) {
	_, errOut, code := run(t, "fetch", "ftp://example.com/file")
	if code != ExitFailure {
		t.Fatalf("exit %d, want %d", code, ExitFailure)
	}
	if !strings.Contains(errOut, "ftp://example.com/file") {
		t.Errorf("stderr = %q, want it to name the URL", errOut)
	}
}

func TestVersion(t *testing.T) {
	in := version.Get()
	for _, args := range [][]string{{"version"}, {"--version"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			out, errOut, code := run(t, args...)
			if code != ExitOK {
				t.Fatalf("exit %d, stderr %q", code, errOut)
			}
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			want := []string{"distill " + version.String(), "commit  " + in.Commit, "built   " + in.Date, "go      " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH}
			if !slices.Equal(lines, want) {
				t.Fatalf("printed\n%s\nwant\n%s", out, strings.Join(want, "\n"))
			}
		})
	}
}

// TestFetchDecodesTheDeclaredCharset serves a Shift_JIS page whose charset
// is declared only in the HTTP header.
func TestFetchDecodesTheDeclaredCharset(t *testing.T) {
	page, err := japanese.ShiftJIS.NewEncoder().String("<html><head><title>潮だまりの観察</title></head><body><main><h1>潮だまりの観察</h1><p>干潮になると岩場に小さな潮だまりがたくさん現れます。イソギンチャクやヤドカリが暮らしています。</p></main></body></html>")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=Shift_JIS")
		fmt.Fprint(w, page)
	}))
	defer srv.Close()
	out, errOut, code := run(t, "fetch", "--allow-local", srv.URL)
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "# 潮だまりの観察") || !strings.Contains(out, "ヤドカリが暮らしています") {
		t.Errorf("page not decoded from Shift_JIS:\n%s", out)
	}
}

// batchItem is one entry of a batch's JSON output.
type batchItem struct {
	URL    string         `json:"url"`
	OK     bool           `json:"ok"`
	Result map[string]any `json:"result"`
	Error  string         `json:"error"`
}

// batchItems decodes a batch's JSON output and checks it has one item per
// input, in input order.
func batchItems(t *testing.T, out string, inputs []string) []batchItem {
	t.Helper()
	var items []batchItem
	if err := json.Unmarshal([]byte(out), &items); err != nil {
		t.Fatalf("not a JSON array: %v\n%s", err, out)
	}
	if len(items) != len(inputs) {
		t.Fatalf("%d items, want %d", len(items), len(inputs))
	}
	for i, it := range items {
		if it.URL != inputs[i] {
			t.Errorf("item %d url = %q, want %q", i, it.URL, inputs[i])
		}
	}
	return items
}
