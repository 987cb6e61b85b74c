package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"distill.dev/gateway/api"
	"distill.dev/gateway/host/llm"
	"distill.dev/gateway/host/llm/llmtest"
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
	body, _ := json.Marshal(map[string]any{"url": site.URL + "/", "maxConcurrency": 1, "limit": n + 1,
		"scrapeOptions": map[string]any{"maxAge": 0, "formats": []string{"markdown", "rawHtml"}}})
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
		Data      []struct {
			Markdown string `json:"markdown"`
			RawHTML  string `json:"rawHtml"`
		} `json:"data"`
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
	if status.Status != "cancelled" || status.Completed > n/2 || len(status.Data) != status.Completed || len(status.Data) == 0 {
		t.Errorf("after the cancel the HTTP API says %s with %d of %d documents; want cancelled well before the end", status.Status, len(status.Data), status.Completed)
	}
	// The pages the cluster's workers read come back with what the
	// formats need beside them (keep_page).
	for i, d := range status.Data {
		if d.Markdown == "" || !strings.Contains(d.RawHTML, "<html") {
			t.Errorf("document %d has markdown %q and rawHtml %.80q", i, d.Markdown, d.RawHTML)
		}
	}
	if st, err := c.client(1).CrawlStatus(ctx, &distillv1.CrawlStatusRequest{JobId: started.ID}); err != nil || st.GetState() != distillv1.CrawlState_CRAWL_STATE_CANCELED {
		t.Errorf("status once canceled: %v, %v", st, err)
	}
}

// A token the host policy maps to an actor runs the HTTP API's model work
// as that actor on every gateway of a cluster, and one run named in
// X-Distill-Run is one budget across them: two summaries in the run fit
// its four steps, whichever gateway each reached; a third does not.
func TestFirecrawlActorRunAcrossGateways(t *testing.T) {
	t.Parallel()
	skipShort(t)
	p := newPages(t, 0)
	u, _ := url.Parse(p.URL)
	policy := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(policy, []byte(fmt.Sprintf(`
actors:
  default:
    allowed_hosts: [127.0.0.1]
    allowed_schemes: [http]
    allowed_ports: [%[1]s]
  team-a:
    allowed_hosts: [127.0.0.1]
    allowed_schemes: [http]
    allowed_ports: [%[1]s]
    budget: {max_steps: 4}
tokens:
  - {token_env: TEAM_A_TOKEN, actor: team-a}
`, u.Port())), 0o600); err != nil {
		t.Fatal(err)
	}
	wire, cfg := llmtest.Start(t, llm.OpenAI)
	wire.Set("A page of words.", "", 0)
	c := startCluster(t, clusterOpts{Gateways: 2, NoRenderer: true, HTTP: true, Env: []string{
		"DISTILL_POLICY=" + policy, "TEAM_A_TOKEN=" + hostTeamToken,
		"OPENAI_API_KEY=" + cfg.APIKey, "OPENAI_BASE_URL=" + cfg.BaseURL, "DISTILL_LLM_MODEL=" + cfg.Model,
	}})
	summary := func(gateway int, token, run, path string) (int, map[string]any) {
		t.Helper()
		body, _ := json.Marshal(map[string]any{"url": p.URL + path, "formats": []string{"summary"}})
		req, err := http.NewRequestWithContext(t.Context(), "POST", "http://"+c.Gateways[gateway].HTTPAddr+"/v2/scrape", strings.NewReader(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("X-Distill-Run", run)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(res.Body).Decode(&out)
		return res.StatusCode, out
	}
	for i, gw := range []int{0, 1} {
		if code, out := summary(gw, hostTeamToken, "run-1", fmt.Sprintf("/p/%d", i)); code != http.StatusOK {
			t.Fatalf("summary %d of run-1 at gateway %d answered %d %v", i, gw, code, out)
		}
	}
	if code, out := summary(0, hostTeamToken, "run-1", "/p/3"); code != http.StatusTooManyRequests || out["code"] != "BUDGET_EXHAUSTED" {
		t.Errorf("a third summary in run-1 answered %d %v, want the run's budget exhausted", code, out)
	}
	if code, out := summary(1, hostTeamToken, "run-2", "/p/3"); code != http.StatusOK {
		t.Errorf("another run answered %d %v", code, out)
	}
	// The actor's token reaches the model work only.
	req, _ := http.NewRequestWithContext(t.Context(), "POST", "http://"+c.Gateways[1].HTTPAddr+"/v2/map", strings.NewReader(`{"url":"`+p.URL+`"}`))
	req.Header.Set("Authorization", "Bearer "+hostTeamToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("a map with the actor's token answered %d, want 403", res.StatusCode)
	}
}
