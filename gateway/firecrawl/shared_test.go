package firecrawl_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"
	"github.com/nats-io/nats.go/jetstream"

	"distill.dev/gateway/app"
	"distill.dev/gateway/firecrawl"
	"distill.dev/services/fetcher/crawl/crawljs"
	"distill.dev/services/platform/natsembed"
)

// serveShared runs the API over a distill of its own, as another gateway
// would, keeping its jobs in the JetStream of ns that every such gateway
// shares.
func serveShared(t *testing.T, ns *natsembed.Server, cfg firecrawl.Config) *httptest.Server {
	t.Helper()
	nc, err := ns.Connect(t.Name())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	cfg.AllowLocal = true
	cfg.KeyValue = func() (jetstream.JetStream, jetstream.StorageType, int, error) {
		return js, jetstream.MemoryStorage, 1, nil
	}
	sys, err := app.Open(t.Context(), quiet, app.Config{UserAgentVersion: "test", Workers: 2, CacheDir: t.TempDir(), AllowLocal: true})
	if err != nil {
		t.Fatal(err)
	}
	fc := firecrawl.New(quiet, sys, cfg)
	srv := httptest.NewServer(fc.Handler())
	t.Cleanup(func() {
		srv.Close()
		fc.Close()
		_ = sys.Close()
	})
	return srv
}

// watchToEnd watches a job over a WebSocket, as the v2 client does, and
// returns the titles of the documents it was sent and its last message.
func watchToEnd(t *testing.T, statusURL string) ([]string, map[string]any) {
	t.Helper()
	conn, _, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(statusURL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(64 << 20)
	var titles []string
	title := func(d any) {
		doc, _ := d.(map[string]any)
		meta, _ := doc["metadata"].(map[string]any)
		s, _ := meta["title"].(string)
		titles = append(titles, s)
	}
	for {
		_, b, err := conn.Read(t.Context())
		if err != nil {
			t.Fatalf("the watch ended without done or error: %v", err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("watch message %s: %v", b, err)
		}
		switch m["type"] {
		case "catchup":
			snap, _ := m["data"].(map[string]any)
			docs, _ := snap["data"].([]any)
			for _, d := range docs {
				title(d)
			}
		case "document":
			title(m["data"])
		default:
			return titles, m
		}
	}
}

// Two gateways over one NATS are one Firecrawl API: a batch begun on one
// is watched to its end, polled with its documents and errors, and
// cancelled from the other, where it then stops.
func TestJobsSharedAcrossGateways(t *testing.T) {
	t.Parallel()
	pages := site(t)
	ns, err := natsembed.Start(natsembed.Config{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	a, b := serveShared(t, ns, firecrawl.Config{}), serveShared(t, ns, firecrawl.Config{})

	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL + "/gone"
	dead.Close()
	start := call(t, "POST", a.URL+"/v2/batch/scrape", "", map[string]any{"urls": []string{pages.URL + "/page/1", deadURL, pages.URL + "/page/2"}})
	id, _ := start.body["id"].(string)
	if start.status != http.StatusOK || id == "" {
		t.Fatalf("start answered %d %s", start.status, start.raw)
	}
	titles, last := watchToEnd(t, b.URL+"/v2/batch/scrape/"+id)
	slices.Sort(titles)
	if last["type"] != "done" || !slices.Equal(titles, []string{"Page 1", "Page 2"}) {
		t.Errorf("the other gateway's watch was sent %v, then %v", titles, last)
	}
	done := call(t, "GET", b.URL+"/v2/batch/scrape/"+id, "", nil)
	if done.status != http.StatusOK || done.body["status"] != "completed" || done.body["total"] != float64(3) || done.body["completed"] != float64(2) {
		t.Fatalf("the other gateway's status = %d %s", done.status, done.raw)
	}
	var got []string
	for _, d := range done.body["data"].([]any) {
		got = append(got, d.(map[string]any)["metadata"].(map[string]any)["title"].(string))
	}
	if !slices.Equal(got, []string{"Page 1", "Page 2"}) {
		t.Errorf("the other gateway's documents %v, want Page 1 and Page 2 in the order of the urls", got)
	}
	errs := call(t, "GET", b.URL+"/v2/batch/scrape/"+id+"/errors", "", nil)
	if list, _ := errs.body["errors"].([]any); len(list) != 1 || list[0].(map[string]any)["url"] != deadURL {
		t.Errorf("the other gateway's errors = %s", errs.raw)
	}

	// A batch that hangs at its page, cancelled at the other gateway,
	// stops where it runs: its runner ends, and its record says so.
	arrived := make(chan struct{})
	var once sync.Once
	hang := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(arrived) })
		<-r.Context().Done()
	}))
	t.Cleanup(func() {
		hang.CloseClientConnections()
		hang.Close()
	})
	start = call(t, "POST", a.URL+"/v2/batch/scrape", "", map[string]any{"urls": []string{hang.URL + "/slow"}})
	id, _ = start.body["id"].(string)
	if start.status != http.StatusOK || id == "" {
		t.Fatalf("start answered %d %s", start.status, start.raw)
	}
	ended := watchEnded(t, ns, id)
	<-arrived
	cancelled := call(t, "DELETE", b.URL+"/v2/batch/scrape/"+id, "", nil)
	if cancelled.status != http.StatusOK || cancelled.body["success"] != true || cancelled.body["status"] != "cancelled" {
		t.Fatalf("the other gateway's cancel answered %d %s", cancelled.status, cancelled.raw)
	}
	if _, ok := <-ended; !ok {
		t.Fatal("the cancelled batch's record went before its runner ended")
	}
	if _, last := watchToEnd(t, a.URL+"/v2/batch/scrape/"+id); last["type"] != "error" || !strings.Contains(last["error"].(string), "cancelled") {
		t.Errorf("the watch of the cancelled batch ended with %v", last)
	}
	if st := call(t, "GET", a.URL+"/v2/batch/scrape/"+id, "", nil); st.body["status"] != "cancelled" || st.body["completed"] != float64(0) {
		t.Errorf("the gateway running the cancelled batch says %s", st.raw)
	}
	// An id that is no key of the registry is no job.
	for _, bad := range []string{"a.b", "%3E", "%2A", "a%20b"} {
		if st := call(t, "GET", b.URL+"/v2/batch/scrape/"+bad, "", nil); st.status != http.StatusNotFound {
			t.Errorf("job %q answered %d %s", bad, st.status, st.raw)
		}
	}
}

// watchEnded is closed without a value if job id's record goes, and gets
// one once the process running the job says it ended, read from the job
// registry as any gateway reads it.
func watchEnded(t *testing.T, ns *natsembed.Server, id string) <-chan struct{} {
	t.Helper()
	nc, err := ns.Connect(t.Name() + "-registry")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	type ending struct {
		Ended bool `json:"ended"`
	}
	reg, err := crawljs.NewRegistry[ending](js, crawljs.RegistryConfig{Name: "firecrawl", TTL: firecrawl.DefaultJobTTL, Storage: jetstream.MemoryStorage})
	if err != nil {
		t.Fatal(err)
	}
	changes, err := reg.Watch(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	out := make(chan struct{}, 1)
	go func() {
		defer close(out)
		for rec := range changes {
			if rec.Ended {
				out <- struct{}{}
				return
			}
		}
	}()
	return out
}

// A crawl begun at one gateway is watched to its end and polled, with its
// documents and errors, at another.
func TestCrawlSharedAcrossGateways(t *testing.T) {
	t.Parallel()
	pages := site(t)
	ns, err := natsembed.Start(natsembed.Config{StoreDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ns.Shutdown)
	a, b := serveShared(t, ns, firecrawl.Config{}), serveShared(t, ns, firecrawl.Config{})
	start := call(t, "POST", a.URL+"/v2/crawl", "", map[string]any{"url": pages.URL + "/docs/", "limit": 20, "maxConcurrency": 2})
	id, _ := start.body["id"].(string)
	if start.status != http.StatusOK || id == "" {
		t.Fatalf("start answered %d %s", start.status, start.raw)
	}
	titles, last := watchToEnd(t, b.URL+"/v2/crawl/"+id)
	slices.Sort(titles)
	want := []string{"Doc 1", "Doc 2", "Doc 3", "Doc 4", "Doc 5", "Doc 6", "Docs"}
	if last["type"] != "done" || !slices.Equal(titles, want) {
		t.Errorf("the other gateway's watch was sent %v, then %v", titles, last)
	}
	done := call(t, "GET", b.URL+"/v2/crawl/"+id, "", nil)
	got, _ := crawlDocs(done)
	slices.Sort(got)
	if done.body["status"] != "completed" || done.body["completed"] != float64(7) || done.body["total"] != float64(8) || !slices.Equal(got, want) {
		t.Errorf("the other gateway's status = %s", done.raw)
	}
	errs := call(t, "GET", b.URL+"/v2/crawl/"+id+"/errors", "", nil)
	if list, _ := errs.body["errors"].([]any); len(list) != 1 || list[0].(map[string]any)["url"] != pages.URL+"/docs/blob" {
		t.Errorf("the other gateway's errors = %s", errs.raw)
	}
}
