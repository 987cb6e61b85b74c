package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A batch scrape through the Firecrawl-compatible API of a cluster
// gateway goes over the NATS job queue to the fetcher processes, as every
// other door's batches do: both fetchers take its pages, and each comes
// back once, in the order of the URLs.
func TestFirecrawlBatchFansOutInCluster(t *testing.T) {
	t.Parallel()
	skipShort(t)
	c := startCluster(t, clusterOpts{Fetchers: 2, NoRenderer: true, HTTP: true})
	site := newPages(t, 0)
	urls := site.urls(60)
	api := "http://" + c.Gateways[0].HTTPAddr

	post := func(path string, body any) map[string]any {
		t.Helper()
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		res, err := http.Post(api+path, "application/json", strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("POST %s answered %d: %v %v", path, res.StatusCode, out, err)
		}
		return out
	}
	start := post("/v2/batch/scrape", map[string]any{"urls": urls, "formats": []string{"markdown"}})
	statusURL, _ := start["url"].(string)
	var status struct {
		Status    string `json:"status"`
		Completed int    `json:"completed"`
		Total     int    `json:"total"`
		Data      []struct {
			Markdown string `json:"markdown"`
			Metadata struct {
				Title     string `json:"title"`
				SourceURL string `json:"sourceURL"`
			} `json:"metadata"`
		} `json:"data"`
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		res, err := http.Get(statusURL)
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(res.Body).Decode(&status)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if status.Status != "scraping" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the batch is still scraping: %d of %d", status.Completed, status.Total)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if status.Status != "completed" || status.Completed != len(urls) || len(status.Data) != len(urls) {
		t.Fatalf("batch %s: %d of %d completed, %d documents", status.Status, status.Completed, status.Total, len(status.Data))
	}
	for i, d := range status.Data {
		if d.Metadata.SourceURL != urls[i] || d.Metadata.Title != fmt.Sprintf("Page %d", i) || !strings.Contains(d.Markdown, "Words of the page") {
			t.Fatalf("document %d = %+v", i, d)
		}
	}
	for _, f := range c.Fetchers {
		if !strings.Contains(f.Log.String(), `"msg":"fetched"`) {
			t.Errorf("%s at %s fetched nothing: the batch did not fan out", f.Name, f.Addr)
		}
	}
}
