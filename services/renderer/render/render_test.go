package render

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func discard() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func page(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<!doctype html><html><head><title>t</title></head><body>"+body+"</body></html>")
	}
}

func localReq(u string, mod func(*distillv1.FetchOptions)) *internalv1.RenderRequest {
	o := &distillv1.FetchOptions{AllowLocal: true, TimeoutSecs: proto.Int32(10)}
	if mod != nil {
		mod(o)
	}
	return &internalv1.RenderRequest{Url: u, Options: o}
}

// ourProcesses counts processes started with dir as their profile. Every
// instance has a profile directory of its own, so the count is of one
// browser's processes, never the shared one's.
func ourProcesses(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range cmdlines {
		b, err := os.ReadFile(f)
		if err == nil && strings.Contains(string(b), dir) {
			n++
		}
	}
	return n
}

// requireChromium fails the test when there is no browser to drive: the
// renderer's tests run against the real one (apt-get install chromium).
func requireChromium(t *testing.T) {
	t.Helper()
	if err := shared.Ready(t.Context()); err != nil {
		t.Fatalf("%v: install Debian's chromium package", err)
	}
}

// Ready needs no browser running, only the binary one would be launched
// from, and fails once the renderer is closed.
func TestReady(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "chromium")
	if err := os.WriteFile(bin, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "no-chromium")

	t.Run("binary present", func(t *testing.T) {
		r := New(discard(), WithChromium(bin), WithAllowLocal(true))
		defer func() { _ = r.Close() }()
		if err := r.Ready(t.Context()); err != nil {
			t.Fatalf("Ready = %v, want nil", err)
		}
	})
	t.Run("binary missing", func(t *testing.T) {
		r := New(discard(), WithChromium(missing), WithAllowLocal(true))
		defer func() { _ = r.Close() }()
		err := r.Ready(t.Context())
		if err == nil || !strings.Contains(err.Error(), "chromium not found at "+missing) {
			t.Fatalf("Ready = %v, want chromium not found at %s", err, missing)
		}
	})
	// Only mains read the environment: a library that read it too would
	// override what its main was told on the command line.
	t.Run("default binary, whatever the environment says", func(t *testing.T) {
		t.Setenv("DISTILL_CHROMIUM", missing)
		r := New(discard(), WithAllowLocal(true))
		defer func() { _ = r.Close() }()
		if err := r.Ready(t.Context()); err != nil && !strings.Contains(err.Error(), "chromium not found at "+DefaultChromium) {
			t.Fatalf("Ready = %v, want %s looked for, not the binary DISTILL_CHROMIUM names", err, DefaultChromium)
		}
	})
	t.Run("closed", func(t *testing.T) {
		r := New(discard(), WithChromium(bin), WithAllowLocal(true))
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if err := r.Ready(t.Context()); err == nil || !strings.Contains(err.Error(), "closed") {
			t.Fatalf("Ready after Close = %v, want an error saying it is closed", err)
		}
	})
}

// waitGone fails unless every process using the profile dir exits soon.
func waitGone(t *testing.T, dir string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for ourProcesses(t, dir) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := ourProcesses(t, dir); n > 0 {
		t.Fatalf("%d chromium processes still use %s", n, dir)
	}
}

// site is the loopback site the render tests load, with an API server of
// its own. Each test starts its own, so no other test's renders move its
// hit counters.
type site struct {
	URL string
	// apiHits counts requests to the API, pageHits those for /calls.
	apiHits, pageHits atomic.Int32
	// hung receives once a render's request for /hang arrives; the request
	// is held until the test ends.
	hung chan struct{}
}

func newSite(t *testing.T) *site {
	t.Helper()
	s := &site{hung: make(chan struct{}, 1)}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		s.apiHits.Add(1)
		w.Header().Set("Access-Control-Allow-Origin", "*")
		_, _ = io.WriteString(w, "api-ok")
	}))
	t.Cleanup(api.Close)

	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/shell", page(`<div id="app">loading</div><script>
		setTimeout(() => { document.getElementById('app').innerHTML = '<p>Rendered by script</p>' }, 200)</script>`))
	mux.HandleFunc("/late", page(`<script>
		setTimeout(() => { const d = document.createElement('div'); d.id = 'late'; d.textContent = 'arrived late'; document.body.append(d) }, 300)</script>`))
	mux.HandleFunc("/missing", func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, "<html><body><p>no such page here</p></body></html>")
	})
	mux.HandleFunc("/calls", func(w http.ResponseWriter, r *http.Request) {
		s.pageHits.Add(1)
		page(`<div id="api">pending</div><div id="private">pending</div><script>
		const get = (u, o) => fetch(u, o).then(r => r.text()).then(t => 'ok:' + t, () => 'blocked');
		// no-cors: an opaque answer still resolves, so only a refused request reads as blocked.
		Promise.all([
			get('`+api.URL+`/data'),
			get('http://10.0.0.1/', {mode: 'no-cors'}),
			get('http://169.254.169.254/latest/meta-data/', {mode: 'no-cors'}),
		]).then(([a, p, m]) => {
			document.getElementById('api').textContent = a;
			document.getElementById('private').textContent = p + '|' + m;
			const d = document.createElement('div'); d.id = 'done'; document.body.append(d);
		});</script>`)(w, r)
	})
	mux.HandleFunc("/to-private", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://10.0.0.1/redirected", http.StatusFound)
	})
	// Pages that, once loaded, send themselves to a blocked address: by
	// script, by a refresh, and while the render waits for a selector.
	mux.HandleFunc("/self-to-private", page(`<p>first page</p><script>setTimeout(() => { location = 'http://10.0.0.1/' }, 50)</script>`))
	mux.HandleFunc("/refresh-to-metadata", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, `<!doctype html><html><head><meta http-equiv="refresh" content="0;url=http://169.254.169.254/latest/meta-data/"></head><body><p>first page</p></body></html>`)
	})
	mux.HandleFunc("/self-to-private-later", page(`<p>first page</p><script>setTimeout(() => { location = 'http://192.168.7.7/' }, 300)</script>`))
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		s.hung <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/members", page(`<div id="who">checking</div><script>
		fetch('/api/me').then(r => r.text()).then(t => {
			document.getElementById('who').textContent = t;
			const d = document.createElement('div'); d.id = 'done'; document.body.append(d);
		});</script>`))
	mux.HandleFunc("/api/me", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("sid"); err == nil && c.Value == "s3cret" {
			_, _ = io.WriteString(w, "member: alice")
			return
		}
		_, _ = io.WriteString(w, "anonymous")
	})
	// Hidden, so that laying out 17 million characters does not eat the
	// render's time before the cap is reached.
	mux.HandleFunc("/huge", page(`<div id="big" hidden></div><script>document.getElementById('big').textContent = 'x'.repeat(17 * 1024 * 1024)</script>`))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	// Cleanups run last first: held requests are let go before the server
	// waits for them.
	t.Cleanup(func() { close(release) })
	s.URL = srv.URL
	return s
}

// waitHung returns once the render's request for /hang has arrived. A
// render that ends first fails the test rather than leaving it waiting.
func (s *site) waitHung(t *testing.T, errc <-chan error) {
	t.Helper()
	select {
	case <-s.hung:
	case err := <-errc:
		t.Fatalf("the render ended before it requested its page: %v", err)
	}
}

// who renders the site's members page with cookies and returns whom the
// page says the session belongs to.
func (s *site) who(t *testing.T, r *Renderer, cookies ...*internalv1.Cookie) string {
	t.Helper()
	req := localReq(s.URL+"/members", func(o *distillv1.FetchOptions) { o.JsWaitFor = "#done" })
	req.Cookies = cookies
	res, err := r.Render(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	html := string(res.GetHtml())
	for _, w := range []string{"member: alice", "anonymous"} {
		if strings.Contains(html, w) {
			return w
		}
	}
	t.Fatalf("no answer on the page:\n%s", html)
	return ""
}

// TestRender renders in the shared browser, every case in a browser
// context of its own and alongside the others.
func TestRender(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	r := shared
	ctx := context.Background()

	t.Run("app shell renders with its scripted content", func(t *testing.T) {
		t.Parallel()
		s := newSite(t)
		res, err := r.Render(ctx, localReq(s.URL+"/shell", nil))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(res.GetHtml()), "Rendered by script") {
			t.Fatalf("html lacks scripted content:\n%s", res.GetHtml())
		}
		if res.GetStatus() != 200 || res.GetFinalUrl() != s.URL+"/shell" {
			t.Fatalf("status %d final %q", res.GetStatus(), res.GetFinalUrl())
		}
	})

	t.Run("status of the main document", func(t *testing.T) {
		t.Parallel()
		s := newSite(t)
		res, err := r.Render(ctx, localReq(s.URL+"/missing", nil))
		if err != nil {
			t.Fatal(err)
		}
		if res.GetStatus() != 404 {
			t.Fatalf("status %d, want 404", res.GetStatus())
		}
	})

	t.Run("js_wait_for waits for a late selector", func(t *testing.T) {
		t.Parallel()
		s := newSite(t)
		res, err := r.Render(ctx, localReq(s.URL+"/late", func(o *distillv1.FetchOptions) {
			o.JsWaitFor = "#late"
			o.JsWait = proto.Int32(1) // the selector, not network quiet, must hold the render
		}))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(res.GetHtml()), "arrived late") {
			t.Fatalf("html lacks the late element:\n%s", res.GetHtml())
		}
	})

	t.Run("js_wait_for a selector that never appears times out", func(t *testing.T) {
		t.Parallel()
		s := newSite(t)
		// Long enough for the page to load while other renders share the
		// browser: the time must run out waiting for the selector.
		_, err := r.Render(ctx, localReq(s.URL+"/late", func(o *distillv1.FetchOptions) {
			o.JsWaitFor = "#never"
			o.TimeoutSecs = proto.Int32(5)
		}))
		if failure.CodeOf(err) != failure.Timeout || !strings.Contains(err.Error(), `"#never" did not appear`) {
			t.Fatalf("err = %v (%v), want Timeout naming the selector", err, failure.CodeOf(err))
		}
	})

	t.Run("page requests obey the network policy", func(t *testing.T) {
		t.Parallel()
		s := newSite(t)
		res, err := r.Render(ctx, localReq(s.URL+"/calls", func(o *distillv1.FetchOptions) { o.JsWaitFor = "#done" }))
		if err != nil {
			t.Fatal(err)
		}
		html := string(res.GetHtml())
		if !strings.Contains(html, `<div id="api">ok:api-ok</div>`) {
			t.Errorf("loopback API call with allow_local did not succeed:\n%s", html)
		}
		if !strings.Contains(html, `<div id="private">blocked|blocked</div>`) {
			t.Errorf("private and metadata calls were not blocked:\n%s", html)
		}
		// The whole URL up to the next attribute: no other test's page
		// asks for exactly these.
		for _, refused := range []string{"url=http://10.0.0.1/ err=", "url=http://169.254.169.254/latest/meta-data/ err="} {
			if !strings.Contains(sharedLogs.String(), refused) {
				t.Errorf("no refusal logged for %s", refused)
			}
		}
		if s.apiHits.Load() != 1 {
			t.Errorf("api hits = %d, want 1", s.apiHits.Load())
		}
	})

	t.Run("without allow_local loopback is refused before the browser dials", func(t *testing.T) {
		t.Parallel()
		s := newSite(t)
		req := localReq(s.URL+"/calls", nil)
		req.Options.AllowLocal = false
		_, err := r.Render(ctx, req)
		if failure.CodeOf(err) != failure.Blocked {
			t.Fatalf("err = %v, want Blocked", err)
		}
		if s.pageHits.Load() != 0 || s.apiHits.Load() != 0 {
			t.Fatalf("servers were reached: page %d api %d", s.pageHits.Load(), s.apiHits.Load())
		}
	})

	t.Run("redirect to a private address is blocked", func(t *testing.T) {
		t.Parallel()
		s := newSite(t)
		_, err := r.Render(ctx, localReq(s.URL+"/to-private", nil))
		if failure.CodeOf(err) != failure.Blocked {
			t.Fatalf("err = %v (%v), want Blocked", err, failure.CodeOf(err))
		}
	})

	// Chromium shows its own error page for a navigation the guard
	// refused; that page is not the content asked for.
	for _, tt := range []struct {
		name, path, waitFor, blocked string
	}{
		{"a page that sends itself to a private address after load is blocked", "/self-to-private", "", "10.0.0.1"},
		{"a page that refreshes to the metadata endpoint is blocked", "/refresh-to-metadata", "", "169.254.169.254"},
		{"a page that leaves for a private address while the render waits for a selector is blocked", "/self-to-private-later", "#never", "192.168.7.7"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newSite(t)
			res, err := r.Render(ctx, localReq(s.URL+tt.path, func(o *distillv1.FetchOptions) { o.JsWaitFor = tt.waitFor }))
			if failure.CodeOf(err) != failure.Blocked || !strings.Contains(err.Error(), tt.blocked) {
				t.Fatalf("err = %v (%v), want Blocked naming %s; the render returned %d bytes of %s", err, failure.CodeOf(err), tt.blocked, len(res.GetHtml()), res.GetFinalUrl())
			}
			t.Log(err)
		})
	}

	t.Run("a session's cookies reach the page and leave with its context", func(t *testing.T) {
		t.Parallel()
		s := newSite(t)
		sid := &internalv1.Cookie{Name: "sid", Value: "s3cret", Path: "/", HttpOnly: true}
		if got := s.who(t, r, sid); got != "member: alice" {
			t.Fatalf("with the session cookie the page says %q", got)
		}
		if got := s.who(t, r); got != "anonymous" {
			t.Fatalf("the next render without cookies says %q: the cookie outlived its context", got)
		}
		if strings.Contains(sharedLogs.String(), "s3cret") {
			t.Fatal("a cookie value reached the log")
		}
	})

	t.Run("a DOM over the cap is refused", func(t *testing.T) {
		t.Parallel()
		s := newSite(t)
		_, err := r.Render(ctx, localReq(s.URL+"/huge", nil))
		if failure.CodeOf(err) != failure.TooLarge || !strings.Contains(err.Error(), "over the 16777216 byte limit") {
			t.Fatalf("err = %v (%v), want TooLarge", err, failure.CodeOf(err))
		}
	})
}

// WithoutCookies renders anonymously whatever cookies the request carries.
func TestRenderWithoutCookies(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	s := newSite(t)
	logs := &syncBuffer{}
	r := New(slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), WithoutCookies(), WithAllowLocal(true))
	defer func() { _ = r.Close() }()
	sid := &internalv1.Cookie{Name: "sid", Value: "s3cret", Path: "/", HttpOnly: true}
	if got := s.who(t, r, sid); got != "anonymous" {
		t.Fatalf("WithoutCookies: the page says %q, want anonymous", got)
	}
	if strings.Contains(logs.String(), "s3cret") {
		t.Fatal("a cookie value reached the log")
	}
}

// TestRenderReplacesAFailedBrowser hangs, kills and closes a browser of its
// own, in that order.
func TestRenderReplacesAFailedBrowser(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	s := newSite(t)
	r := New(discard(), WithAllowLocal(true))
	closed := false
	defer func() {
		if !closed {
			_ = r.Close()
		}
	}()
	ctx := context.Background()

	t.Run("a hung browser fails the render in flight and is replaced", func(t *testing.T) {
		if _, err := r.Render(ctx, localReq(s.URL+"/shell", nil)); err != nil {
			t.Fatal(err)
		}
		r.mu.Lock()
		inst := r.inst
		r.mu.Unlock()
		errc := make(chan error, 1)
		go func() {
			// The timeout is all the render has to request its page, on a
			// machine other tests load, and what it waits once the browser
			// stops answering.
			_, err := r.Render(ctx, localReq(s.URL+"/hang", func(o *distillv1.FetchOptions) { o.TimeoutSecs = proto.Int32(5) }))
			errc <- err
		}()
		s.waitHung(t, errc)
		if err := syscall.Kill(inst.pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		err := <-errc
		if failure.CodeOf(err) != failure.RenderFailed || !strings.Contains(err.Error(), "stopped answering") {
			t.Fatalf("in-flight err = %v (%v), want RenderFailed", err, failure.CodeOf(err))
		}
		<-inst.exited
		waitGone(t, inst.dataDir)
		res, err := r.Render(ctx, localReq(s.URL+"/shell", nil))
		if err != nil || !strings.Contains(string(res.GetHtml()), "Rendered by script") {
			t.Fatalf("render after the hang: %v", err)
		}
	})

	t.Run("a crash fails the render in flight and the next one relaunches", func(t *testing.T) {
		r.mu.Lock()
		inst := r.inst
		r.mu.Unlock()
		errc := make(chan error, 1)
		go func() {
			_, err := r.Render(ctx, localReq(s.URL+"/hang", nil))
			errc <- err
		}()
		s.waitHung(t, errc)
		if err := syscall.Kill(inst.pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		if err := <-errc; failure.CodeOf(err) != failure.RenderFailed {
			t.Fatalf("in-flight err = %v (%v), want RenderFailed", err, failure.CodeOf(err))
		}
		<-inst.exited
		// Killing the browser's main process takes its children with it.
		waitGone(t, inst.dataDir)
		res, err := r.Render(ctx, localReq(s.URL+"/shell", nil))
		if err != nil {
			t.Fatalf("render after crash: %v", err)
		}
		if !strings.Contains(string(res.GetHtml()), "Rendered by script") {
			t.Fatal("render after crash lacks content")
		}
	})

	t.Run("close leaves no chromium of ours", func(t *testing.T) {
		r.mu.Lock()
		dir := r.inst.dataDir
		r.mu.Unlock()
		if n := ourProcesses(t, dir); n == 0 {
			t.Fatalf("no process uses %s before Close; the count proves nothing", dir)
		}
		closed = true
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		waitGone(t, dir)
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Fatalf("profile %s not removed: %v", dir, err)
		}
		if _, err := r.Render(ctx, localReq(s.URL+"/shell", nil)); failure.CodeOf(err) != failure.RenderFailed {
			t.Fatalf("render after Close: %v", err)
		}
	})
}

func TestRenderWithoutChromium(t *testing.T) {
	t.Parallel()
	r := New(discard(), WithChromium("/nonexistent/chromium"), WithAllowLocal(true))
	defer r.Close()
	_, err := r.Render(context.Background(), localReq("http://127.0.0.1:1/", nil))
	if failure.CodeOf(err) != failure.RenderFailed || !strings.Contains(err.Error(), "chromium not found at /nonexistent/chromium") {
		t.Fatalf("err = %v, want RenderFailed naming the path", err)
	}
}

func TestRenderHonoursCancelledContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := shared.Render(ctx, &internalv1.RenderRequest{Url: "http://127.0.0.1/"})
	if got := failure.CodeOf(err); got != failure.Canceled {
		t.Fatalf("code = %v, want Canceled", got)
	}
}

func TestRenderCapsConcurrentPages(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	arrived := make(chan string, 3)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- r.URL.Path
		<-release
		page("<p>done</p>")(w, r)
	}))
	defer srv.Close()
	r := New(discard(), WithMaxPages(2), WithAllowLocal(true))
	defer func() { _ = r.Close() }()

	errs := make(chan error, 3)
	for _, p := range []string{"/a", "/b", "/c"} {
		go func() {
			// The third render's time runs while it waits for a page.
			_, err := r.Render(context.Background(), localReq(srv.URL+p, func(o *distillv1.FetchOptions) { o.TimeoutSecs = proto.Int32(30) }))
			errs <- err
		}()
	}
	for range 2 {
		select {
		case <-arrived:
		case <-time.After(20 * time.Second):
			t.Fatal("two renders did not start")
		}
	}
	select {
	case p := <-arrived:
		t.Fatalf("a third page (%s) was opened while two were rendering", p)
	case <-time.After(500 * time.Millisecond):
	}
	close(release)
	select {
	case <-arrived:
	case <-time.After(20 * time.Second):
		t.Fatal("the third render never started after a slot freed")
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
