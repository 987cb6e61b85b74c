package sitemap

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/fetcher/fetch"
)

// site serves files by path and counts the requests for each.
type site struct {
	*httptest.Server
	mu    sync.Mutex
	hits  map[string]int
	files map[string]file
}

type file struct {
	contentType string
	body        []byte
}

func newSite(t *testing.T) *site {
	s := &site{hits: map[string]int{}, files: map[string]file{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits[r.URL.Path]++
		f, ok := s.files[r.URL.Path]
		s.mu.Unlock()
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", f.contentType)
		_, _ = w.Write(f.body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *site) add(path, contentType string, body []byte) {
	s.files[path] = file{contentType, body}
}

func (s *site) xml(path, body string) {
	s.add(path, "application/xml", []byte(strings.ReplaceAll(body, "BASE", s.URL)))
}

func (s *site) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

// getter reads sitemaps through distill's own fetcher, as a map does.
func getter(t *testing.T) Getter {
	return getterCapped(t, MaxFileBytes)
}

// getterCapped caps each body at maxBytes, as a map caps it at its
// FileBytes limit.
func getterCapped(t *testing.T, maxBytes int64) Getter {
	f := fetch.New(slog.New(slog.DiscardHandler), fetch.WithAllowLocal(true))
	t.Cleanup(f.Close)
	opts := &distillv1.FetchOptions{AllowLocal: true, MaxBytes: &maxBytes}
	return func(ctx context.Context, raw string) (*Fetched, error) {
		r, err := f.Resource(ctx, raw, opts)
		if err != nil {
			return nil, err
		}
		return &Fetched{Status: int(r.GetStatus()), Body: r.GetBody(), Truncated: r.GetTruncatedBody()}, nil
	}
}

func walk(t *testing.T, sources []Source, limits Limits) ([]string, Report) {
	t.Helper()
	var got []string
	rep := Walk(t.Context(), getter(t), sources, limits, func(u *url.URL) bool {
		got = append(got, u.String())
		return true
	})
	return got, rep
}

func urlsetOf(paths ...string) string {
	var b strings.Builder
	b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, p := range paths {
		fmt.Fprintf(&b, "<url><loc>%s</loc></url>", p)
	}
	b.WriteString("</urlset>")
	return b.String()
}

func indexOf(paths ...string) string {
	var b strings.Builder
	b.WriteString(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, p := range paths {
		fmt.Fprintf(&b, "<sitemap><loc>%s</loc></sitemap>", p)
	}
	b.WriteString("</sitemapindex>")
	return b.String()
}

func hasNote(rep Report, parts ...string) bool {
	for _, n := range rep.Notes {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(n, p)
		}
		if ok {
			return true
		}
	}
	return false
}

func TestWalkIndex(t *testing.T) {
	s := newSite(t)
	s.xml("/sitemap_index.xml", indexOf("BASE/pages.xml", "BASE/posts.xml.gz", "BASE/list.txt", "http://localhost:1/other.xml", "BASE/pages.xml"))
	s.xml("/pages.xml", urlsetOf("BASE/", "BASE/about", "https://elsewhere.example/x"))
	s.add("/posts.xml.gz", "application/x-gzip", gz(t, strings.ReplaceAll(urlsetOf("BASE/posts/1", "BASE/posts/2#c"), "BASE", s.URL)))
	s.add("/list.txt", "text/plain", []byte(s.URL+"/docs/a\nnot a url\n"+s.URL+"/docs/b\n"))

	got, rep := walk(t, []Source{{URL: s.URL + "/sitemap_index.xml"}}, DefaultLimits())
	want := []string{s.URL + "/", s.URL + "/about", s.URL + "/posts/1", s.URL + "/posts/2", s.URL + "/docs/a", s.URL + "/docs/b"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("URLs\n got %q\nwant %q", got, want)
	}
	if rep.Read != 4 {
		t.Errorf("read %d files, want 4", rep.Read)
	}
	for _, parts := range [][]string{
		{"pages.xml", "URLs outside the hosts and paths it may list: 1"},
		{"localhost:1/other.xml", "does not speak for"},
		{"list.txt", "locations that are not http(s) URLs: 1"},
		{"pages.xml", "read once"},
	} {
		if !hasNote(rep, parts...) {
			t.Errorf("no note with %q in %q", parts, rep.Notes)
		}
	}
	if n := s.count("/pages.xml"); n != 1 {
		t.Errorf("pages.xml read %d times", n)
	}
}

func TestWalkLoopAndDepth(t *testing.T) {
	s := newSite(t)
	// a lists b, b lists a and c, c lists d, d lists e: a loop, and a chain
	// deeper than the limit.
	s.xml("/a.xml", indexOf("BASE/b.xml"))
	s.xml("/b.xml", indexOf("BASE/a.xml", "BASE/c.xml", "BASE/urls.xml"))
	s.xml("/c.xml", indexOf("BASE/d.xml"))
	s.xml("/d.xml", indexOf("BASE/e.xml"))
	s.xml("/e.xml", urlsetOf("BASE/deep"))
	s.xml("/urls.xml", urlsetOf("BASE/p"))

	limits := DefaultLimits()
	limits.Depth = 3
	got, rep := walk(t, []Source{{URL: s.URL + "/a.xml"}}, limits)
	if strings.Join(got, " ") != s.URL+"/p" {
		t.Errorf("URLs %q, want only /p", got)
	}
	if s.count("/a.xml") != 1 || s.count("/e.xml") != 0 {
		t.Errorf("a.xml read %d times, e.xml %d; want once and never", s.count("/a.xml"), s.count("/e.xml"))
	}
	if !hasNote(rep, "a.xml, already read") || !hasNote(rep, "d.xml", "nested 3 levels deep") {
		t.Errorf("notes %q", rep.Notes)
	}
}

func TestWalkAuthority(t *testing.T) {
	s := newSite(t)
	s.xml("/maps/site.xml", urlsetOf("BASE/maps/a", "BASE/blog/b"))
	// Found without robots.txt: it speaks for /maps/ only.
	got, rep := walk(t, []Source{{URL: s.URL + "/maps/site.xml"}}, DefaultLimits())
	if strings.Join(got, " ") != s.URL+"/maps/a" || !hasNote(rep, "outside the hosts and paths it may list: 1") {
		t.Errorf("undeclared: %q %q", got, rep.Notes)
	}
	// Declared by the host's robots.txt: the whole host.
	host := strings.TrimPrefix(s.URL, "http://")
	got, _ = walk(t, []Source{{URL: s.URL + "/maps/site.xml", DeclaredBy: host}}, DefaultLimits())
	if strings.Join(got, " ") != s.URL+"/maps/a "+s.URL+"/blog/b" {
		t.Errorf("declared: %q", got)
	}
}

func TestWalkGuessesAreQuiet(t *testing.T) {
	s := newSite(t)
	s.add("/sitemap.xml", "text/html", []byte("<!doctype html><html><body>soft 404</body></html>"))
	s.add("/sitemap.txt", "text/plain", []byte("Nothing here.\nhttps://example.com/not-read\n"))
	got, rep := walk(t, []Source{{URL: s.URL + "/sitemap.xml", Guessed: true}, {URL: s.URL + "/sitemap.txt", Guessed: true}, {URL: s.URL + "/sitemap_index.xml", Guessed: true}}, DefaultLimits())
	if len(got) != 0 || rep.Read != 0 || len(rep.Notes) != 0 {
		t.Errorf("got %q, read %d, notes %q; want nothing", got, rep.Read, rep.Notes)
	}
	got, rep = walk(t, []Source{{URL: s.URL + "/sitemap_index.xml"}}, DefaultLimits())
	if len(got) != 0 || !hasNote(rep, "sitemap_index.xml", "HTTP 404") {
		t.Errorf("declared and missing: notes %q", rep.Notes)
	}
}

func TestWalkLimits(t *testing.T) {
	s := newSite(t)
	var children []string
	for i := range 5 {
		p := fmt.Sprintf("/s%d.xml", i)
		children = append(children, "BASE"+p)
		s.xml(p, urlsetOf(fmt.Sprintf("BASE/page%d", i)))
	}
	s.xml("/index.xml", indexOf(children...))
	limits := DefaultLimits()
	limits.Files = 3
	got, rep := walk(t, []Source{{URL: s.URL + "/index.xml"}}, limits)
	if len(got) != 2 || !hasNote(rep, "read 3 sitemap files, the limit; sitemaps listed but not read: 3") {
		t.Errorf("got %q, notes %q", got, rep.Notes)
	}

	// The walk stops as soon as emit says so.
	n := 0
	Walk(t.Context(), getter(t), []Source{{URL: s.URL + "/index.xml"}}, DefaultLimits(), func(*url.URL) bool {
		n++
		return n < 2
	})
	if n != 2 || s.count("/s2.xml") != 0 {
		t.Errorf("emit called %d times, s2.xml read %d times", n, s.count("/s2.xml"))
	}
}

func TestWalkBombs(t *testing.T) {
	s := newSite(t)
	// 64 MiB of white space in a URL set, gzipped to about 64 KiB: once as
	// a .gz file, once as a gzip Content-Encoding the fetcher undoes.
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	_, _ = w.Write([]byte("<urlset><url><loc>" + s.URL + "/first</loc></url>"))
	chunk := bytes.Repeat([]byte(" "), 1<<20)
	for range 64 {
		_, _ = w.Write(chunk)
	}
	_, _ = w.Write([]byte("<url><loc>" + s.URL + "/last</loc></url></urlset>"))
	_ = w.Close()
	bomb := b.Bytes()
	s.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/encoded.xml" {
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Type", "application/xml")
		} else {
			w.Header().Set("Content-Type", "application/x-gzip")
		}
		_, _ = w.Write(bomb)
	})
	limits := DefaultLimits()
	limits.FileBytes = 1 << 20
	for _, tt := range []struct{ path, note string }{
		{"/bomb.xml.gz", "larger than 1048576 bytes uncompressed"},
		{"/encoded.xml", "cut by the fetch's byte cap"},
	} {
		t.Run(tt.path, func(t *testing.T) {
			var got []string
			rep := Walk(t.Context(), getterCapped(t, limits.FileBytes), []Source{{URL: s.URL + tt.path}}, limits, func(u *url.URL) bool {
				got = append(got, u.String())
				return true
			})
			if strings.Join(got, " ") != s.URL+"/first" {
				t.Errorf("URLs %q, want only the one before the limit", got)
			}
			if !hasNote(rep, tt.path, tt.note) {
				t.Errorf("notes %q, want one with %q", rep.Notes, tt.note)
			}
		})
	}
}
