package render

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/netpolicy"
)

// A host's allowlist, carried by the render's context, holds inside the
// browser: a port off the list is reached by no fetch, XHR, image, frame,
// redirect or WebSocket of the page, while a listed one (the page's CDN)
// is.
func TestRenderKeepsThePageInsideTheAllowlist(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	serveAsset := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		if r.URL.Path == "/img" {
			w.Header().Set("Content-Type", "image/gif")
			_, _ = w.Write([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"))
			return
		}
		_, _ = io.WriteString(w, "reached")
	})
	off := newHitCounter(t, serveAsset)
	cdn := newHitCounter(t, serveAsset)
	offBase := fmt.Sprintf("http://127.0.0.1:%d", off.port())
	cdnBase := fmt.Sprintf("http://127.0.0.1:%d", cdn.port())
	site := newHitCounter(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
		case "/probe":
			targets, _ := json.Marshal([]string{offBase, cdnBase})
			ws, _ := json.Marshal([]string{strings.Replace(offBase, "http:", "ws:", 1)})
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, "<!doctype html><title>probe</title><p>probe page</p><script>"+probeScript+"</script>", targets, ws, 9)
		}
	}))
	list, err := netpolicy.NewAllowlist([]string{"127.0.0.1"}, []string{"http"}, []int{site.port(), cdn.port()})
	if err != nil {
		t.Fatal(err)
	}
	r := New(slog.New(slog.NewTextHandler(io.Discard, nil)), WithAllowLocal(true))
	defer func() { _ = r.Close() }()
	req := localReq(fmt.Sprintf("http://127.0.0.1:%d/probe", site.port()), func(o *distillv1.FetchOptions) {
		o.JsWaitFor = "#done"
		o.TimeoutSecs = proto.Int32(30)
	})
	ctx, cancel := context.WithTimeout(netpolicy.WithAllowlist(context.Background(), list), 30*time.Second)
	defer cancel()
	res, err := r.Render(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.GetHtml()), `id="done"`) {
		t.Fatalf("the probe did not finish: %.300s", res.GetHtml())
	}
	if n := off.total(); n != 0 {
		t.Fatalf("the port off the allowlist was reached %d times (%v)", n, off.hits)
	}
	if cdn.count("/img") == 0 || cdn.count("/fetch") == 0 {
		t.Fatalf("the listed CDN was not reached: %v", cdn.hits)
	}

	// The first URL is judged before the browser is asked.
	_, err = r.Render(ctx, localReq(offBase+"/", nil))
	if err == nil || !strings.Contains(err.Error(), "not in the host's allowed") {
		t.Fatalf("a first URL off the list: %v", err)
	}
}

// An approved asset origin (the page's CDN, off the list itself) serves the
// page's images and scripts, and nothing else: no fetch, XHR, frame,
// redirect or WebSocket of the page reaches it, nor may a render start
// there.
func TestRenderLoadsAssetsFromApprovedOrigins(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	cdn := newHitCounter(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", "*")
		switch r.URL.Path {
		case "/img":
			w.Header().Set("Content-Type", "image/gif")
			_, _ = w.Write([]byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"))
		case "/app.js":
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = io.WriteString(w, "window.fromCDN = true;")
		default:
			_, _ = io.WriteString(w, "reached")
		}
	}))
	cdnBase := fmt.Sprintf("http://127.0.0.1:%d", cdn.port())
	site := newHitCounter(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
		case "/probe":
			targets, _ := json.Marshal([]string{cdnBase})
			ws, _ := json.Marshal([]string{strings.Replace(cdnBase, "http:", "ws:", 1)})
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, "<!doctype html><title>probe</title><p>probe page</p><script src=\"%s/app.js\"></script>"+
				"<script>document.title = window.fromCDN ? 'cdn script ran' : 'no cdn script';</script><script>"+probeScript+"</script>", cdnBase, targets, ws, 9)
		}
	}))
	base, err := netpolicy.NewAllowlist([]string{"127.0.0.1"}, []string{"http"}, []int{site.port()})
	if err != nil {
		t.Fatal(err)
	}
	list, err := base.WithAssetOrigins([]string{cdnBase})
	if err != nil {
		t.Fatal(err)
	}
	r := New(slog.New(slog.NewTextHandler(io.Discard, nil)), WithAllowLocal(true))
	defer func() { _ = r.Close() }()
	ctx, cancel := context.WithTimeout(netpolicy.WithAllowlist(context.Background(), list), 30*time.Second)
	defer cancel()
	res, err := r.Render(ctx, localReq(fmt.Sprintf("http://127.0.0.1:%d/probe", site.port()), func(o *distillv1.FetchOptions) {
		o.JsWaitFor = "#done"
		o.TimeoutSecs = proto.Int32(30)
	}))
	if err != nil {
		t.Fatal(err)
	}
	html := string(res.GetHtml())
	if !strings.Contains(html, `id="done"`) || !strings.Contains(html, "cdn script ran") {
		t.Fatalf("the probe did not finish with the CDN's script: %.400s", html)
	}
	if cdn.count("/img") == 0 || cdn.count("/app.js") == 0 {
		t.Fatalf("the page's assets were not loaded from the approved origin: %v", cdn.hits)
	}
	for _, path := range []string{"/fetch", "/xhr", "/frame", "/redirected", "/ws"} {
		if n := cdn.count(path); n != 0 {
			t.Errorf("%s reached the asset origin %d times", path, n)
		}
	}
	if _, err := r.Render(ctx, localReq(cdnBase+"/frame", nil)); err == nil {
		t.Fatal("a render started on an asset origin")
	}
}
