package render

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	distillv1 "distill.dev/proto/gen/distill/v1"
)

// captureSite serves a page that loads its data from its API, as an app
// does: with a bearer token and a token in the query, one request to an
// address the policy refuses, and (on /many) more responses and bytes than
// a capture keeps.
func captureSite(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/app", page(`<div id="out"></div><script>
		Promise.all([
			fetch('/api/user?id=7&access_token=s3cret', {headers: {Authorization: 'Bearer s3cret', 'X-Trace': 'abc'}}).then(r => r.json()),
			fetch('/api/items', {method: 'POST', body: 'q=1'}).then(r => r.text()),
			fetch('http://169.254.169.254/latest/meta-data/', {mode: 'no-cors'}).catch(() => 'refused'),
		]).then(v => { out.textContent = 'loaded'; });</script><img src="/pixel.gif">`))
	mux.HandleFunc("/api/user", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"name":"Ada"}`)
	})
	mux.HandleFunc("/api/items", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "items")
	})
	mux.HandleFunc("/pixel.gif", func(w http.ResponseWriter, _ *http.Request) { w.Header().Set("Content-Type", "image/gif") })
	mux.HandleFunc("/many", page(`<script>
		const all = [];
		for (let i = 0; i < 110; i++) all.push(fetch('/api/n/' + i).then(r => r.text()));
		for (let i = 0; i < 7; i++) all.push(fetch('/api/big/' + i).then(r => r.text()));
		Promise.all(all).then(() => { const d = document.createElement('p'); d.id = 'done'; document.body.append(d); });</script>`))
	mux.HandleFunc("/api/n/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "n") })
	mux.HandleFunc("/api/big/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat("é", 700_000)) // 1.4 MB
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestCaptureNetwork(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	srv := captureSite(t)

	render := func(t *testing.T, path string, mod func(o *distillv1.FetchOptions)) *distillv1.NetworkCapture {
		t.Helper()
		res, err := shared.Render(context.Background(), localReq(srv.URL+path, mod))
		if err != nil {
			t.Fatal(err)
		}
		if res.GetNetwork() == nil {
			t.Fatal("no capture")
		}
		return res.GetNetwork()
	}
	byPath := func(c *distillv1.NetworkCapture) map[string]*distillv1.CapturedResponse {
		out := map[string]*distillv1.CapturedResponse{}
		for _, r := range c.GetResponses() {
			out[strings.TrimPrefix(strings.SplitN(r.GetUrl(), "?", 2)[0], srv.URL)] = r
		}
		return out
	}

	t.Run("xhr and fetch, redacted", func(t *testing.T) {
		t.Parallel()
		c := byPath(render(t, "/app", func(o *distillv1.FetchOptions) { o.CaptureNetwork = proto.String("") }))
		if len(c) != 2 {
			t.Fatalf("captured %v, want /api/user and /api/items alone", c)
		}
		user := c["/api/user"]
		if user.GetBody() != `{"name":"Ada"}` || user.GetStatus() != 200 || user.GetMethod() != "GET" ||
			user.GetResourceType() != "fetch" || user.GetMimeType() != "application/json" {
			t.Errorf("user = %v", user)
		}
		if got := user.GetRequestHeaders()["Authorization"]; got != "[REDACTED]" {
			t.Errorf("Authorization = %q, want redacted", got)
		}
		if got := user.GetRequestHeaders()["X-Trace"]; got != "abc" {
			t.Errorf("X-Trace = %q, want kept", got)
		}
		if strings.Contains(user.GetUrl(), "s3cret") || !strings.Contains(user.GetUrl(), "id=7") {
			t.Errorf("url = %s, want the token's value redacted and the rest kept", user.GetUrl())
		}
		if items := c["/api/items"]; items.GetMethod() != "POST" || items.GetBody() != "items" {
			t.Errorf("items = %v", items)
		}
	})
	t.Run("credentials kept when asked", func(t *testing.T) {
		t.Parallel()
		c := byPath(render(t, "/app", func(o *distillv1.FetchOptions) {
			o.CaptureNetwork, o.CaptureCredentials = proto.String("user"), true
		}))
		user, ok := c["/api/user"]
		if len(c) != 1 || !ok {
			t.Fatalf("captured %v, want only what matches user", c)
		}
		if user.GetRequestHeaders()["Authorization"] != "Bearer s3cret" || !strings.Contains(user.GetUrl(), "access_token=s3cret") {
			t.Errorf("credentials not kept: %v", user)
		}
	})
	t.Run("other types", func(t *testing.T) {
		t.Parallel()
		c := byPath(render(t, "/app", func(o *distillv1.FetchOptions) { o.CaptureTypes = []string{"image", "document"} }))
		if c["/pixel.gif"] == nil || c["/app"] == nil || c["/api/user"] != nil {
			t.Errorf("captured %v, want the image and the document only", c)
		}
		if c["/pixel.gif"].Body != nil {
			t.Errorf("the image's body was kept")
		}
	})
	t.Run("limits", func(t *testing.T) {
		t.Parallel()
		c := render(t, "/many", func(o *distillv1.FetchOptions) {
			o.CaptureNetwork = proto.String("/api/")
			o.JsWaitFor = "#done"
			// 117 requests and 10 MB: room for a slow, shared machine.
			o.TimeoutSecs = proto.Int32(40)
		})
		if len(c.GetResponses()) != MaxCaptured || !c.GetTruncated() {
			t.Fatalf("%d responses, truncated %v; want %d and truncated", len(c.GetResponses()), c.GetTruncated(), MaxCaptured)
		}
		total := 0
		for _, r := range c.GetResponses() {
			if len(r.GetBody()) > MaxCapturedBody {
				t.Errorf("%s body %d bytes, over %d", r.GetUrl(), len(r.GetBody()), MaxCapturedBody)
			}
			if strings.Contains(r.GetUrl(), "/big/") && !r.GetTruncated() {
				t.Errorf("%s not marked truncated", r.GetUrl())
			}
			total += len(r.GetBody())
		}
		if total > MaxCapturedTotal {
			t.Errorf("bodies total %d bytes, over %d", total, MaxCapturedTotal)
		}
	})
}
