package fetch

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	neturl "net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/platform/netpolicy"
	"distill.dev/services/platform/netpolicy/netpolicytest"
)

const page = "<!doctype html><html><head><title>t</title></head><body><p>hello</p></body></html>"

func newFetcher(t *testing.T, opts ...Option) *Fetcher {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
	// Loopback is where the test servers are: the operator allows it, as
	// distill fetch --allow-local does.
	opts = append([]Option{WithBackoff(time.Millisecond, 5*time.Millisecond), WithAllowLocal(true)}, opts...)
	f := New(logger, opts...)
	t.Cleanup(f.Close)
	return f
}

// local returns options allowing loopback, where httptest servers live.
func local() *distillv1.FetchOptions {
	return &distillv1.FetchOptions{AllowLocal: true}
}

func ptr[T any](v T) *T { return &v }

func get(t *testing.T, f *Fetcher, url string, o *distillv1.FetchOptions) (*internalv1.FetcherServiceFetchResponse, error) {
	t.Helper()
	return f.Fetch(t.Context(), &internalv1.FetcherServiceFetchRequest{Url: url, Options: o})
}

func mustGet(t *testing.T, f *Fetcher, url string, o *distillv1.FetchOptions) *internalv1.FetcherServiceFetchResponse {
	t.Helper()
	resp, err := get(t, f, url, o)
	if err != nil {
		t.Fatalf("fetch %s: %v", url, err)
	}
	return resp
}

// wantFailure checks err is a *failure.Error of code whose message holds
// every part.
func wantFailure(t *testing.T, err error, code distillv1.ErrorCode, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s", code)
	}
	fe, ok := errors.AsType[*failure.Error](err)
	if !ok {
		t.Fatalf("error %T %v is not a *failure.Error", err, err)
	}
	if fe.Code != code {
		t.Fatalf("code %s, want %s: %v", fe.Code, code, err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Fatalf("message is not one line: %q", msg)
	}
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Fatalf("message %q does not mention %q", msg, p)
		}
	}
}

// serve starts a loopback server and counts the requests it gets.
func serve(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var hits atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, &hits
}

func html(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func TestFetchSuccess(t *testing.T) {
	t.Parallel()
	var seen http.Header
	var method string
	ts, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		seen, method = r.Header.Clone(), r.Method
		html(w, http.StatusOK, page)
	})
	f := newFetcher(t, WithUserAgent("1.2.3"))
	resp := mustGet(t, f, ts.URL+"/page?q=1", local())

	if resp.GetStatus() != 200 || resp.GetContentType() != "text/html" || string(resp.GetBody()) != page {
		t.Fatalf("got status %d type %q body %q", resp.GetStatus(), resp.GetContentType(), resp.GetBody())
	}
	if resp.GetFinalUrl() != ts.URL+"/page?q=1" || len(resp.GetRedirectHistory()) != 0 || resp.GetFromCache() {
		t.Fatalf("got final_url %q history %v from_cache %v", resp.GetFinalUrl(), resp.GetRedirectHistory(), resp.GetFromCache())
	}
	want := map[string]string{
		"User-Agent":      "distill/1.2.3 (+https://distill.dev)",
		"Accept":          "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
		"Accept-Language": "en-US,en;q=0.9",
		"Accept-Encoding": "gzip, deflate, br, zstd",
	}
	for k, v := range want {
		t.Run(k, func(t *testing.T) {
			if got := seen.Get(k); got != v {
				t.Fatalf("%s: got %q, want %q", k, got, v)
			}
		})
	}
	if method != http.MethodGet {
		t.Fatalf("method %s, want GET", method)
	}
}

func TestFetchDecodesContentEncoding(t *testing.T) {
	t.Parallel()
	gz := func(w io.Writer) io.WriteCloser { return gzip.NewWriter(w) }
	tests := []struct {
		name     string
		encoding string
		encode   func(io.Writer) io.WriteCloser // nil: sent as is
	}{
		{name: "gzip", encoding: "gzip", encode: gz},
		{name: "x-gzip spelling", encoding: "x-gzip", encode: gz},
		{name: "upper-case GZIP", encoding: "GZIP", encode: gz},
		{name: "deflate as zlib", encoding: "deflate", encode: func(w io.Writer) io.WriteCloser { return zlib.NewWriter(w) }},
		{name: "deflate raw", encoding: "deflate", encode: func(w io.Writer) io.WriteCloser {
			zw, _ := flate.NewWriter(w, flate.DefaultCompression)
			return zw
		}},
		{name: "gzip over gzip", encoding: "gzip, gzip", encode: func(w io.Writer) io.WriteCloser { return nested(gzip.NewWriter(w)) }},
		{name: "identity", encoding: "identity"},
	}
	f := newFetcher(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ts, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.Header().Set("Content-Encoding", tt.encoding)
				if tt.encode == nil {
					_, _ = io.WriteString(w, page)
					return
				}
				zw := tt.encode(w)
				_, _ = io.WriteString(zw, page)
				_ = zw.Close()
			})
			resp := mustGet(t, f, ts.URL, local())
			if string(resp.GetBody()) != page {
				t.Fatalf("body %q, want the decoded page", resp.GetBody())
			}
		})
	}
	t.Run("unrequested encoding", func(t *testing.T) {
		ts, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Encoding", "compress")
			_, _ = io.WriteString(w, "\x1f\x9d")
		})
		_, err := get(t, f, ts.URL, local())
		wantFailure(t, err, failure.UnsupportedContent, "content encoding compress")
	})
}

// nested gzips what is written twice over, for a "gzip, gzip" body.
func nested(outer *gzip.Writer) io.WriteCloser {
	return &stacked{inner: gzip.NewWriter(outer), outer: outer}
}

func TestFetchBlocked(t *testing.T) {
	t.Parallel()
	ts, hits := serve(t, func(w http.ResponseWriter, r *http.Request) { html(w, 200, page) })
	port := ts.Listener.Addr().(*net.TCPAddr).Port
	tests := []struct {
		name  string
		url   string
		opts  *distillv1.FetchOptions
		parts []string
	}{
		{name: "loopback without allow_local", url: ts.URL + "/", parts: []string{"fetch " + ts.URL + "/: blocked by network policy: 127.0.0.1 (loopback 127.0.0.0/8)"}},
		{name: "loopback decimal", url: fmt.Sprintf("http://2130706433:%d/", port), parts: []string{"2130706433 is 127.0.0.1"}},
		{name: "loopback hex short", url: fmt.Sprintf("http://0x7f.1:%d/", port), parts: []string{"is 127.0.0.1"}},
		{name: "localhost", url: fmt.Sprintf("http://localhost:%d/", port), parts: []string{"localhost (loopback name)"}},
		{name: "loopback IPv4-mapped", url: fmt.Sprintf("http://[::ffff:127.0.0.1]:%d/", port), parts: []string{"carrying 127.0.0.1"}},
		{name: "private", url: "http://10.0.0.1/", parts: []string{"fetch http://10.0.0.1/: blocked by network policy: 10.0.0.1 (private range 10.0.0.0/8)"}},
		{name: "metadata despite allow_local", url: "http://169.254.169.254/latest/meta-data/", opts: local(), parts: []string{"cloud metadata"}},
		{name: "private despite allow_local", url: "http://192.168.1.1/", opts: local(), parts: []string{"192.168.1.1 (private range"}},
	}
	f := newFetcher(t)
	// Every spelling, under every browser profile, over both schemes: a
	// profile's transport dials through the same guard.
	for _, browser := range fetchopts.BrowserProfiles() {
		for _, scheme := range []string{"http", "https"} {
			for _, tt := range tests {
				t.Run(browser+"/"+scheme+"/"+tt.name, func(t *testing.T) {
					opts := &distillv1.FetchOptions{}
					if tt.opts != nil {
						opts = proto.Clone(tt.opts).(*distillv1.FetchOptions)
					}
					opts.Browser = browser
					url := scheme + strings.TrimPrefix(tt.url, "http")
					parts := make([]string, len(tt.parts))
					for i, p := range tt.parts {
						parts[i] = strings.Replace(p, "fetch http://", "fetch "+scheme+"://", 1)
					}
					_, err := get(t, f, url, opts)
					wantFailure(t, err, failure.Blocked, parts...)
					if !errors.Is(err, netpolicy.ErrBlocked) {
						t.Fatalf("%v does not wrap netpolicy.ErrBlocked", err)
					}
				})
			}
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("server got %d requests, want none", n)
	}
}

// A name passes the URL check; the address it resolves to is judged when
// it is dialled, so a name that rebinds to a private address between two
// fetches is refused on the second.
func TestFetchDNSRebinding(t *testing.T) {
	t.Parallel()
	ts, hits := serve(t, func(w http.ResponseWriter, r *http.Request) { html(w, 200, page) })
	// Without keep-alive every fetch dials, so every fetch resolves.
	ts.Config.SetKeepAlivesEnabled(false)
	port := ts.Listener.Addr().(*net.TCPAddr).Port

	var mu sync.Mutex
	answers := map[string][]netip.Addr{
		"rebind.test":   {netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("10.0.0.1")},
		"loopback.test": {netip.MustParseAddr("127.0.0.1")},
		"private.test":  {netip.MustParseAddr("192.168.7.7")},
	}
	dns, err := netpolicytest.StartDNS(func(name string) []netip.Addr {
		mu.Lock()
		defer mu.Unlock()
		a, ok := answers[name]
		if !ok {
			return nil
		}
		if len(a) > 1 {
			answers[name] = a[1:]
		}
		return a[:1]
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dns.Close() })
	f := newFetcher(t, WithResolver(dns.Resolver()))
	url := func(host string) string { return fmt.Sprintf("http://%s:%d/", host, port) }

	t.Run("rebinding", func(t *testing.T) {
		resp := mustGet(t, f, url("rebind.test"), local())
		if string(resp.GetBody()) != page {
			t.Fatalf("first fetch body %q", resp.GetBody())
		}
		_, err := get(t, f, url("rebind.test"), local())
		wantFailure(t, err, failure.Blocked, "fetch "+url("rebind.test")+": blocked by network policy: 10.0.0.1 (private range 10.0.0.0/8)")
	})
	t.Run("name resolving to loopback without allow_local", func(t *testing.T) {
		_, err := get(t, f, url("loopback.test"), nil)
		wantFailure(t, err, failure.Blocked, "127.0.0.1 (loopback")
	})
	t.Run("name resolving to private", func(t *testing.T) {
		_, err := get(t, f, url("private.test"), local())
		wantFailure(t, err, failure.Blocked, "192.168.7.7")
	})
	if n := hits.Load(); n != 1 {
		t.Fatalf("server got %d requests, want only the first", n)
	}
}

func TestFetchRedirects(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	redirect := func(path string, status int, to string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Location", to)
			w.WriteHeader(status)
		})
	}
	mux.HandleFunc("/final", func(w http.ResponseWriter, r *http.Request) { html(w, 200, page) })
	redirect("/a", http.StatusMovedPermanently, "b") // relative
	redirect("/b", http.StatusFound, "/c")
	redirect("/c", http.StatusSeeOther, ts.URL+"/d")
	redirect("/d", http.StatusTemporaryRedirect, "/e")
	redirect("/e", http.StatusPermanentRedirect, "/final")
	mux.HandleFunc("/hop/{n}", func(w http.ResponseWriter, r *http.Request) {
		var n int
		_, _ = fmt.Sscan(r.PathValue("n"), &n)
		if n == 0 {
			html(w, 200, page)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusFound)
	})
	redirect("/to-file", http.StatusFound, "file:///etc/passwd")
	redirect("/to-gopher", http.StatusFound, "gopher://127.0.0.1:70/")
	redirect("/to-private", http.StatusFound, "http://10.0.0.1/admin")
	redirect("/to-metadata", http.StatusFound, "http://169.254.169.254/latest/meta-data/")
	redirect("/to-metadata-decimal", http.StatusFound, "http://2852039166/")
	redirect("/to-mapped", http.StatusFound, "http://[::ffff:10.0.0.1]/")
	mux.HandleFunc("/no-location", func(w http.ResponseWriter, r *http.Request) { html(w, http.StatusFound, page) })

	f := newFetcher(t)
	t.Run("chain with history", func(t *testing.T) {
		resp := mustGet(t, f, ts.URL+"/a", local())
		want := []string{ts.URL + "/a", ts.URL + "/b", ts.URL + "/c", ts.URL + "/d", ts.URL + "/e"}
		if strings.Join(resp.GetRedirectHistory(), " ") != strings.Join(want, " ") {
			t.Fatalf("history %v, want %v", resp.GetRedirectHistory(), want)
		}
		if resp.GetFinalUrl() != ts.URL+"/final" || string(resp.GetBody()) != page {
			t.Fatalf("final_url %q body %q", resp.GetFinalUrl(), resp.GetBody())
		}
	})
	t.Run("10 redirects followed", func(t *testing.T) {
		resp := mustGet(t, f, ts.URL+"/hop/10", local())
		if len(resp.GetRedirectHistory()) != 10 || resp.GetFinalUrl() != ts.URL+"/hop/0" {
			t.Fatalf("history %v final %q", resp.GetRedirectHistory(), resp.GetFinalUrl())
		}
	})
	t.Run("11 redirects refused", func(t *testing.T) {
		_, err := get(t, f, ts.URL+"/hop/11", local())
		wantFailure(t, err, failure.Network, "fetch "+ts.URL+"/hop/11", "stopped after 10 redirects")
	})
	t.Run("302 without Location is an answer", func(t *testing.T) {
		resp := mustGet(t, f, ts.URL+"/no-location", local())
		if resp.GetStatus() != http.StatusFound {
			t.Fatalf("status %d", resp.GetStatus())
		}
	})
	refused := []struct {
		path  string
		code  distillv1.ErrorCode
		parts []string
	}{
		{path: "/to-file", code: failure.InvalidURL, parts: []string{"redirect to file:///etc/passwd: invalid URL", `scheme "file"`}},
		{path: "/to-gopher", code: failure.InvalidURL, parts: []string{`scheme "gopher"`}},
		{path: "/to-private", code: failure.Blocked, parts: []string{"redirect to http://10.0.0.1/admin: blocked by network policy: 10.0.0.1"}},
		{path: "/to-metadata", code: failure.Blocked, parts: []string{"cloud metadata"}},
		{path: "/to-metadata-decimal", code: failure.Blocked, parts: []string{"2852039166 is 169.254.169.254"}},
		{path: "/to-mapped", code: failure.Blocked, parts: []string{"carrying 10.0.0.1"}},
	}
	for _, tt := range refused {
		t.Run("refused "+tt.path, func(t *testing.T) {
			_, err := get(t, f, ts.URL+tt.path, local())
			wantFailure(t, err, tt.code, append([]string{"fetch " + ts.URL + tt.path + ": "}, tt.parts...)...)
		})
	}
}

func TestFetchByteCap(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	chunk := bytes.Repeat([]byte("a"), 16<<10)
	zeros := make([]byte, 64<<10)
	// Endless bodies: if the cap did not stop the read, the fetch would run
	// into its timeout instead of answering with the first max_bytes.
	endless := func(w io.Writer, r *http.Request, p []byte) {
		for r.Context().Err() == nil {
			if _, err := w.Write(p); err != nil {
				return
			}
		}
	}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		tooBig  bool
	}{
		{name: "under the cap", handler: func(w http.ResponseWriter, r *http.Request) {
			html(w, 200, strings.Repeat("a", limit))
		}},
		{name: "declared length over the cap", tooBig: true, handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(limit+1))
			html(w, 200, strings.Repeat("a", limit+1))
		}},
		{name: "endless plain body", tooBig: true, handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			endless(w, r, chunk)
		}},
		{name: "gzip bomb", tooBig: true, handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Encoding", "gzip")
			gz, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
			defer gz.Close()
			endless(gz, r, zeros)
		}},
		{name: "deflate bomb", tooBig: true, handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Header().Set("Content-Encoding", "deflate")
			zw, _ := zlib.NewWriterLevel(w, zlib.BestSpeed)
			defer zw.Close()
			endless(zw, r, zeros)
		}},
	}
	f := newFetcher(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ts, _ := serve(t, tt.handler)
			o := local()
			o.MaxBytes = ptr(int64(limit))
			o.TimeoutSecs = ptr(int32(10))
			resp, err := get(t, f, ts.URL, o)
			if err != nil || len(resp.GetBody()) != limit {
				t.Fatalf("got %d bytes, err %v; want %d bytes", len(resp.GetBody()), err, limit)
			}
			if resp.GetTruncatedBody() != tt.tooBig {
				t.Errorf("truncated_body = %v, want %v", resp.GetTruncatedBody(), tt.tooBig)
			}
		})
	}
}

// A PDF cut at max_bytes has lost its cross-reference table, so unlike a
// page it is refused, even when only its first bytes said it was a PDF.
func TestFetchRefusesACutPDF(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	chunk := bytes.Repeat([]byte("a"), 16<<10)
	f := newFetcher(t)
	for _, declared := range []string{"application/pdf", "application/octet-stream"} {
		t.Run(declared, func(t *testing.T) {
			t.Parallel()
			ts, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", declared)
				_, _ = io.WriteString(w, "%PDF-1.7\n")
				for r.Context().Err() == nil {
					if _, err := w.Write(chunk); err != nil {
						return
					}
				}
			})
			o := local()
			o.MaxBytes = ptr(int64(limit))
			o.TimeoutSecs = ptr(int32(10))
			_, err := get(t, f, ts.URL, o)
			wantFailure(t, err, failure.TooLarge, "PDF longer than max_bytes (65536 bytes)")
		})
	}
}

// hangGuard bounds how long a fetch that should stop at its timeout may
// take; it catches hangs, it does not measure speed.
const hangGuard = 10 * time.Second

func TestFetchTimeout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handler http.HandlerFunc
	}{
		{name: "no answer", handler: func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}},
		{name: "body stalls", handler: func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, "<html><body>")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
		}},
	}
	f := newFetcher(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ts, _ := serve(t, tt.handler)
			o := local()
			o.TimeoutSecs = ptr(int32(1))
			start := time.Now()
			_, err := get(t, f, ts.URL, o)
			wantFailure(t, err, failure.Timeout, "fetch "+ts.URL, "within the 1s timeout")
			if d := time.Since(start); d > hangGuard {
				t.Fatalf("returned after %s", d)
			}
		})
	}
}

func TestFetchCanceled(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	ts, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-r.Context().Done()
	})
	f := newFetcher(t)
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-started
		cancel()
	}()
	_, err := f.Fetch(ctx, &internalv1.FetcherServiceFetchRequest{Url: ts.URL, Options: local()})
	wantFailure(t, err, failure.Canceled, "fetch "+ts.URL, "canceled")
}

// statusSequence answers with the given statuses in turn, then 200, and
// records when each request came.
type statusSequence struct {
	mu       sync.Mutex
	statuses []int
	header   http.Header
	times    []time.Time
}

func (s *statusSequence) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.times = append(s.times, time.Now())
	status := http.StatusOK
	if len(s.times) <= len(s.statuses) {
		status = s.statuses[len(s.times)-1]
		for k, v := range s.header {
			w.Header()[k] = v
		}
	}
	s.mu.Unlock()
	html(w, status, fmt.Sprintf("page for status %d", status))
}

func (s *statusSequence) requests() []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.times...)
}

func TestFetchRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		statuses   []int
		header     http.Header
		maxRetries *int32
		timeout    int32
		wantStatus int32
		wantTries  int
		minGap     time.Duration // between the first two requests
		maxElapsed time.Duration // hang guard for "do not wait" cases
	}{
		{name: "503 then 200", statuses: []int{503}, wantStatus: 200, wantTries: 2},
		{name: "429 then 200", statuses: []int{429}, wantStatus: 200, wantTries: 2},
		{name: "two 502s then 200", statuses: []int{502, 502}, wantStatus: 200, wantTries: 3},
		{name: "500 until retries are spent is an answer", statuses: []int{500, 500, 500, 500}, wantStatus: 500, wantTries: 3},
		{name: "404 is an answer, not retried", statuses: []int{404}, wantStatus: 404, wantTries: 1},
		{name: "no retries when max_retries is 0", statuses: []int{503}, maxRetries: ptr(int32(0)), wantStatus: 503, wantTries: 1},
		{name: "Retry-After seconds honoured", statuses: []int{503}, header: http.Header{"Retry-After": {"1"}}, wantStatus: 200, wantTries: 2, minGap: 900 * time.Millisecond},
		{name: "Retry-After past the deadline returns the answer", statuses: []int{429}, header: http.Header{"Retry-After": {"30"}}, timeout: 2, wantStatus: 429, wantTries: 1, maxElapsed: hangGuard},
	}
	f := newFetcher(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			seq := &statusSequence{statuses: tt.statuses, header: tt.header}
			ts := httptest.NewServer(seq)
			t.Cleanup(ts.Close)
			o := local()
			o.MaxRetries = tt.maxRetries
			if tt.timeout > 0 {
				o.TimeoutSecs = &tt.timeout
			}
			start := time.Now()
			resp := mustGet(t, f, ts.URL, o)
			if resp.GetStatus() != tt.wantStatus {
				t.Fatalf("status %d, want %d", resp.GetStatus(), tt.wantStatus)
			}
			if want := fmt.Sprintf("page for status %d", tt.wantStatus); string(resp.GetBody()) != want {
				t.Fatalf("body %q, want %q", resp.GetBody(), want)
			}
			times := seq.requests()
			if len(times) != tt.wantTries {
				t.Fatalf("%d requests, want %d", len(times), tt.wantTries)
			}
			if tt.minGap > 0 {
				if gap := times[1].Sub(times[0]); gap < tt.minGap {
					t.Fatalf("retried after %s, want at least %s", gap, tt.minGap)
				}
			}
			if tt.maxElapsed > 0 {
				if d := time.Since(start); d > tt.maxElapsed {
					t.Fatalf("returned after %s", d)
				}
			}
		})
	}
}

// Connections that die before an answer are retried, and the failure that
// remains is a network error.
func TestFetchRetriesTransportErrors(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lis.Close() })
	var accepted atomic.Int32
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			_ = c.Close()
		}
	}()
	f := newFetcher(t)
	url := "http://" + lis.Addr().String() + "/"
	_, err = get(t, f, url, local())
	wantFailure(t, err, failure.Network, "fetch "+url+": ")
	if n := accepted.Load(); n != 3 {
		t.Fatalf("%d connections, want 3 (1 + max_retries 2)", n)
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		header string
		want   time.Duration
		ok     bool
	}{
		{name: "absent", header: ""},
		{name: "zero seconds", header: "0", ok: true},
		{name: "seconds", header: "3", want: 3 * time.Second, ok: true},
		{name: "seconds capped", header: "3600", want: time.Minute, ok: true},
		{name: "huge seconds capped", header: "99999999999999999999", ok: false},
		{name: "date", header: now.Add(10 * time.Second).Format(http.TimeFormat), want: 10 * time.Second, ok: true},
		{name: "date capped", header: now.Add(time.Hour).Format(http.TimeFormat), want: time.Minute, ok: true},
		{name: "date in the past", header: now.Add(-time.Hour).Format(http.TimeFormat), ok: true},
		{name: "negative", header: "-1"},
		{name: "garbage", header: "soon"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := retryAfter(tt.header, now)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("got %s %v, want %s %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestBackoffFullJitter(t *testing.T) {
	f := New(slog.New(slog.DiscardHandler))
	for attempt, ceiling := range []time.Duration{250 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second} {
		t.Run(fmt.Sprint("attempt ", attempt), func(t *testing.T) {
			distinct := map[time.Duration]bool{}
			for range 200 {
				d := f.backoff(attempt)
				if d < 0 || d > ceiling {
					t.Fatalf("backoff %s outside [0, %s]", d, ceiling)
				}
				distinct[d] = true
			}
			if len(distinct) < 10 {
				t.Fatalf("only %d distinct waits in 200: not jittered", len(distinct))
			}
		})
	}
	if d := f.backoff(1000); d > defaultBackoffMax {
		t.Fatalf("backoff for a huge attempt %s is over the max", d)
	}
}

func TestFetchPerHostConcurrency(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		limit   *int32
		check   func(maxSeen int32) bool
		explain string
	}{
		{name: "limit 1", limit: ptr(int32(1)), check: func(m int32) bool { return m == 1 }, explain: "exactly 1"},
		{name: "limit 3", limit: ptr(int32(3)), check: func(m int32) bool { return m == 3 }, explain: "exactly 3"},
		{name: "default 4", check: func(m int32) bool { return m == 4 }, explain: "exactly 4"},
		// Shows that the count sees concurrency when nothing limits it.
		{name: "0 is unlimited", limit: ptr(int32(0)), check: func(m int32) bool { return m > 4 }, explain: "more than 4"},
	}
	const calls = 10
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var active, maxSeen atomic.Int32
			ts, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
				n := active.Add(1)
				for {
					m := maxSeen.Load()
					if n <= m || maxSeen.CompareAndSwap(m, n) {
						break
					}
				}
				time.Sleep(100 * time.Millisecond)
				active.Add(-1)
				html(w, 200, page)
			})
			f := newFetcher(t)
			var wg sync.WaitGroup
			errs := make(chan error, calls)
			for range calls {
				wg.Go(func() {
					o := local()
					o.PerHostConcurrency = tt.limit
					_, err := get(t, f, ts.URL, o)
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			if m := maxSeen.Load(); !tt.check(m) {
				t.Fatalf("at most %d requests at once, want %s", m, tt.explain)
			}
		})
	}
}

// Waiting for a host slot or a rate token counts against the fetch's
// timeout.
func TestFetchHostWaitsRespectDeadline(t *testing.T) {
	t.Parallel()
	t.Run("slot", func(t *testing.T) {
		t.Parallel()
		release := make(chan struct{})
		entered := make(chan struct{}, 1)
		ts, hits := serve(t, func(w http.ResponseWriter, r *http.Request) {
			entered <- struct{}{}
			<-release
			html(w, 200, page)
		})
		f := newFetcher(t)
		o := local()
		o.PerHostConcurrency = ptr(int32(1))
		first := make(chan error, 1)
		go func() {
			_, err := get(t, f, ts.URL, o)
			first <- err
		}()
		<-entered
		o2 := local()
		o2.PerHostConcurrency = ptr(int32(1))
		o2.TimeoutSecs = ptr(int32(1))
		_, err := get(t, f, ts.URL, o2)
		wantFailure(t, err, failure.Timeout)
		if n := hits.Load(); n != 1 {
			t.Fatalf("server got %d requests while the slot was taken, want 1", n)
		}
		close(release)
		if err := <-first; err != nil {
			t.Fatal(err)
		}
	})
	t.Run("rate", func(t *testing.T) {
		t.Parallel()
		ts, hits := serve(t, func(w http.ResponseWriter, r *http.Request) { html(w, 200, page) })
		f := newFetcher(t)
		o := local()
		o.RateLimit = 0.1 // one request per 10 s
		o.TimeoutSecs = ptr(int32(2))
		mustGet(t, f, ts.URL, o)
		start := time.Now()
		_, err := get(t, f, ts.URL, o)
		wantFailure(t, err, failure.Timeout, "rate limit")
		if d := time.Since(start); d > hangGuard {
			t.Fatalf("returned after %s", d)
		}
		if n := hits.Load(); n != 1 {
			t.Fatalf("server got %d requests, want 1", n)
		}
	})
}

func TestFetchContentTypes(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	tests := []struct {
		name        string
		contentType string // "-" = no header
		body        []byte
		want        string // "" = UnsupportedContent
		wantCharset string
	}{
		{name: "html with charset", contentType: "text/html; charset=utf-8", want: "text/html", wantCharset: "utf-8"},
		{name: "legacy charset", contentType: `text/html; charset="Shift_JIS"`, want: "text/html", wantCharset: "shift_jis"},
		{name: "upper-case html", contentType: "TEXT/HTML", want: "text/html"},
		{name: "xhtml", contentType: "application/xhtml+xml", want: "application/xhtml+xml"},
		{name: "plain text", contentType: "text/plain", want: "text/plain"},
		{name: "markdown", contentType: "text/markdown; charset=utf-8", want: "text/markdown", wantCharset: "utf-8"},
		{name: "json", contentType: "application/json", want: "application/json"},
		{name: "ld+json", contentType: "application/ld+json", want: "application/ld+json"},
		{name: "xml", contentType: "application/xml", want: "application/xml"},
		{name: "rss+xml", contentType: "application/rss+xml", want: "application/rss+xml"},
		{name: "malformed parameters", contentType: "text/html; charset", want: "text/html"},
		{name: "missing, sniffed html", contentType: "-", body: []byte(page), want: "text/html"},
		{name: "missing, sniffed text", contentType: "-", body: []byte("just words"), want: "text/plain"},
		{name: "png", contentType: "image/png", body: png},
		{name: "pdf", contentType: "application/pdf", body: []byte("%PDF-1.7"), want: "application/pdf"},
		{name: "pdf with charset", contentType: "application/pdf; charset=binary", body: []byte("%PDF-1.7"), want: "application/pdf"},
		{name: "octet-stream", contentType: "application/octet-stream"},
		{name: "octet-stream, pdf by its magic", contentType: "application/octet-stream", body: []byte("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"), want: "application/pdf"},
		{name: "x-pdf", contentType: "application/x-pdf", body: []byte("%PDF-1.4\n"), want: "application/pdf"},
		{name: "x-pdf that is not one", contentType: "application/x-pdf", body: png},
		{name: "missing, pdf after junk", contentType: "-", body: []byte("\r\n\x00junk%PDF-1.4\n"), want: "application/pdf"},
		{name: "missing, sniffed png", contentType: "-", body: png},
	}
	ts, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		for _, tt := range tests {
			if r.URL.Query().Get("case") != tt.name {
				continue
			}
			if tt.contentType == "-" {
				w.Header()["Content-Type"] = nil // stop net/http sniffing for us
			} else {
				w.Header().Set("Content-Type", tt.contentType)
			}
			body := tt.body
			if body == nil {
				body = []byte(page)
			}
			_, _ = w.Write(body)
		}
	})
	f := newFetcher(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := ts.URL + "/?case=" + neturl.QueryEscape(tt.name)
			resp, err := get(t, f, url, local())
			if tt.want == "" {
				wantFailure(t, err, failure.UnsupportedContent, "fetch "+url, "unsupported content type")
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.GetContentType() != tt.want {
				t.Fatalf("content_type %q, want %q", resp.GetContentType(), tt.want)
			}
			if resp.GetCharset() != tt.wantCharset {
				t.Errorf("charset %q, want %q", resp.GetCharset(), tt.wantCharset)
			}
		})
	}
}

func TestFetchInvalid(t *testing.T) {
	t.Parallel()
	f := newFetcher(t)
	tests := []struct {
		name  string
		url   string
		opts  *distillv1.FetchOptions
		code  distillv1.ErrorCode
		parts []string
	}{
		{name: "ftp", url: "ftp://x", parts: []string{`fetch ftp://x: invalid URL: scheme "ftp" is not http or https`}},
		{name: "no host", url: "http://", parts: []string{"fetch http://: invalid URL: no host"}},
		{name: "not a url", url: "not a url", parts: []string{`fetch "not a url": invalid URL: no scheme`}},
		{name: "empty", url: "", parts: []string{"invalid URL: empty"}},
		{name: "bad IPv4", url: "http://1.2.3.256/", parts: []string{"bad IPv4 host"}},
		{name: "newline", url: "http://example.com/\nx", parts: []string{`fetch "http://example.com/\nx": invalid URL`}},
		{name: "negative max_bytes", url: "http://example.com/", opts: &distillv1.FetchOptions{MaxBytes: ptr(int64(-1))}, code: failure.InvalidArgument, parts: []string{"bad options", "--max-bytes"}},
		{name: "zero timeout", url: "http://example.com/", opts: &distillv1.FetchOptions{TimeoutSecs: ptr(int32(0))}, code: failure.InvalidArgument, parts: []string{"--timeout"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := get(t, f, tt.url, tt.opts)
			code := tt.code
			if code == distillv1.ErrorCode_ERROR_CODE_UNSPECIFIED {
				code = failure.InvalidURL
			}
			wantFailure(t, err, code, tt.parts...)
		})
	}
}
