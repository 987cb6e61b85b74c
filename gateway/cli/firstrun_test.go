package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"distill.dev/proto/failure"
	"distill.dev/services/platform/envflag"
	"distill.dev/services/platform/netpolicy/netpolicytest"
)

// An HTTP error page stays a page, as RustBrowser prints it, but stderr
// says what it is; --fail-on-http-error makes it a failure.
func TestHTTPErrorPages(t *testing.T) {
	srv := pages(t)
	missing := srv.URL + "/missing"
	note := "distill: " + missing + " answered HTTP 404 Not Found\n"

	t.Run("printed, with a note", func(t *testing.T) {
		out, errOut, code := run(t, "fetch", "--allow-local", missing)
		if code != ExitOK || !strings.Contains(out, "There is no page at this address") {
			t.Fatalf("exit %d, stdout %q: want the page and exit 0", code, out)
		}
		if errOut != note {
			t.Fatalf("stderr = %q, want %q", errOut, note)
		}
	})
	t.Run("a failure with --fail-on-http-error", func(t *testing.T) {
		out, errOut, code := run(t, "fetch", "--allow-local", "--fail-on-http-error", missing)
		if code != ExitFailure || out != "" || errOut != note {
			t.Fatalf("exit %d, stdout %q, stderr %q: want exit 1, nothing printed, and %q", code, out, errOut, note)
		}
	})
	t.Run("ok: false in a batch", func(t *testing.T) {
		urls := []string{srv.URL + "/a", missing}
		out, _, code := run(t, append([]string{"fetch", "--allow-local", "--fail-on-http-error", "--format", "json"}, urls...)...)
		items := batchItems(t, out, urls)
		if code != ExitFailure || !items[0].OK || items[1].OK || items[1].Error != missing+" answered HTTP 404 Not Found" {
			t.Fatalf("exit %d, items %+v: want /a ok, the 404 failed", code, items)
		}
	})
	t.Run("a success page gets no note", func(t *testing.T) {
		_, errOut, code := run(t, "fetch", "--allow-local", "--fail-on-http-error", srv.URL+"/a")
		if code != ExitOK || errOut != "" {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})
}

func TestErrorsNameTheFix(t *testing.T) {
	srv := pages(t)
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := closed.Addr().String()
	closed.Close()

	tests := []struct {
		name   string
		args   []string
		code   int
		want   string
		absent string
	}{
		{"loopback", []string{"fetch", srv.URL + "/a"}, ExitFailure, "(loopback 127.0.0.0/8) (use --allow-local)", ""},
		{"a private address gets no loopback hint", []string{"fetch", "http://10.1.2.3/"}, ExitFailure, "private range", "--allow-local"},
		{"a bare domain", []string{"fetch", "example.com"}, ExitFailure, "(did you mean https://example.com/?)", ""},
		{"a bare domain and path", []string{"fetch", "example.com/docs?q=1"}, ExitFailure, "(did you mean https://example.com/docs?q=1?)", ""},
		{"max-bytes over the ceiling", []string{"fetch", "--max-bytes", "100000000", "https://example.com/"}, ExitUsage, "--max-bytes 100000000 is above distill's ceiling of 67108864 bytes (64 MiB)", ""},
		{"extract's max-bytes too", []string{"extract", "--max-bytes", "100000000", "page.html"}, ExitUsage, "(64 MiB)", ""},
		{"a gateway that is not there", []string{"fetch", "--server", gone, "https://example.com/"}, ExitFailure, "cannot reach the distill gateway at " + gone + " (--server)", ""},
		{"a batch to a gateway that is not there", []string{"fetch", "--server", gone, "https://example.com/a", "https://example.com/b"}, ExitFailure, "cannot reach the distill gateway at " + gone + " (--server)", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := run(t, tt.args...)
			if code != tt.code || !strings.Contains(errOut, tt.want) || (tt.absent != "" && strings.Contains(errOut, tt.absent)) {
				t.Fatalf("exit %d, stderr %q: want exit %d and %q", code, errOut, tt.code, tt.want)
			}
		})
	}
}

// A name that does not resolve says so in words, whatever Go's resolver
// wrapped around it. The resolver's error is a real one, from a DNS server
// on loopback that knows no names.
func TestCannotResolveHost(t *testing.T) {
	dns, err := netpolicytest.StartDNS(func(string) []netip.Addr { return nil })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dns.Close() })
	_, lookupErr := dns.Resolver().LookupNetIP(context.Background(), "ip", "nowhere.example")
	if lookupErr == nil {
		t.Fatal("the lookup succeeded")
	}
	// As the fetcher reports it, and as it crosses a batch: text only.
	fetchErr := failure.Wrap(failure.Network, fmt.Errorf("dial tcp: %w", lookupErr), "fetch https://nowhere.example/")
	for _, err := range []error{fetchErr, failure.FromProto(failure.Proto(fetchErr))} {
		got := (&printer{}).explain(err, "https://nowhere.example/").Error()
		if !strings.HasPrefix(got, "fetch https://nowhere.example/: cannot resolve nowhere.example: ") || strings.Contains(got, "lookup") {
			t.Errorf("explained as %q", got)
		}
		if failure.CodeOf((&printer{}).explain(err, "")) != failure.Network {
			t.Errorf("the explanation lost the error's code")
		}
	}
}

// syncBuffer is a buffer a command writes while the test reads it.
type syncBuffer struct {
	mu   sync.Mutex
	b    bytes.Buffer
	term bool
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

func (s *syncBuffer) IsTerminal() bool { return s.term }

// stalled serves /a at once and /slow only when release is closed.
func stalled(t *testing.T) (srv *httptest.Server, release func()) {
	t.Helper()
	ch := make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(ch) }) }
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			select {
			case <-ch:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><head><title>Page %s</title></head><body><main><h1>Page %[1]s</h1><p>This page, %[1]s, has enough words in it to count as content for a reader.</p></main></body></html>", r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(release)
	return srv, release
}

// runAsync runs distill in the background; wait returns its exit code.
func runAsync(t *testing.T, stdout, stderr io.Writer, args ...string) (wait func() int) {
	t.Helper()
	done := make(chan int, 1)
	env := testEnv(t)
	go func() { done <- Run(context.Background(), args, env, stdout, stderr) }()
	return func() int { return <-done }
}

// waitFor polls until cond holds; the batch it watches is stuck until the
// test lets it go, so only a broken build waits the whole minute.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

// --format jsonl prints each URL's line as it completes: the fast page's
// line is out while the slow one is still being fetched.
func TestJSONLStreams(t *testing.T) {
	srv, release := stalled(t)
	var out, errOut syncBuffer
	urls := []string{srv.URL + "/slow", srv.URL + "/a", "http://10.1.2.3/"}
	wait := runAsync(t, &out, &errOut, append([]string{"fetch", "--allow-local", "--format", "jsonl"}, urls...)...)
	waitFor(t, "the fast page's line", func() bool { return strings.Count(out.String(), "\n") == 2 })
	if strings.Contains(out.String(), "/slow") {
		t.Fatalf("the slow page answered before it was released: %s", out.String())
	}
	release()
	if code := wait(); code != ExitFailure {
		t.Fatalf("exit %d, stderr %q: one URL is blocked", code, errOut.String())
	}
	got := map[string]batchItem{}
	for line := range strings.Lines(out.String()) {
		var it batchItem
		if err := json.Unmarshal([]byte(line), &it); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		got[it.URL] = it
	}
	if len(got) != 3 || !got[urls[0]].OK || !got[urls[1]].OK || got[urls[2]].OK || !strings.Contains(got[urls[2]].Error, "blocked") {
		t.Fatalf("lines = %+v", got)
	}
	if md, _ := got[urls[1]].Result["markdown"].(string); !strings.Contains(md, "has enough words") {
		t.Errorf("the result is not the page: %+v", got[urls[1]])
	}
}

// runWithStdin runs distill with stdin as its standard input.
func runWithStdin(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	root := newRoot(envflag.FromOS(), &out, &errOut)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(args)
	code = exitCode(root.ExecuteContext(context.Background()), &errOut)
	return out.String(), errOut.String(), code
}

func TestInputFile(t *testing.T) {
	srv := pages(t)
	list := "# pages to read\n\n" + srv.URL + "/b\n   \n  " + srv.URL + "/c  \n# done\n"
	file := filepath.Join(t.TempDir(), "urls.txt")
	if err := os.WriteFile(file, []byte(list), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{srv.URL + "/a", srv.URL + "/b", srv.URL + "/c"}

	t.Run("a file, after the positional URLs", func(t *testing.T) {
		out, errOut, code := run(t, "fetch", "--allow-local", "--format", "json", "--input", file, srv.URL+"/a")
		if code != ExitOK {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		batchItems(t, out, want)
	})
	t.Run("standard input", func(t *testing.T) {
		out, errOut, code := runWithStdin(t, list, "fetch", "--allow-local", "--format", "json", "--input", "-")
		if code != ExitOK {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		batchItems(t, out, want[1:])
	})
	t.Run("no URLs at all", func(t *testing.T) {
		_, errOut, code := runWithStdin(t, "# nothing\n\n", "fetch", "--input", "-")
		if code != ExitUsage || !strings.Contains(errOut, "holds no URLs") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})
	t.Run("an empty name", func(t *testing.T) {
		_, errOut, code := run(t, "fetch", "--input", "")
		if code != ExitUsage || !strings.Contains(errOut, "--input names no file") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})
	t.Run("a missing file", func(t *testing.T) {
		_, errOut, code := run(t, "fetch", "--input", filepath.Join(t.TempDir(), "none.txt"))
		if code != ExitUsage || !strings.Contains(errOut, "none.txt") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})
}

func TestOutputDir(t *testing.T) {
	srv := pages(t)
	host := strings.ReplaceAll(strings.TrimPrefix(srv.URL, "http://"), ":", "_")
	dir := filepath.Join(t.TempDir(), "pages")
	urls := []string{srv.URL + "/a", srv.URL + "/b", srv.URL + "/a", "http://10.1.2.3/x"}
	out, errOut, code := run(t, append([]string{"fetch", "--allow-local", "--output-dir", dir}, urls...)...)
	if code != ExitFailure || out != "" || !strings.Contains(errOut, "10.1.2.3") {
		t.Fatalf("exit %d, stdout %q, stderr %q: want exit 1 for the blocked URL and nothing on stdout", code, out, errOut)
	}
	files := []string{host + "_a.md", host + "_b.md", host + "_a-2.md"}
	for i, name := range files {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if page := "This is page " + urls[i][len(urls[i])-1:]; !strings.Contains(string(b), page) {
			t.Errorf("%s lacks %q:\n%s", name, page, b)
		}
	}
	index, err := os.ReadFile(filepath.Join(dir, "index.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		URL   string `json:"url"`
		OK    bool   `json:"ok"`
		File  string `json:"file"`
		Error string `json:"error"`
	}
	got := map[string]entry{}
	sc := bufio.NewScanner(bytes.NewReader(index))
	for sc.Scan() {
		var e entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("index line %q: %v", sc.Text(), err)
		}
		got[e.File+e.Error] = e
	}
	if len(got) != 4 {
		t.Fatalf("index:\n%s", index)
	}
	for i, name := range files {
		if e := got[name]; e.URL != urls[i] || !e.OK {
			t.Errorf("index entry for %s = %+v", name, e)
		}
	}
	for _, e := range got {
		if e.URL == urls[3] && (e.OK || !strings.Contains(e.Error, "blocked")) {
			t.Errorf("index entry for the blocked URL = %+v", e)
		}
	}

	t.Run("json files", func(t *testing.T) {
		dir := t.TempDir()
		if _, errOut, code := run(t, "fetch", "--allow-local", "--format", "json", "--output-dir", dir, srv.URL+"/c"); code != ExitOK {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
		var d map[string]any
		b, err := os.ReadFile(filepath.Join(dir, host+"_c.json"))
		if err == nil {
			err = json.Unmarshal(b, &d)
		}
		if err != nil || d["title"] != "Page c" {
			t.Fatalf("page c as JSON: %v, %v", err, d)
		}
	})
}

func TestFileNames(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("very-long-segment/", 20)
	got := fileNames([]string{
		"https://Example.com/",
		"https://example.com",
		"https://example.com/docs/Guide.html?lang=en&v=2",
		"https://example.com/docs/guide.html?lang=en&v=2",
		"https://example.com/../../etc/passwd",
		"https://example.com/.hidden",
		"not a url at all / ..",
		"https://index.jsonl/",
		long,
	}, ".md")
	want := []string{
		"example.com.md",
		"example.com-2.md",
		"example.com_docs_Guide.html_lang_en_v_2.md",
		"example.com_docs_guide.html_lang_en_v_2-2.md",
		"example.com_.._.._etc_passwd.md",
		"example.com_.hidden.md",
		"not_a_url_at_all.md",
		"index.jsonl.md",
		strings.TrimRight(("example.com_" + strings.Repeat("very-long-segment_", 20))[:maxNameLen], "._-") + ".md",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("names\n%q\nwant\n%q", got, want)
	}
	for _, name := range got {
		if strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
			t.Errorf("%q is not a plain file name", name)
		}
	}
}

// The line redraws on a timer while nothing completes, with the time and
// the URLs still out.
func TestProgressRedrawsOnATimer(t *testing.T) {
	var screen syncBuffer
	ticks := make(chan time.Time)
	p := startProgress(&screen, 5, 2, ticks)
	p.step(false)
	// An unbuffered tick is taken only once the one before it is drawn.
	ticks <- time.Time{}
	ticks <- time.Time{}
	p.finish()
	if n := strings.Count(screen.String(), "] 1/5 · 2 in flight · "); n < 2 {
		t.Fatalf("the line was redrawn %d times after the first answer, want at least 2 (the tick's): %q", n, screen.String())
	}
	if !strings.HasSuffix(screen.String(), "\r\033[K") {
		t.Fatalf("the line is not cleared at the end: %q", screen.String())
	}
}

// On a terminal, a batch stuck on a slow URL keeps redrawing its line.
func TestProgressDoesNotFreezeOnASlowURL(t *testing.T) {
	srv, release := stalled(t)
	var out syncBuffer
	screen := &syncBuffer{term: true}
	wait := runAsync(t, &out, screen, "fetch", "--allow-local", srv.URL+"/a", srv.URL+"/slow")
	waitFor(t, "redraws while /slow is stuck", func() bool { return strings.Count(screen.String(), "] 1/2 · 1 in flight · ") >= 3 })
	release()
	if code := wait(); code != ExitOK {
		t.Fatalf("exit %d: %q", code, screen.String())
	}
	if strings.Contains(out.String(), "\033[") {
		t.Fatalf("progress on stdout: %q", out.String())
	}
}
