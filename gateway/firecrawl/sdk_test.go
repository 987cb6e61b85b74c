package firecrawl_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"distill.dev/gateway/api"
	"distill.dev/gateway/firecrawl"
	"distill.dev/gateway/internal/localcluster"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/grpcauth"
)

// These tests drive `distill serve --http` with the official Firecrawl JS
// SDK (testdata/sdk, pinned by its package-lock.json), a client nobody
// here wrote. They need node and npm, and are skipped in short mode; `make
// firecrawl-sdk` installs the SDK, and the tests run `npm ci` themselves
// when node_modules is missing.

const (
	sdkDir           = "testdata/sdk"
	sdkWebhookSecret = "sdk-webhook-secret-0123456789"
)

// built is the folder of a distill built for this package's tests.
var built string

func TestMain(m *testing.M) {
	code := m.Run()
	if built != "" {
		os.RemoveAll(built)
	}
	os.Exit(code)
}

var (
	binaryOnce = sync.OnceValues(func() (string, error) {
		root, err := filepath.Abs("../..")
		if err != nil {
			return "", err
		}
		bin, dir, err := localcluster.Distill(root, "distill-firecrawl-test")
		built = dir
		return bin, err
	})
	npmOnce = sync.OnceValue(func() error { return localcluster.NPMInstall(sdkDir) })
)

func needNode(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the Firecrawl JS SDK under Node: make test runs it, make test-short does not")
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is not installed: install nodejs and npm (.ci/run does), then run make firecrawl-sdk")
	}
	if err := npmOnce(); err != nil {
		t.Fatal(err)
	}
}

// startDistill runs `distill serve --http` with testToken until the test
// ends and returns the HTTP API's base URL.
func startDistill(t *testing.T) string {
	t.Helper()
	bin, err := binaryOnce()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := localcluster.StartServe(bin, t.TempDir(), "DISTILL_API_TOKENS="+testToken, "DISTILL_WEBHOOK_SECRET="+sdkWebhookSecret)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Stop()
		if t.Failed() {
			t.Logf("distill serve's stderr:\n%s", srv.Stderr())
		}
	})
	return srv.URL
}

// runSDK runs client.mjs with input and decodes what it prints into out.
func runSDK(t *testing.T, input, out any) {
	t.Helper()
	runNode(t, nil, input, out)
}

// runNode is runSDK with flags for node.
func runNode(t *testing.T, flags []string, input, out any) {
	t.Helper()
	in, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append(flags, "client.mjs")...)
	cmd.Dir = sdkDir
	cmd.Stdin = bytes.NewReader(in)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node client.mjs: %v\n%s", err, stderr.String())
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		t.Fatalf("client.mjs printed %q: %v\nstderr: %s", stdout.String(), err, stderr.String())
	}
}

// sdkOutcome is what client.mjs reports of one SDK call.
type sdkOutcome struct {
	OK      bool            `json:"ok"`
	Value   json.RawMessage `json:"value"`
	Status  *int            `json:"status"`
	Message string          `json:"message"`
}

func (o sdkOutcome) decode(t *testing.T, name string, v any) {
	t.Helper()
	if !o.OK {
		t.Fatalf("%s failed in the SDK: status %v: %s", name, o.Status, o.Message)
	}
	if err := json.Unmarshal(o.Value, v); err != nil {
		t.Fatalf("%s: %v: %s", name, err, o.Value)
	}
}

type sdkDocument struct {
	Markdown string   `json:"markdown"`
	HTML     *string  `json:"html"`
	RawHTML  *string  `json:"rawHtml"`
	Links    []string `json:"links"`
	Images   []string `json:"images"`
	Metadata struct {
		Title      string `json:"title"`
		SourceURL  string `json:"sourceURL"`
		StatusCode int    `json:"statusCode"`
		Language   string `json:"language"`
	} `json:"metadata"`
}

func TestFirecrawlSDK(t *testing.T) {
	needNode(t)
	pages := site(t)
	api := startDistill(t)
	hooks := make(chan []byte, 4)
	receiver := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mac := hmac.New(sha256.New, []byte(sdkWebhookSecret))
		mac.Write(body)
		if r.Header.Get("X-Firecrawl-Signature") == "sha256="+hex.EncodeToString(mac.Sum(nil)) {
			hooks <- body
		}
	}))
	t.Cleanup(receiver.Close)
	var got map[string]sdkOutcome
	runSDK(t, map[string]any{"mode": "check", "apiUrl": api, "token": testToken, "site": pages.URL, "webhook": receiver.URL + "/hook"}, &got)

	var doc sdkDocument
	got["scrape"].decode(t, "scrape", &doc)
	switch {
	case !strings.Contains(doc.Markdown, "Tide tables tell the harbour"):
		t.Errorf("scrape markdown = %q", doc.Markdown)
	case doc.HTML == nil || strings.Contains(*doc.HTML, "SCRIPT-MARKER") || !strings.Contains(*doc.HTML, "Tide charts"):
		t.Errorf("scrape html = %v", doc.HTML)
	case doc.RawHTML == nil || !strings.Contains(*doc.RawHTML, "SCRIPT-MARKER"):
		t.Errorf("scrape rawHtml = %v", doc.RawHTML)
	case !slices.Contains(doc.Links, pages.URL+"/charts?year=2026"):
		t.Errorf("scrape links = %v", doc.Links)
	case !slices.Contains(doc.Images, pages.URL+"/img/high-tide.png"):
		t.Errorf("scrape images = %v", doc.Images)
	case doc.Metadata.Title != "Tides of the harbour" || doc.Metadata.StatusCode != 200 || doc.Metadata.Language != "en-GB" || doc.Metadata.SourceURL != pages.URL+"/article":
		t.Errorf("scrape metadata = %+v", doc.Metadata)
	}
	var main sdkDocument
	got["scrapeMain"].decode(t, "scrape with includeTags", &main)
	if !strings.Contains(main.Markdown, "ASIDE-MARKER") || strings.Contains(main.Markdown, "Tide charts") {
		t.Errorf("includeTags #aside gave %q", main.Markdown)
	}

	var trimmed sdkDocument
	got["scrapeExclude"].decode(t, "scrape with excludeTags", &trimmed)
	if strings.Contains(trimmed.Markdown, "ASIDE-MARKER") || strings.Contains(trimmed.Markdown, "NAV-MARKER") || !strings.Contains(trimmed.Markdown, "FOOTER-MARKER") {
		t.Errorf("excludeTags nav, #aside gave %q", trimmed.Markdown)
	}

	var job struct {
		Status    string        `json:"status"`
		Completed int           `json:"completed"`
		Total     int           `json:"total"`
		Data      []sdkDocument `json:"data"`
	}
	got["batch"].decode(t, "batchScrape", &job)
	var titles []string
	for _, d := range job.Data {
		titles = append(titles, d.Metadata.Title)
	}
	if job.Status != "completed" || job.Completed != 3 || job.Total != 3 || !slices.Equal(titles, []string{"Page 1", "Page 2", "Page 3"}) {
		t.Errorf("batchScrape = %s %d/%d %v", job.Status, job.Completed, job.Total, titles)
	}

	var started struct {
		ID string `json:"id"`
	}
	got["webhookStart"].decode(t, "startBatchScrape with a webhook", &started)
	select {
	case body := <-hooks:
		var e struct {
			Type     string            `json:"type"`
			ID       string            `json:"id"`
			Metadata map[string]string `json:"metadata"`
		}
		if err := json.Unmarshal(body, &e); err != nil || e.Type != "batch_scrape.completed" || e.ID != started.ID || e.Metadata["from"] != "sdk" {
			t.Errorf("webhook delivered %s (%v), want batch_scrape.completed of %s", body, err, started.ID)
		}
	case <-time.After(time.Minute):
		t.Error("no signed webhook delivery within a minute")
	}

	var mapped struct {
		Links []struct {
			URL string `json:"url"`
		} `json:"links"`
	}
	got["map"].decode(t, "map", &mapped)
	if len(mapped.Links) != 3 || mapped.Links[0].URL != pages.URL+"/article" {
		t.Errorf("map = %+v", mapped)
	}

	for name, want := range map[string]struct {
		status int
		text   string
	}{
		"badToken":     {401, "Unauthorized"},
		"scrapeAction": {400, "actions[0] (scrape): not supported"},
		"search":       {400, "distill does not search the web"},
		"crawl":        {400, "allowExternalLinks: not supported"},
		"blocked":      {403, "Forbidden"},
		"timeout":      {408, "Request Timeout"},
	} {
		o := got[name]
		if o.OK || o.Status == nil || *o.Status != want.status || !strings.Contains(o.Message, want.text) {
			t.Errorf("%s: the SDK got ok=%v status %v %q, want status %d and %q", name, o.OK, o.Status, o.Message, want.status, want.text)
		}
	}

	var acted struct {
		Markdown string `json:"markdown"`
		Actions  struct {
			JavascriptReturns []struct {
				Type  string `json:"type"`
				Value any    `json:"value"`
			} `json:"javascriptReturns"`
		} `json:"actions"`
	}
	got["actions"].decode(t, "scrape with actions", &acted)
	if r := acted.Actions.JavascriptReturns; !strings.Contains(acted.Markdown, "TYPED-harbour") || len(r) != 1 || r[0].Value != "Form" {
		t.Errorf("scrape with actions = %+v", acted)
	}
	var shot struct {
		Screenshot string `json:"screenshot"`
	}
	got["screenshot"].decode(t, "scrape with the screenshot format", &shot)
	if !strings.HasPrefix(shot.Screenshot, "data:image/png;base64,iVBOR") {
		t.Errorf("screenshot = %.60q", shot.Screenshot)
	}

	var v1 struct {
		Success  bool   `json:"success"`
		Markdown string `json:"markdown"`
		HTML     string `json:"html"`
	}
	got["v1Scrape"].decode(t, "v1 scrapeUrl", &v1)
	if !v1.Success || !strings.Contains(v1.Markdown, "Tide tables") || !strings.Contains(v1.HTML, "Tide charts") {
		t.Errorf("v1 scrapeUrl = %+v", v1)
	}
	var v1Map struct {
		Success bool     `json:"success"`
		Links   []string `json:"links"`
	}
	got["v1Map"].decode(t, "v1 mapUrl", &v1Map)
	if !v1Map.Success || len(v1Map.Links) != 3 {
		t.Errorf("v1 mapUrl = %+v", v1Map)
	}
	var v1Batch struct {
		Status string        `json:"status"`
		Data   []sdkDocument `json:"data"`
	}
	got["v1Batch"].decode(t, "v1 batchScrapeUrls", &v1Batch)
	if v1Batch.Status != "completed" || len(v1Batch.Data) != 2 || v1Batch.Data[1].Metadata.Title != "Page 5" {
		t.Errorf("v1 batchScrapeUrls = %+v", v1Batch)
	}
}

// signedHooks is a webhook receiver that keeps the deliveries whose
// signature is good, and counts those whose signature is not.
func signedHooks(t *testing.T, secret string) (url string, bodies chan []byte, bad func() int) {
	t.Helper()
	bodies = make(chan []byte, 64)
	var mu sync.Mutex
	unsigned := 0
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write(body)
		if r.Header.Get("X-Firecrawl-Signature") != "sha256="+hex.EncodeToString(mac.Sum(nil)) {
			mu.Lock()
			unsigned++
			mu.Unlock()
			return
		}
		bodies <- body
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/hook", bodies, func() int {
		mu.Lock()
		defer mu.Unlock()
		return unsigned
	}
}

// The crawl endpoints through the SDK, against the API in this process so
// that a status answer holds a few documents and the SDK must follow next.
func TestFirecrawlSDKCrawl(t *testing.T) {
	needNode(t)
	pages := site(t)
	hookURL, hooks, unsigned := signedHooks(t, sdkWebhookSecret)
	api := serve(t, firecrawl.Config{AllowLocal: true, WebhookSecret: sdkWebhookSecret, StatusPageBytes: 3000})
	var got map[string]sdkOutcome
	runSDK(t, map[string]any{"mode": "crawl", "apiUrl": api.URL, "token": testToken, "site": pages.URL, "webhook": hookURL}, &got)

	var job struct {
		ID        string        `json:"id"`
		Status    string        `json:"status"`
		Completed int           `json:"completed"`
		Total     int           `json:"total"`
		Next      *string       `json:"next"`
		Data      []sdkDocument `json:"data"`
	}
	got["crawl"].decode(t, "crawl", &job)
	var titles []string
	for _, d := range job.Data {
		titles = append(titles, d.Metadata.Title)
	}
	slices.Sort(titles)
	if want := []string{"Doc 1", "Doc 2", "Doc 3", "Doc 4", "Doc 5", "Doc 6", "Docs"}; job.Status != "completed" || job.Completed != 7 || job.Total != 8 || !slices.Equal(titles, want) {
		t.Errorf("crawl = %s %d/%d %v, want completed 7/8 %v", job.Status, job.Completed, job.Total, titles, want)
	}
	var errs struct {
		Errors []struct {
			URL  string `json:"url"`
			Code string `json:"code"`
		} `json:"errors"`
		RobotsBlocked []string `json:"robotsBlocked"`
	}
	got["crawlErrors"].decode(t, "getCrawlErrors", &errs)
	if len(errs.Errors) != 1 || errs.Errors[0].URL != pages.URL+"/docs/blob" || errs.Errors[0].Code != "UNSUPPORTED_CONTENT" {
		t.Errorf("getCrawlErrors = %+v", errs)
	}

	var first struct {
		Next *string       `json:"next"`
		Data []sdkDocument `json:"data"`
	}
	got["firstPage"].decode(t, "getCrawlStatus without autoPaginate", &first)
	if first.Next == nil || !strings.Contains(*first.Next, "skip=") || len(first.Data) == 0 || len(first.Data) >= 7 {
		t.Errorf("the first page of a crawl's status holds %d documents and next %v: want some, and a next", len(first.Data), first.Next)
	}

	var cancelled struct {
		Cancelled bool   `json:"cancelled"`
		Status    string `json:"status"`
		Completed int    `json:"completed"`
	}
	got["cancel"].decode(t, "cancelCrawl", &cancelled)
	if !cancelled.Cancelled || cancelled.Status != "cancelled" || cancelled.Completed >= 7 {
		t.Errorf("cancelCrawl = %+v", cancelled)
	}

	var started struct {
		ID string `json:"id"`
	}
	got["webhookStart"].decode(t, "startCrawl with a webhook", &started)
	var types []string
	pagesSeen := 0
	for len(types) == 0 || types[len(types)-1] != "crawl.completed" {
		select {
		case body := <-hooks:
			var e struct {
				Type     string            `json:"type"`
				ID       string            `json:"id"`
				Data     []sdkDocument     `json:"data"`
				Metadata map[string]string `json:"metadata"`
			}
			if err := json.Unmarshal(body, &e); err != nil || e.ID != started.ID || e.Metadata["from"] != "sdk-crawl" {
				t.Fatalf("webhook delivered %s (%v), want an event of %s", body, err, started.ID)
			}
			types = append(types, e.Type)
			pagesSeen += len(e.Data)
		case <-time.After(time.Minute):
			t.Fatalf("no crawl.completed delivery within a minute; got %v", types)
		}
	}
	if want := []string{"crawl.started", "crawl.page", "crawl.page", "crawl.completed"}; !slices.Equal(types, want) || pagesSeen != 2 || unsigned() != 0 {
		t.Errorf("webhook events %v with %d pages (%d unsigned), want %v with 2", types, pagesSeen, unsigned(), want)
	}

	for name, want := range map[string]struct {
		status int
		text   string
	}{
		"prompt":  {400, "prompt: not supported"},
		"unknown": {404, "Job not found"},
	} {
		o := got[name]
		if o.OK || o.Status == nil || *o.Status != want.status || !strings.Contains(o.Message, want.text) {
			t.Errorf("%s: the SDK got ok=%v status %v %q, want status %d and %q", name, o.OK, o.Status, o.Message, want.status, want.text)
		}
	}

	var v1 struct {
		Success bool          `json:"success"`
		Status  string        `json:"status"`
		Total   int           `json:"total"`
		Data    []sdkDocument `json:"data"`
	}
	got["v1Crawl"].decode(t, "v1 crawlUrl", &v1)
	if !v1.Success || v1.Status != "completed" || v1.Total != 3 || len(v1.Data) != 2 {
		t.Errorf("v1 crawlUrl = %s %d, %d documents: want completed, 3 pages, 2 documents", v1.Status, v1.Total, len(v1.Data))
	}
	var v1Cancel struct {
		Cancelled struct {
			Status string `json:"status"`
		} `json:"cancelled"`
		Errors struct {
			Errors []any `json:"errors"`
		} `json:"errors"`
	}
	got["v1Cancel"].decode(t, "v1 cancelCrawl", &v1Cancel)
	if v1Cancel.Cancelled.Status != "cancelled" || v1Cancel.Errors.Errors == nil {
		t.Errorf("v1 cancelCrawl, checkCrawlErrors = %+v", v1Cancel)
	}
}

// The v1 client's CrawlWatcher and the v2 client's watcher follow crawls
// and batches over the WebSocket they open at the job's status path:
// each gets every document and the done event, and a cancelled job, an
// unknown one and a token the server does not take each end in the
// error event with what was wrong.
func TestFirecrawlSDKWatch(t *testing.T) {
	needNode(t)
	pages := site(t)
	guard, err := grpcauth.New(grpcauth.Config{Tokens: []string{testToken}})
	if err != nil {
		t.Fatal(err)
	}
	api := serve(t, firecrawl.Config{AllowLocal: true, Auth: guard})
	type socket struct {
		URL      string   `json:"url"`
		Protocol *string  `json:"protocol"`
		Messages []string `json:"messages"`
		Close    *struct {
			Code   int    `json:"code"`
			Reason string `json:"reason"`
		} `json:"close"`
	}
	var got map[string]struct {
		sdkOutcome
		Sockets []socket `json:"sockets"`
	}
	// Node 20 has its WebSocket behind a flag; later ones have it on.
	runNode(t, []string{"--experimental-websocket"}, map[string]any{"mode": "watch", "apiUrl": api.URL, "token": testToken, "site": pages.URL}, &got)
	type watched struct {
		ID     string   `json:"id"`
		Docs   []string `json:"docs"`
		Event  string   `json:"event"`
		Status string   `json:"status"`
		Error  string   `json:"error"`
	}
	docsSite := []string{pages.URL + "/docs/"}
	for n := 1; n <= docsPages; n++ {
		docsSite = append(docsSite, fmt.Sprintf("%s/docs/%d", pages.URL, n))
	}
	wsBase := "ws" + strings.TrimPrefix(api.URL, "http")
	for _, c := range []struct {
		name, path string
		docs       []string
		event      string
		text       string
		lastType   string
		token      string
	}{
		{name: "v2Crawl", path: "/v2/crawl/", docs: docsSite, event: "done", lastType: "done"},
		{name: "v2Batch", path: "/v2/batch/scrape/", docs: []string{pages.URL + "/page/1", pages.URL + "/page/2", pages.URL + "/page/3"}, event: "done", lastType: "done"},
		{name: "v2Cancelled", path: "/v2/crawl/", event: "error", text: "cancelled", lastType: "error"},
		{name: "v2Unknown", path: "/v2/crawl/00000000-0000-4000-8000-000000000000", event: "error", text: "Job not found", lastType: "error"},
		// v1 reads done and error from the close frame's reason.
		{name: "v1Crawl", path: "/v1/crawl/", docs: docsSite, event: "done"},
		{name: "v1Batch", path: "/v1/crawl/", docs: []string{pages.URL + "/page/4", pages.URL + "/page/5"}, event: "done"},
		{name: "v1Cancelled", path: "/v1/crawl/", event: "error", text: "cancelled"},
		{name: "v1Unknown", path: "/v1/crawl/00000000-0000-4000-8000-000000000000", event: "error", text: "Job not found"},
		// A token refused: the socket opens only to say so.
		{name: "v2BadToken", path: "/v2/crawl/", event: "error", text: "Unauthorized", lastType: "error", token: "not-the-token-0123456789"},
		{name: "v1BadToken", path: "/v1/crawl/", event: "error", text: "Unauthorized", token: "not-the-token-0123456789"},
	} {
		if c.token == "" {
			c.token = testToken
		}
		o := got[c.name]
		var w watched
		o.decode(t, c.name, &w)
		slices.Sort(w.Docs)
		if w.Event != c.event || !strings.Contains(w.Error, c.text) || c.docs != nil && !slices.Equal(w.Docs, c.docs) {
			t.Errorf("%s: event %q %q, documents %v; want %q %q, documents %v", c.name, w.Event, w.Error, w.Docs, c.event, c.text, c.docs)
		}
		// Its one socket spoke the protocol: the token agreed as its
		// subprotocol, a catchup first for a job it found, and done or
		// error in a message (v2) or the close frame (v1).
		if len(o.Sockets) != 1 {
			t.Errorf("%s opened %d sockets, want 1: %+v", c.name, len(o.Sockets), o.Sockets)
			continue
		}
		sk := o.Sockets[0]
		msgs := sk.Messages
		switch {
		case !strings.HasPrefix(sk.URL, wsBase+c.path), sk.Protocol == nil || *sk.Protocol != c.token, sk.Close == nil:
			t.Errorf("%s: socket %s, protocol %v, close %v", c.name, sk.URL, sk.Protocol, sk.Close)
		case c.docs != nil && (len(msgs) == 0 || !strings.HasPrefix(msgs[0], "catchup:")):
			t.Errorf("%s: messages %v, want a catchup first", c.name, msgs)
		// The v2 client ends its watch on a catchup that says the job
		// completed, before the done that follows it.
		case c.lastType != "" && (len(msgs) == 0 || msgs[len(msgs)-1] != c.lastType && !(c.lastType == "done" && msgs[len(msgs)-1] == "catchup:completed")):
			t.Errorf("%s: messages %v, want %s last", c.name, msgs, c.lastType)
		case c.lastType == "" && !strings.Contains(sk.Close.Reason, `"type":"`+c.event+`"`):
			t.Errorf("%s: closed %d %q, want %s in the reason", c.name, sk.Close.Code, sk.Close.Reason, c.event)
		}
	}
}

// The json and summary formats and extract through the SDK, with host
// mode and a provider on loopback behind them.
func TestFirecrawlSDKModel(t *testing.T) {
	needNode(t)
	pages := site(t)
	api, wire := serveModel(t, pages, firecrawl.Config{})
	wire.Set(`{"topic":"tides"}`, "", 0)
	schema := map[string]any{"type": "object", "properties": map[string]any{"topic": map[string]any{"type": "string"}}, "required": []string{"topic"}}
	var got map[string]sdkOutcome
	runSDK(t, map[string]any{"mode": "model", "apiUrl": api.URL, "token": testToken, "site": pages.URL, "schema": schema}, &got)

	type topic struct {
		Topic string `json:"topic"`
	}
	var scraped struct {
		Markdown string `json:"markdown"`
		JSON     topic  `json:"json"`
	}
	got["json"].decode(t, "scrape with the json format", &scraped)
	if scraped.JSON.Topic != "tides" || !strings.Contains(scraped.Markdown, "Tide tables") {
		t.Errorf("scrape with the json format = %+v", scraped)
	}
	var summary struct {
		Summary string `json:"summary"`
	}
	got["summary"].decode(t, "scrape with the summary format", &summary)
	if summary.Summary != `{"topic":"tides"}` {
		t.Errorf("summary = %q", summary.Summary)
	}
	var extracted struct {
		Success bool   `json:"success"`
		Status  string `json:"status"`
		Data    topic  `json:"data"`
	}
	got["extract"].decode(t, "extract", &extracted)
	if !extracted.Success || extracted.Status != "completed" || extracted.Data.Topic != "tides" {
		t.Errorf("extract = %+v", extracted)
	}
	if o := got["webSearch"]; o.OK || o.Status == nil || *o.Status != 400 || !strings.Contains(o.Message, "enableWebSearch: not supported") {
		t.Errorf("extract with web search: ok=%v status %v %q", o.OK, o.Status, o.Message)
	}
	var v1 struct {
		Success bool  `json:"success"`
		Data    topic `json:"data"`
	}
	got["v1Extract"].decode(t, "v1 extract", &v1)
	if !v1.Success || v1.Data.Topic != "tides" {
		t.Errorf("v1 extract = %+v", v1)
	}
	var v1JSON struct {
		JSON topic `json:"json"`
	}
	got["v1Json"].decode(t, "v1 scrapeUrl with json", &v1JSON)
	if v1JSON.JSON.Topic != "tides" {
		t.Errorf("v1 scrapeUrl with json = %+v", v1JSON)
	}
}

// mcpText is the text of an MCP tool result, and whether it is an error.
func mcpText(t *testing.T, o sdkOutcome, name string) (string, bool) {
	t.Helper()
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	o.decode(t, name, &r)
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String(), r.IsError
}

// Firecrawl's own CLI (firecrawl-cli) and MCP server (firecrawl-mcp)
// against distill, base URL changed and nothing else.
func TestFirecrawlCLIAndMCP(t *testing.T) {
	needNode(t)
	pages := site(t)
	api := startDistill(t)
	var got map[string]sdkOutcome
	runSDK(t, map[string]any{"mode": "tools", "apiUrl": api, "token": testToken, "site": pages.URL}, &got)

	var out string
	for name, want := range map[string][]string{
		"cliScrape": {"Tide tables tell the harbour", pages.URL + "/charts?year=2026"},
		"cliMap":    {pages.URL + "/article", pages.URL + "/page/2"},
		"cliCrawl":  {`"status":"completed"`, "Doc 6", pages.URL + "/docs/blob"},
	} {
		got[name].decode(t, name, &out)
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("firecrawl %s printed %.400q, want %q in it", name, out, w)
			}
		}
	}
	// The CLI prints the status, not the body, of a refusal.
	if o := got["cliSearch"]; o.OK || !strings.Contains(o.Message, "status code 400") {
		t.Errorf("firecrawl search: ok=%v %.300q", o.OK, o.Message)
	}

	for name, want := range map[string]string{
		"mcpScrape":      "Tide tables tell the harbour",
		"mcpMap":         pages.URL + "/page/1",
		"mcpCrawlStatus": "Doc 6",
	} {
		text, isErr := mcpText(t, got[name], name)
		if isErr || !strings.Contains(text, want) {
			t.Errorf("MCP %s answered error=%v %.400q, want %q in it", name, isErr, text, want)
		}
	}
	if text, isErr := mcpText(t, got["mcpSearch"], "mcpSearch"); !isErr || !strings.Contains(text, "distill does not search the web") {
		t.Errorf("MCP firecrawl_search answered error=%v %.300q", isErr, text)
	}
}

// A crawl begun over either door of one `distill serve` is one job: one
// begun at /v2/crawl is the crawl the gRPC API's CrawlStatus reports and
// CrawlCancel stops (by its id in either form), and one begun over gRPC
// is reported at /v2/crawl/{id} and canceled there.
func TestCrawlSharedWithGRPC(t *testing.T) {
	bin, err := binaryOnce()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := localcluster.StartServe(bin, t.TempDir(), "DISTILL_API_TOKENS="+testToken)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.Stop()
		if t.Failed() {
			t.Logf("distill serve's stderr:\n%s", srv.Stderr())
		}
	})
	pages := site(t)
	conn, err := grpc.NewClient(srv.GRPC, grpc.WithTransportCredentials(insecure.NewCredentials()), grpcauth.DialOption(testToken))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := distillv1.NewDistillServiceClient(conn)
	ctx := t.Context()

	// Begun over HTTP, seen over gRPC until it ends.
	started := call(t, "POST", srv.URL+"/v2/crawl", testToken, map[string]any{"url": pages.URL + "/docs/", "limit": 20})
	id, _ := started.body["id"].(string)
	if started.status != http.StatusOK || api.CrawlID(id) == id {
		t.Fatalf("POST /v2/crawl answered %d %s: want the id of a crawl in UUID form", started.status, started.raw)
	}
	done := waitJobAuth(t, started.body["url"].(string), testToken)
	st, err := client.CrawlStatus(ctx, &distillv1.CrawlStatusRequest{JobId: id})
	if err != nil {
		t.Fatal(err)
	}
	if st.GetJobId() != api.CrawlID(id) || st.GetState() != distillv1.CrawlState_CRAWL_STATE_DONE || st.GetUrl() != pages.URL+"/docs/" ||
		int(st.GetPagesDone()) != int(done.body["total"].(float64)) {
		t.Errorf("gRPC CrawlStatus of %s = %v; the HTTP API says %s", id, st, done.raw)
	}

	// Begun over HTTP, canceled over gRPC by its plain id.
	slow := call(t, "POST", srv.URL+"/v2/crawl", testToken, map[string]any{"url": pages.URL + "/docs/", "delay": 1, "maxConcurrency": 1})
	slowID, _ := slow.body["id"].(string)
	cancelled, err := client.CrawlCancel(ctx, &distillv1.CrawlCancelRequest{JobId: api.CrawlID(slowID)})
	if err != nil {
		t.Fatal(err)
	}
	if cancelled.GetStatus().GetJobId() != api.CrawlID(slowID) {
		t.Errorf("CrawlCancel = %v", cancelled)
	}
	if a := waitJobAuth(t, slow.body["url"].(string), testToken); a.body["status"] != "cancelled" {
		t.Errorf("a crawl canceled over gRPC: its HTTP status is %s, want cancelled", a.raw)
	}
	if st, err := client.CrawlStatus(ctx, &distillv1.CrawlStatusRequest{JobId: slowID}); err != nil || st.GetState() != distillv1.CrawlState_CRAWL_STATE_CANCELED {
		t.Errorf("CrawlStatus of the canceled crawl = %v, %v", st, err)
	}

	// Begun over gRPC, seen and canceled over HTTP.
	stream, err := client.Crawl(ctx, &distillv1.CrawlRequest{Url: pages.URL + "/docs/", DelayMs: proto.Int64(1000), Concurrency: proto.Int32(1),
		Options: &distillv1.FetchOptions{AllowLocal: true}})
	if err != nil {
		t.Fatal(err)
	}
	first, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	grpcID := first.GetJobId()
	seen := call(t, "GET", srv.URL+"/v2/crawl/"+api.CrawlUUID(grpcID), testToken, nil)
	if seen.status != http.StatusOK || seen.body["status"] != "scraping" || !strings.Contains(fmt.Sprint(seen.body["warning"]), "did not begin this crawl") {
		t.Errorf("GET /v2/crawl/{id} of a crawl begun over gRPC answered %d %s", seen.status, seen.raw)
	}
	if a := call(t, "DELETE", srv.URL+"/v2/crawl/"+grpcID, testToken, nil); a.status != http.StatusOK || a.body["success"] != true {
		t.Errorf("DELETE /v2/crawl/{id} of a crawl begun over gRPC answered %d %s", a.status, a.raw)
	}
	var last *distillv1.CrawlResponse
	for {
		r, err := stream.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		last = r
	}
	if last.GetSummary().GetState() != distillv1.CrawlState_CRAWL_STATE_CANCELED {
		t.Errorf("the gRPC crawl canceled over HTTP ended with %v", last)
	}
	if a := call(t, "GET", srv.URL+"/v2/crawl/no-such-crawl", testToken, nil); a.status != http.StatusNotFound {
		t.Errorf("an unknown crawl answered %d %s", a.status, a.raw)
	}
}

// waitJobAuth is waitJob with a token.
func waitJobAuth(t *testing.T, statusURL, token string) answer {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		a := call(t, "GET", statusURL, token, nil)
		if a.status != http.StatusOK {
			t.Fatalf("status answered %d %s", a.status, a.raw)
		}
		if a.body["status"] != "scraping" {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job is still scraping: %s", a.raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
