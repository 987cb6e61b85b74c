package fetch

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"distill.dev/proto/failure"
	"distill.dev/services/fetcher/warc"
)

// exchanges keeps what a Fetcher records, in the order the bodies closed.
type exchanges struct {
	mu  sync.Mutex
	all []warc.Exchange
}

func (e *exchanges) Record(ex warc.Exchange) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.all = append(e.all, ex)
}

func (e *exchanges) list() []warc.Exchange {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]warc.Exchange(nil), e.all...)
}

// summary is "METHOD path status" for each exchange.
func (e *exchanges) summary() []string {
	var out []string
	for _, ex := range e.list() {
		out = append(out, fmt.Sprintf("%s %s %d", ex.Request.Method, ex.Request.URL.Path, ex.Response.StatusCode))
	}
	return out
}

func gzipped(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRecordsEveryHopAndRobotsTxt(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nAllow: /\n")
		case "/start":
			http.Redirect(w, r, "/middle?x=1", http.StatusFound)
		case "/middle":
			http.Redirect(w, r, "/end", http.StatusMovedPermanently)
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, page)
		}
	}))
	defer srv.Close()
	rec := &exchanges{}
	f := newFetcher(t, WithRecorder(rec))
	o := local()
	o.RespectRobots = true
	resp := mustGet(t, f, srv.URL+"/start", o)
	if resp.GetFinalUrl() != srv.URL+"/end" {
		t.Fatalf("final URL %s", resp.GetFinalUrl())
	}
	want := []string{"GET /robots.txt 200", "GET /start 302", "GET /middle 301", "GET /end 200"}
	if got := rec.summary(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("recorded %q, want %q", got, want)
	}
	all := rec.list()
	if got := all[2].Request.URL.String(); got != srv.URL+"/middle?x=1" {
		t.Errorf("second hop's target %s", got)
	}
	if got := all[1].Response.Header.Get("Location"); got != "/middle?x=1" {
		t.Errorf("redirect's Location header %q", got)
	}
	for _, ex := range all {
		if ex.Request.Header.Get("User-Agent") == "" || ex.IP != "127.0.0.1" || ex.Date.IsZero() {
			t.Errorf("%s: User-Agent %q, IP %q, date %v", ex.Request.URL, ex.Request.Header.Get("User-Agent"), ex.IP, ex.Date)
		}
	}
	if end := all[3]; string(end.Body) != page || end.Truncated != "" {
		t.Errorf("page body %q, truncated %q", end.Body, end.Truncated)
	}
}

func TestRecordsBodiesDecodedAndCutAtMaxBytes(t *testing.T) {
	long := strings.Repeat("tide ", 2000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/gzip", "/gzip-long":
			body := page
			if r.URL.Path == "/gzip-long" {
				body = long
			}
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gzipped(t, body))
		case "/long":
			fmt.Fprint(w, long)
		default:
			fmt.Fprint(w, page)
		}
	}))
	defer srv.Close()
	for _, tc := range []struct {
		path      string
		maxBytes  int64
		body      string
		decoded   bool
		truncated string
	}{
		{"/page", 0, page, false, ""},
		{"/gzip", 0, page, true, ""},
		{"/long", 1000, long[:1000], false, warc.TruncatedLength},
		{"/gzip-long", 1000, long[:1000], true, warc.TruncatedLength},
		// Exactly the cap: whole, not cut.
		{"/page", int64(len(page)), page, false, ""},
	} {
		t.Run(fmt.Sprintf("%s max %d", tc.path, tc.maxBytes), func(t *testing.T) {
			rec := &exchanges{}
			f := newFetcher(t, WithRecorder(rec))
			o := local()
			if tc.maxBytes > 0 {
				o.MaxBytes = ptr(tc.maxBytes)
			}
			resp := mustGet(t, f, srv.URL+tc.path, o)
			all := rec.list()
			if len(all) != 1 {
				t.Fatalf("recorded %d exchanges, want 1", len(all))
			}
			ex := all[0]
			if string(ex.Body) != tc.body || ex.Decoded != tc.decoded || ex.Truncated != tc.truncated {
				t.Errorf("recorded %d bytes, decoded %v, truncated %q; want %d bytes, %v, %q",
					len(ex.Body), ex.Decoded, ex.Truncated, len(tc.body), tc.decoded, tc.truncated)
			}
			// The archive keeps what the fetcher kept.
			if !bytes.Equal(ex.Body, resp.GetBody()) || resp.GetTruncatedBody() != (tc.truncated != "") {
				t.Errorf("the fetch kept %d bytes (truncated %v), the record %d", len(resp.GetBody()), resp.GetTruncatedBody(), len(ex.Body))
			}
		})
	}
}

func TestRecordsEveryAttempt(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, page)
	}))
	defer srv.Close()
	rec := &exchanges{}
	mustGet(t, newFetcher(t, WithRecorder(rec)), srv.URL+"/p", local())
	want := []string{"GET /p 503", "GET /p 200"}
	if got := rec.summary(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("recorded %q, want %q", got, want)
	}
	if busy := rec.list()[0]; string(busy.Body) != "busy\n" || busy.Truncated != "" {
		t.Errorf("the retried answer's body %q, truncated %q", busy.Body, busy.Truncated)
	}
}

func TestRecordsAPOSTAndItsBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, page)
	}))
	defer srv.Close()
	rec := &exchanges{}
	f := newFetcher(t, WithRecorder(rec))
	if _, err := post(t, f, srv.URL+"/form", "q=tide", local()); err != nil {
		t.Fatal(err)
	}
	all := rec.list()
	if len(all) != 1 || all[0].Request.Method != http.MethodPost || string(all[0].RequestBody) != "q=tide" ||
		all[0].Request.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		t.Fatalf("recorded %+v", all)
	}
}

func TestRecordingFetchesWhatTheCacheHolds(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, page)
	}))
	defer srv.Close()
	rec := &exchanges{}
	f, _, _ := cached(t, WithRecorder(rec))
	for range 2 {
		if resp := mustGet(t, f, srv.URL+"/p", local()); resp.GetFromCache() {
			t.Fatal("a recording fetcher answered from the cache")
		}
	}
	if n := len(rec.list()); n != 2 || calls.Load() != 2 {
		t.Errorf("%d exchanges recorded, %d requests served; want 2 and 2", n, calls.Load())
	}
}

func TestRecordsAResourceAsServed(t *testing.T) {
	sitemap := gzipped(t, "<urlset><url><loc>http://example.com/a</loc></url></urlset>")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/x-gzip")
		w.Write(sitemap)
	}))
	defer srv.Close()
	rec := &exchanges{}
	f := newFetcher(t, WithRecorder(rec))
	if _, err := f.Resource(t.Context(), srv.URL+"/sitemap.xml.gz", local()); err != nil {
		t.Fatal(err)
	}
	all := rec.list()
	// A gzip file is the resource itself, not a content coding: it is
	// kept as it came.
	if len(all) != 1 || !bytes.Equal(all[0].Body, sitemap) || all[0].Decoded {
		t.Fatalf("recorded %+v", all)
	}
}

func TestRecordsABodyCutByADisconnect(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", "1000")
		fmt.Fprint(w, "<html><p>half")
		w.(http.Flusher).Flush()
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	defer srv.Close()
	rec := &exchanges{}
	o := local()
	o.MaxRetries = ptr[int32](0)
	if _, err := get(t, newFetcher(t, WithRecorder(rec)), srv.URL+"/p", o); err == nil {
		t.Fatal("a body cut by the server was taken whole")
	}
	all := rec.list()
	if len(all) != 1 || string(all[0].Body) != "<html><p>half" || all[0].Truncated != warc.TruncatedDisconnect {
		t.Fatalf("recorded %+v", all)
	}
}

func TestRecordsABodyCutByTheTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", "1000")
		fmt.Fprint(w, "<html><p>slow")
		w.(http.Flusher).Flush()
		// The rest never comes while the fetch waits.
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	rec := &exchanges{}
	o := local()
	o.TimeoutSecs = ptr[int32](1)
	o.MaxRetries = ptr[int32](0)
	_, err := get(t, newFetcher(t, WithRecorder(rec)), srv.URL+"/p", o)
	wantFailure(t, err, failure.Timeout)
	all := rec.list()
	if len(all) != 1 || string(all[0].Body) != "<html><p>slow" || all[0].Truncated != warc.TruncatedTime {
		t.Fatalf("recorded %+v", all)
	}
}
