package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base32"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"distill.dev/gateway/internal/localcluster"
	"github.com/nlnwa/gowarc/v3"
)

// The WARC files distill writes are read back by webrecorder's warcio
// (testdata/warcio), a reader nobody here wrote. Those tests need node and
// npm, and are skipped in short mode; `make warc-reader` installs the
// reader's pinned packages, and the tests run `npm ci` themselves when
// node_modules is missing.

const warcioDir = "testdata/warcio"

var warcioOnce = sync.OnceValue(func() error { return localcluster.NPMInstall(warcioDir) })

// warcioRecord is what read.mjs reports of a record.
type warcioRecord struct {
	Type          string            `json:"type"`
	ID            string            `json:"id"`
	Target        string            `json:"target"`
	ConcurrentTo  string            `json:"concurrentTo"`
	WarcinfoID    string            `json:"warcinfoID"`
	Truncated     string            `json:"truncated"`
	IP            string            `json:"ip"`
	BlockDigest   string            `json:"blockDigest"`
	PayloadDigest string            `json:"payloadDigest"`
	BlockSHA1     string            `json:"blockSha1"`
	PayloadSHA1   string            `json:"payloadSha1"`
	Status        int               `json:"status"`
	Method        string            `json:"method"`
	HTTPHeaders   map[string]string `json:"httpHeaders"`
	Text          string            `json:"text"`
}

// readWithWarcio reads path with warcio, and checks every record's
// digests against the SHA-1 of the block and payload warcio read.
func readWithWarcio(t *testing.T, path string) []warcioRecord {
	t.Helper()
	if testing.Short() {
		t.Skip("reads the WARC file with warcio under Node: make test runs it, make test-short does not")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not installed: install nodejs and npm (.ci/run does), then run make warc-reader")
	}
	if err := warcioOnce(); err != nil {
		t.Fatal(err)
	}
	// A bound on a hung reader, not a synchronisation.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "read.mjs", path)
	cmd.Dir = warcioDir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("warcio: %v\n%s", err, stderr.String())
	}
	var recs []warcioRecord
	if err := json.Unmarshal(stdout.Bytes(), &recs); err != nil {
		t.Fatalf("warcio's report: %v\n%s", err, stdout.String())
	}
	for _, r := range recs {
		if got := sha1Hex(t, r.BlockDigest); got != r.BlockSHA1 {
			t.Errorf("%s %s: WARC-Block-Digest %s is not the block warcio read (sha1 %s)", r.Type, r.Target, r.BlockDigest, r.BlockSHA1)
		}
		if r.Type == "warcinfo" {
			continue
		}
		if got := sha1Hex(t, r.PayloadDigest); got != r.PayloadSHA1 {
			t.Errorf("%s %s: WARC-Payload-Digest %s is not the payload warcio read (sha1 %s)", r.Type, r.Target, r.PayloadDigest, r.PayloadSHA1)
		}
	}
	return recs
}

// sha1Hex turns a "sha1:BASE32" digest into hex.
func sha1Hex(t *testing.T, digest string) string {
	t.Helper()
	v, ok := strings.CutPrefix(digest, "sha1:")
	if !ok {
		t.Errorf("digest %q is not SHA-1", digest)
		return ""
	}
	b, err := base32.StdEncoding.DecodeString(v)
	if err != nil {
		t.Errorf("digest %q: %v", digest, err)
		return ""
	}
	return hex.EncodeToString(b)
}

const warcArticle = "<html><head><title>Tide pools</title></head><body><main><h1>Tide pools</h1>" +
	"<p>At low tide the rock shelf opens into dozens of small pools, each a world of its own.</p></main></body></html>"

// archiveSite serves what a WARC must keep: robots.txt naming a sitemap, a
// gzip-encoded page, a redirect, a page longer than the tests' max_bytes,
// an error page.
func archiveSite(t *testing.T) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nAllow: /\nSitemap: %s/sitemap.xml\n", srv.URL)
		case "/sitemap.xml":
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprintf(w, `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/zipped</loc></url><url><loc>%s/long</loc></url></urlset>`, srv.URL, srv.URL)
		case "/zipped":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			io.WriteString(zw, warcArticle)
			zw.Close()
		case "/old":
			http.Redirect(w, r, "/zipped?from=old", http.StatusMovedPermanently)
		case "/long":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><body><main><h1>Long</h1><p>"+strings.Repeat("sand ", 2000)+"</p></main></body></html>")
		default:
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, "<html><body><main><h1>Not here</h1><p>Nothing lives at this address.</p></main></body></html>")
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestWARCReadBackByWarcio(t *testing.T) {
	srv := archiveSite(t)
	path := filepath.Join(t.TempDir(), "site.warc.gz")
	const maxBytes = 1000
	_, errOut, code := run(t, "fetch", "--allow-local", "--no-cache", "--respect-robots", "--js", "off", "--max-bytes", fmt.Sprint(maxBytes),
		"--warc", path, srv.URL+"/old", srv.URL+"/long", srv.URL+"/missing")
	if code != ExitOK {
		t.Fatalf("fetch: exit %d, stderr %q", code, errOut)
	}
	// A second run appends: the map reads robots.txt and the sitemap.
	if _, errOut, code := run(t, "map", "--allow-local", "--no-map-crawl", "--warc", path, srv.URL+"/"); code != ExitOK {
		t.Fatalf("map: exit %d, stderr %q", code, errOut)
	}

	recs := readWithWarcio(t, path)
	var infos []warcioRecord
	responses := map[string]warcioRecord{}
	requests := map[string]warcioRecord{}
	var order []string
	for _, r := range recs {
		switch r.Type {
		case "warcinfo":
			infos = append(infos, r)
		case "request":
			requests[r.ID] = r
		case "response":
			responses[r.ID] = r
			order = append(order, strings.TrimPrefix(r.Target, srv.URL)+fmt.Sprintf(" %d", r.Status))
		default:
			t.Errorf("unexpected %s record", r.Type)
		}
	}
	if len(infos) != 2 || !strings.Contains(infos[0].Text, "decoded") || !strings.Contains(infos[0].Text, "distill fetch") ||
		!strings.Contains(infos[1].Text, "distill map") {
		t.Fatalf("want a warcinfo for each run, saying bodies are decoded: %+v", infos)
	}
	if len(requests) != len(responses) {
		t.Errorf("%d requests, %d responses", len(requests), len(responses))
	}
	// Each run reads robots.txt once (the fetch respects it, the map reads
	// its Sitemap lines); the map reads its start page too.
	slices.Sort(order)
	want := []string{"/ 404", "/long 200", "/missing 404", "/old 301", "/robots.txt 200", "/robots.txt 200", "/sitemap.xml 200", "/zipped?from=old 200"}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Errorf("responses recorded: %q\nwant %q", order, want)
	}
	for _, resp := range responses {
		req, ok := requests[resp.ConcurrentTo]
		switch {
		case !ok:
			t.Errorf("response %s names no request (%s)", resp.Target, resp.ConcurrentTo)
			continue
		case req.ConcurrentTo != resp.ID, req.Target != resp.Target:
			t.Errorf("request %s and response %s are not one exchange", req.Target, resp.Target)
		case req.Method != http.MethodGet, resp.IP != "127.0.0.1":
			t.Errorf("%s: method %q, IP %q", resp.Target, req.Method, resp.IP)
		}
		if resp.WarcinfoID != infos[0].ID && resp.WarcinfoID != infos[1].ID {
			t.Errorf("%s names warcinfo %s, which is not in the file", resp.Target, resp.WarcinfoID)
		}
		switch strings.TrimPrefix(resp.Target, srv.URL) {
		case "/zipped?from=old":
			// Stored decoded: warcio finds no coding to undo.
			if resp.Text != warcArticle || resp.HTTPHeaders["content-encoding"] != "" || resp.HTTPHeaders["x-archive-orig-content-encoding"] != "gzip" {
				t.Errorf("the gzipped page: %q, headers %v", resp.Text, resp.HTTPHeaders)
			}
		case "/old":
			if resp.HTTPHeaders["location"] != "/zipped?from=old" {
				t.Errorf("the redirect: headers %v", resp.HTTPHeaders)
			}
		case "/long":
			if resp.Truncated != "length" || len(resp.Text) != maxBytes || !strings.HasPrefix(resp.Text, "<html><body><main><h1>Long</h1><p>sand sand") {
				t.Errorf("the long page: WARC-Truncated %q, %d bytes", resp.Truncated, len(resp.Text))
			}
		case "/sitemap.xml":
			if !strings.Contains(resp.Text, srv.URL+"/zipped</loc>") || resp.WarcinfoID != infos[1].ID {
				t.Errorf("the sitemap, of the map's run: %q, warcinfo %s", resp.Text, resp.WarcinfoID)
			}
		case "/robots.txt":
			if !strings.Contains(resp.Text, "Sitemap: "+srv.URL+"/sitemap.xml") {
				t.Errorf("robots.txt: %q", resp.Text)
			}
		}
		if resp.Truncated != "" && !strings.HasSuffix(resp.Target, "/long") {
			t.Errorf("%s is marked truncated (%s)", resp.Target, resp.Truncated)
		}
	}
}

// readWithGowarc reads path with strict validation (digests, lengths) and
// returns the responses' targets.
func readWithGowarc(t *testing.T, path string) []string {
	t.Helper()
	r, err := gowarc.NewWarcFileReader(path, 0, gowarc.WithStrictValidation())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var targets []string
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return targets
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.WarcRecord.Type() == gowarc.Response {
			targets = append(targets, rec.WarcRecord.WarcHeader().Get(gowarc.WarcTargetURI))
		}
		rec.Close()
	}
}

func TestWARCRefusals(t *testing.T) {
	srv := archiveSite(t)
	dir := t.TempDir()
	torn := filepath.Join(dir, "torn.warc")
	if err := os.WriteFile(torn, []byte("WARC/1.1\r\nWARC-Type: warcinfo\r\nContent-Length: 500\r\n\r\nformat: WA"), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "fresh.warc")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"js always", []string{"fetch", "--allow-local", "--js", "always", "--warc", fresh, srv.URL + "/long"}, "--warc cannot be used with --js always"},
		{"fetch through a gateway", []string{"fetch", "--server", "127.0.0.1:1", "--warc", fresh, srv.URL + "/long"}, "--warc cannot be used with --server"},
		{"map through a gateway", []string{"map", "--server", "127.0.0.1:1", "--warc", fresh, srv.URL + "/"}, "--warc cannot be used with --server"},
		{"crawl through a gateway", []string{"crawl", "--server", "127.0.0.1:1", "--warc", fresh, srv.URL + "/"}, "--warc cannot be used with --server"},
		{"crawl rendering every page", []string{"crawl", "--allow-local", "--js", "always", "--warc", fresh, srv.URL + "/"}, "--warc cannot be used with --js always"},
		{"a torn file", []string{"fetch", "--allow-local", "--warc", torn, srv.URL + "/long"}, "ends inside a record"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errOut, code := run(t, tc.args...)
			if code != ExitUsage || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, ExitUsage, tc.want)
			}
		})
	}
	if _, err := os.Stat(fresh); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused run created %s", fresh)
	}
	if got, _ := os.ReadFile(torn); !bytes.HasSuffix(got, []byte("format: WA")) {
		t.Errorf("the torn file was written to")
	}
}

// TestWARCKeepsOnlyTheFetchersExchangesOfARenderedPage renders an app
// shell (js auto): Chromium's own requests are no HTTP exchange of the
// fetcher's, and the file keeps only the fetch.
func TestWARCKeepsOnlyTheFetchersExchangesOfARenderedPage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, appShell)
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "render.warc")
	_, errOut, code := run(t, "fetch", "--allow-local", "--no-cache", "--diagnostics", "--warc", path, srv.URL+"/shell")
	if code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if !strings.Contains(errOut, "used_headless=true") {
		t.Fatalf("the page was not rendered: %q", errOut)
	}
	if got := readWithGowarc(t, path); fmt.Sprint(got) != fmt.Sprint([]string{srv.URL + "/shell"}) {
		t.Errorf("responses recorded: %q, want the fetch's alone", got)
	}
}

func TestWARCFromABatch(t *testing.T) {
	srv := archiveSite(t)
	path := filepath.Join(t.TempDir(), "batch.warc")
	var urls []string
	for i := range 24 {
		urls = append(urls, fmt.Sprintf("%s/long?n=%d", srv.URL, i))
	}
	args := append([]string{"fetch", "--allow-local", "--no-cache", "--js", "off", "--concurrency", "8", "--format", "jsonl", "--warc", path}, urls...)
	if _, errOut, code := run(t, args...); code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	got := readWithGowarc(t, path)
	slices.Sort(got)
	slices.Sort(urls)
	if fmt.Sprint(got) != fmt.Sprint(urls) {
		t.Errorf("responses recorded:\n%q\nwant\n%q", got, urls)
	}
}

// TestWARCFromACrawl keeps every exchange of a crawl: robots.txt, each
// page, and each hop of a redirect the crawl followed.
func TestWARCFromACrawl(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		case "/":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><body><main><h1>Start</h1><p>Read <a href="/a">the first</a> and <a href="/old-b">the second</a>.</p></main></body></html>`)
		case "/old-b":
			http.Redirect(w, r, "/b", http.StatusMovedPermanently)
		case "/a", "/b":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, "<html><body><main><h1>Page %s</h1><p>Nothing links on from here.</p></main></body></html>", r.URL.Path)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "crawl.warc.gz")
	_, errOut, code := run(t, "crawl", "--allow-local", "--no-cache", "--js", "off", "--delay", "0", "--format", "jsonl", "--warc", path, srv.URL+"/")
	if code != ExitOK {
		t.Fatalf("crawl: exit %d, stderr %q", code, errOut)
	}
	got := readWithGowarc(t, path)
	slices.Sort(got)
	want := []string{srv.URL + "/", srv.URL + "/a", srv.URL + "/b", srv.URL + "/old-b", srv.URL + "/robots.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("responses recorded: %q, want %q", got, want)
	}
}
