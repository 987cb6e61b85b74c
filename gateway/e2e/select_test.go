package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// fixtureDir holds the pick package's fixture pages: a product grid, a
// docs page with code and tables, a wiki-like page.
var fixtureDir = filepath.Join("..", "..", "services", "extractor", "pick", "testdata")

// fixtureSite serves the fixture pages at /grid, /docs and /wiki, and
// counts the requests.
func fixtureSite(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		b, err := os.ReadFile(filepath.Join(fixtureDir, strings.TrimPrefix(r.URL.Path, "/")+".html"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// The picking flags through the distill binary: fetch, extract on a saved
// page, a batch, and a bad expression refused before fetching.
func TestSelectThroughTheBinary(t *testing.T) {
	skipShort(t)
	t.Parallel()
	site, hits := fixtureSite(t)
	cache := t.TempDir()
	fetch := func(args ...string) (string, string, int) {
		return runCLI(t, append([]string{"--cache-dir", cache, "fetch", "--allow-local", "--js", "off"}, args...)...)
	}

	out, errOut, code := fetch("--select", "h3 a::attr(title)", site.URL+"/grid")
	var titles []string
	if code != 0 || json.Unmarshal([]byte(out), &titles) != nil ||
		strings.Join(titles, "|") != "Tide Pools of the North|Kelp Forests|Anemones, a Life in the Shallows|Shore Birds" {
		t.Errorf("fetch --select: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	out, errOut, code = fetch("--xpath", "//article", "--field", "title=.//h3/a/@title", "--field", "price=.//p[@class='price_color']", "--max-matches", "2", site.URL+"/grid")
	want := `[
  {
    "title": "Tide Pools of the North",
    "price": "£51.77"
  },
  {
    "title": "Kelp Forests",
    "price": "£23.10"
  }
]
`
	if code != 0 || out != want || !strings.Contains(errOut, "2 more matches left out (--max-matches") {
		t.Errorf("fetch --xpath --field --max-matches: exit %d, stdout:\n%s\nstderr %q", code, out, errOut)
	}

	// A saved page, no network.
	saved := filepath.Join(fixtureDir, "docs.html")
	out, errOut, code = runCLI(t, "extract", "--url", "https://docs.example/tidectl", "--find-text", "how many days", "--similar", saved)
	var similar struct {
		Selector string `json:"selector"`
		Matches  []struct{ Selector, Text string }
	}
	if code != 0 || json.Unmarshal([]byte(out), &similar) != nil || similar.Selector != "td:nth-child(3)" || len(similar.Matches) != 3 || similar.Matches[2].Text != "metric or imperial" {
		t.Errorf("extract --find-text --similar: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	// A batch in JSON Lines: each page's picks under result.picked.
	out, errOut, code = fetch("--format", "jsonl", "--find-text", "tide", "--max-matches", "1", site.URL+"/grid", site.URL+"/wiki")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 2 {
		t.Fatalf("batch: exit %d, %d lines, stderr %q", code, len(lines), errOut)
	}
	for _, line := range lines {
		var item struct {
			URL    string `json:"url"`
			OK     bool   `json:"ok"`
			Result struct {
				Picked struct {
					Matches []struct{ Selector, Text string } `json:"matches"`
					Omitted int                               `json:"omitted"`
				} `json:"picked"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(line), &item); err != nil || !item.OK || len(item.Result.Picked.Matches) != 1 || item.Result.Picked.Omitted == 0 {
			t.Errorf("batch line %s: %v", line, err)
		}
	}

	before := hits.Load()
	for _, args := range [][]string{
		{"--xpath", "//a[@href"},
		{"--select", "a", "--find-text", "a"},
		{"--find-regex", "(unclosed"},
		{"--select", "a", "--field", "title"},
	} {
		_, errOut, code := fetch(append(args, site.URL+"/grid")...)
		// A usage error: one line saying what is wrong, then where the
		// help is.
		first, rest, _ := strings.Cut(errOut, "\n")
		if code != 2 || !strings.HasPrefix(first, "distill: ") || strings.Count(rest, "\n") != 1 || !strings.Contains(rest, "--help") {
			t.Errorf("fetch %q: exit %d, stderr %q; want exit 2, one line and the usage hint", args, code, errOut)
		}
	}
	if n := hits.Load() - before; n != 0 {
		t.Errorf("bad picking options reached the site %d times, want none", n)
	}
}

// The picking options cross the cluster's wires: the public gRPC API, the
// NATS batch jobs, the fetcher and the extractor over gRPC.
func TestSelectThroughTheCluster(t *testing.T) {
	c := startInProcess(t, inProcessOpts{Fetchers: 1})
	site, _ := fixtureSite(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	opts := proto.CloneOf(local)
	opts.Select = "article.product_pod"
	opts.Fields = []*distillv1.PickField{{Name: "price", Selector: ".price_color"}}
	opts.Similar = true
	res, err := c.client(0).Fetch(ctx, &distillv1.FetchRequest{Url: site.URL + "/grid", Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	p := res.GetDistilled().GetPicked()
	if p.GetSelector() != "article.product_pod" || len(p.GetRecords()) != 4 || p.GetRecords()[3].GetFields()[0].GetValue() != "£9.99" {
		t.Errorf("Fetch picked %v", p)
	}

	batch := proto.CloneOf(local)
	batch.Xpath = "count(//a)"
	got := runBatch(t, c.client(0), []string{site.URL + "/grid", site.URL + "/wiki"}, batch, nil)
	if got.err != nil || len(got.results) != 2 {
		t.Fatalf("batch: %d results, err %v", len(got.results), got.err)
	}
	for i, want := range []float64{13, 10} {
		if n := got.results[int32(i)].GetResult().GetPicked().GetNumber(); n != want {
			t.Errorf("batch page %d: count(//a) = %v, want %v", i, n, want)
		}
	}

	// Refused at the gateway, as the selector is.
	bad := proto.CloneOf(local)
	bad.Xpath = "//a["
	if _, err := c.client(0).Fetch(ctx, &distillv1.FetchRequest{Url: site.URL + "/grid", Options: bad}); err == nil || !strings.Contains(err.Error(), "--xpath: invalid XPath") {
		t.Errorf("Fetch with a broken XPath: %v", err)
	}
}
