package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/mapsite"
	"distill.dev/services/fetcher/pipeline"
	"distill.dev/services/platform/netpolicy"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func site(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<html><head><title>%s</title></head><body><article><p>%s</p></article></body></html>",
			r.URL.Path, strings.Repeat("Words enough to make this page worth reading. ", 20))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// The zero Config is every service in this process: pages, batches over
// the embedded queue, the cache where asked, sessions in memory, always
// ready; after Close, a batch is refused.
func TestOpenInThisProcess(t *testing.T) {
	t.Parallel()
	pages := site(t)
	dir := t.TempDir()
	sys, err := Open(t.Context(), quiet, Config{UserAgentVersion: "test", Workers: 2, CacheDir: dir, AllowLocal: true})
	if err != nil {
		t.Fatal(err)
	}
	opts := &distillv1.FetchOptions{AllowLocal: true, Js: distillv1.JsMode_JS_MODE_OFF}

	res, err := sys.Do(t.Context(), pipeline.Request{URL: pages.URL + "/one", Options: opts})
	if err != nil || res.Distilled.GetTitle() != "/one" {
		t.Fatalf("Do = %v, %v; want the page titled /one", res, err)
	}
	urls := []string{pages.URL + "/a", pages.URL + "/b", pages.URL + "/c"}
	got := map[int32]string{}
	if err := sys.Batch(t.Context(), urls, opts, func(r *internalv1.FetchJobResult) { got[r.GetIndex()] = r.GetResult().GetTitle() }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0] != "/a" || got[1] != "/b" || got[2] != "/c" {
		t.Fatalf("batch answered %v", got)
	}
	if _, _, cacheDir, err := sys.CacheInfo(t.Context()); err != nil || cacheDir != dir {
		t.Fatalf("cache in %q (%v), want %q", cacheDir, err, dir)
	}
	if err := sys.Ready(t.Context()); err != nil {
		t.Fatalf("Ready = %v", err)
	}
	if n, _ := sys.Sessions().Limits(); n <= 0 {
		t.Fatalf("the in-memory session store allows %d sessions", n)
	}

	if err := sys.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sys.Batch(context.Background(), urls, opts, func(*internalv1.FetchJobResult) {}); err == nil {
		t.Fatal("a batch after Close was accepted")
	}
}

// A gateway cannot run without NATS, the fetcher, the extractor and the
// sessions' key, and says which is missing before connecting to anything.
func TestOpenClusterNamesWhatItLacks(t *testing.T) {
	t.Parallel()
	key := make([]byte, 32)
	full := ClusterConfig{NATSURL: "nats://127.0.0.1:1", FetcherAddr: "127.0.0.1:2", ExtractorAddr: "127.0.0.1:3", SessionKey: key}
	for _, tc := range []struct {
		name string
		edit func(*ClusterConfig)
		want string
	}{
		{"no key", func(c *ClusterConfig) { c.SessionKey = nil }, "needs their key"},
		{"no NATS", func(c *ClusterConfig) { c.NATSURL = "" }, "needs NATS URLs (--nats)"},
		{"no fetcher", func(c *ClusterConfig) { c.FetcherAddr = "" }, "needs the fetcher's address (--fetcher)"},
		{"no extractor", func(c *ClusterConfig) { c.ExtractorAddr = "" }, "needs the extractor's address (--extractor)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := full
			tc.edit(&cfg)
			_, err := Open(t.Context(), quiet, Config{Cluster: &cfg})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open = %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// allow_local is the operator's: without Config.AllowLocal a request that
// asks for it is refused, a page, a session step and a batch alike,
// before anything is fetched.
func TestOpenRefusesAllowLocalUnlessAllowed(t *testing.T) {
	t.Parallel()
	pages := site(t)
	sys, err := Open(t.Context(), quiet, Config{UserAgentVersion: "test", Workers: 2, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sys.Close() }()
	opts := &distillv1.FetchOptions{AllowLocal: true, Js: distillv1.JsMode_JS_MODE_OFF}
	_, err = sys.Do(t.Context(), pipeline.Request{URL: pages.URL + "/one", Options: opts})
	if failure.CodeOf(err) != failure.InvalidArgument || err.Error() != failure.AllowLocalMessage {
		t.Errorf("Do = %v, want %q", err, failure.AllowLocalMessage)
	}
	err = sys.Batch(t.Context(), []string{pages.URL + "/a"}, opts, func(*internalv1.FetchJobResult) { t.Error("a batch item was delivered") })
	if failure.CodeOf(err) != failure.InvalidArgument || err.Error() != failure.AllowLocalMessage {
		t.Errorf("Batch = %v, want %q", err, failure.AllowLocalMessage)
	}
	_, err = sys.Map(t.Context(), mapsite.Request{URL: pages.URL + "/", AllowLocal: true})
	if failure.CodeOf(err) != failure.InvalidArgument || err.Error() != failure.AllowLocalMessage {
		t.Errorf("Map = %v, want %q", err, failure.AllowLocalMessage)
	}
	// Without allow_local the policy refuses loopback as ever.
	_, err = sys.Do(t.Context(), pipeline.Request{URL: pages.URL + "/one", Options: &distillv1.FetchOptions{Js: distillv1.JsMode_JS_MODE_OFF}})
	if failure.CodeOf(err) != failure.Blocked {
		t.Errorf("Do without allow_local = %v, want Blocked", err)
	}
	_, err = sys.Map(t.Context(), mapsite.Request{URL: pages.URL + "/"})
	if failure.CodeOf(err) != failure.Blocked {
		t.Errorf("Map without allow_local = %v, want Blocked", err)
	}
}

// The renderer's egress proxies are this process's own listeners too: a
// fetch aimed at one while it serves a render is refused, allow_local or
// not.
func TestOpenNeverFetchesARendersProxy(t *testing.T) {
	t.Parallel()
	hung := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hang.js" {
			select {
			case hung <- struct{}{}:
			default:
			}
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return
		}
		fmt.Fprint(w, `<!doctype html><title>held</title><main><p>A page whose script is held.</p></main><script src="/hang.js"></script>`)
	}))
	defer srv.Close()
	own := netpolicy.NewOwn()
	sys, err := Open(t.Context(), quiet, Config{UserAgentVersion: "test", CacheDir: t.TempDir(), AllowLocal: true, Own: own})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sys.Close() }()

	rendered := make(chan error, 1)
	go func() {
		_, err := sys.Do(context.Background(), pipeline.Request{URL: srv.URL + "/", Options: &distillv1.FetchOptions{
			AllowLocal: true, Js: distillv1.JsMode_JS_MODE_ALWAYS, NoCache: true, TimeoutSecs: proto.Int32(60),
		}})
		rendered <- err
	}()
	select {
	case <-hung:
	case err := <-rendered:
		t.Fatalf("the render ended before its script was requested: %v", err)
	}
	var proxies []string
	for _, a := range own.Addrs() {
		if a.What == "render egress proxy" {
			proxies = append(proxies, a.Addr.String())
		}
	}
	if len(proxies) == 0 {
		t.Fatalf("no egress proxy among the process's own listeners while a render runs: %v", own.Addrs())
	}
	for _, p := range proxies {
		_, err := sys.Do(t.Context(), pipeline.Request{URL: "http://" + p + "/", Options: &distillv1.FetchOptions{AllowLocal: true, Js: distillv1.JsMode_JS_MODE_OFF, NoCache: true}})
		if failure.CodeOf(err) != failure.Blocked || !strings.Contains(err.Error(), "distill's own render egress proxy") {
			t.Errorf("fetch of the render's proxy %s: %v, want Blocked", p, err)
		}
	}
	close(release)
	if err := <-rendered; err != nil {
		t.Errorf("render: %v", err)
	}
}
