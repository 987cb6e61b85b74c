package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"distill.dev/gateway/api"
	distillv1 "distill.dev/proto/gen/distill/v1"
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

// A crawl begun at one cluster gateway's /v2/crawl is the cluster's crawl
// job: another gateway's gRPC CrawlStatus reports it and its CrawlCancel
// stops it, and the first gateway's HTTP API then says it was cancelled.
func TestFirecrawlCrawlIsTheClusterJob(t *testing.T) {
	t.Parallel()
	skipShort(t)
	c := startCluster(t, clusterOpts{Gateways: 2, NoRenderer: true, HTTP: true})
	const n = 40
	site := newCrawlSite(t, n, 100*time.Millisecond)
	httpAPI := "http://" + c.Gateways[0].HTTPAddr
	body, _ := json.Marshal(map[string]any{"url": site.URL + "/", "maxConcurrency": 1, "limit": n + 1, "scrapeOptions": map[string]any{"maxAge": 0}})
	res, err := http.Post(httpAPI+"/v2/crawl", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	var started struct {
		ID    string `json:"id"`
		URL   string `json:"url"`
		Error string `json:"error"`
	}
	err = json.NewDecoder(res.Body).Decode(&started)
	res.Body.Close()
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("POST /v2/crawl answered %d: %v %s", res.StatusCode, err, started.Error)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var st *distillv1.CrawlStatusResponse
	for {
		st, err = c.client(1).CrawlStatus(ctx, &distillv1.CrawlStatusRequest{JobId: started.ID})
		if err != nil {
			t.Fatalf("status of %s through the other gateway: %v", started.ID, err)
		}
		if st.GetPagesDone() >= 2 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st.GetJobId() != api.CrawlID(started.ID) || st.GetState() != distillv1.CrawlState_CRAWL_STATE_RUNNING || st.GetUrl() != site.URL+"/" {
		t.Fatalf("status through the other gateway: %v; want %s running", st, started.ID)
	}
	if _, err := c.client(1).CrawlCancel(ctx, &distillv1.CrawlCancelRequest{JobId: started.ID}); err != nil {
		t.Fatalf("cancel through the other gateway: %v", err)
	}
	var status struct {
		Status    string `json:"status"`
		Completed int    `json:"completed"`
	}
	for {
		res, err := http.Get(started.URL)
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
		if ctx.Err() != nil {
			t.Fatalf("the crawl is still scraping after its cancel: %+v", status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if status.Status != "cancelled" || status.Completed > n/2 {
		t.Errorf("after the cancel the HTTP API says %+v; want cancelled well before the end", status)
	}
	if st, err := c.client(1).CrawlStatus(ctx, &distillv1.CrawlStatusRequest{JobId: started.ID}); err != nil || st.GetState() != distillv1.CrawlState_CRAWL_STATE_CANCELED {
		t.Errorf("status once canceled: %v, %v", st, err)
	}
}
