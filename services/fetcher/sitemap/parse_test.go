package sitemap

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func gz(t *testing.T, s string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(s)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func parseAll(t *testing.T, body []byte, maxURLs int, maxBytes int64) (Kind, []string, error) {
	t.Helper()
	var locs []string
	kind, err := Parse(bytes.NewReader(body), maxURLs, maxBytes, func(k Kind, loc string) bool {
		locs = append(locs, loc)
		return true
	})
	return kind, locs, err
}

const urlset = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url>
    <loc>
      https://example.com/a
    </loc>
    <lastmod>2026-01-01</lastmod>
    <image:image><image:loc>https://cdn.example.com/a.png</image:loc></image:image>
  </url>
  <url><loc><![CDATA[https://example.com/b?x=1&y=2]]></loc></url>
  <url><loc>https://example.com/c?x=1&amp;y=2</loc></url>
  <url><loc>https://example.com/d?x=1&y=2</loc></url>
  <url><loc></loc></url>
</urlset>`

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		body []byte
		kind Kind
		want []string
	}{
		{"URL set with extensions, whitespace, CDATA, entities", []byte(urlset), URLSet,
			[]string{"https://example.com/a", "https://example.com/b?x=1&y=2", "https://example.com/c?x=1&y=2", "https://example.com/d?x=1&y=2"}},
		{"index", []byte(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>https://example.com/s1.xml</loc></sitemap><sitemap><loc>https://example.com/s2.xml.gz</loc></sitemap></sitemapindex>`), Index,
			[]string{"https://example.com/s1.xml", "https://example.com/s2.xml.gz"}},
		{"no namespace", []byte(`<urlset><url><loc>https://example.com/a</loc></url></urlset>`), URLSet, []string{"https://example.com/a"}},
		{"prefixed namespace", []byte(`<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:url><sm:loc>https://example.com/a</sm:loc></sm:url></sm:urlset>`), URLSet, []string{"https://example.com/a"}},
		{"Latin-1 declared", []byte("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><urlset><url><loc>https://example.com/caf\xe9</loc></url></urlset>"), URLSet, []string{"https://example.com/café"}},
		{"text with BOM, CRLF, blanks", []byte("\ufeffhttps://example.com/a\r\n\r\n  https://example.com/b  \n# note\nhttps://example.com/c"), Text,
			[]string{"https://example.com/a", "https://example.com/b", "https://example.com/c"}},
		{"text long line skipped", []byte("https://example.com/" + strings.Repeat("x", 5000) + "\nhttps://example.com/ok\n"), Text, []string{"https://example.com/ok"}},
		{"RSS", []byte(`<rss version="2.0"><channel><link>https://example.com/</link><item><link>https://example.com/post</link></item></channel></rss>`), Feed, []string{"https://example.com/post"}},
		{"Atom", []byte(`<feed xmlns="http://www.w3.org/2005/Atom"><link href="https://example.com/"/><entry><link rel="alternate" href="https://example.com/e1"/><link rel="edit" href="https://example.com/edit"/></entry></feed>`), Feed, []string{"https://example.com/e1"}},
		{"gzipped", gz(t, `<urlset><url><loc>https://example.com/z</loc></url></urlset>`), URLSet, []string{"https://example.com/z"}},
		{"gzipped text", gz(t, "https://example.com/t\n"), Text, []string{"https://example.com/t"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kind, locs, err := parseAll(t, tt.body, MaxURLsPerFile, MaxFileBytes)
			if err != nil {
				t.Fatal(err)
			}
			if kind != tt.kind || strings.Join(locs, " ") != strings.Join(tt.want, " ") {
				t.Errorf("got %s %q, want %s %q", kind, locs, tt.kind, tt.want)
			}
		})
	}
}

func TestParseNotSitemap(t *testing.T) {
	for _, body := range []string{"<!doctype html><html><body>Not found</body></html>", "<html><body></body></html>", "", "   \n"} {
		_, _, err := parseAll(t, []byte(body), MaxURLsPerFile, MaxFileBytes)
		if !errors.Is(err, ErrNotSitemap) {
			t.Errorf("%q: err = %v, want ErrNotSitemap", body, err)
		}
	}
}

func TestParseLimits(t *testing.T) {
	var b strings.Builder
	b.WriteString("<urlset>")
	for i := range 10 {
		b.WriteString("<url><loc>https://example.com/" + string(rune('a'+i)) + "</loc></url>")
	}
	b.WriteString("</urlset>")

	t.Run("URLs", func(t *testing.T) {
		_, locs, err := parseAll(t, []byte(b.String()), 4, MaxFileBytes)
		le, ok := errors.AsType[*LimitError](err)
		if !ok || le.What != "URLs" || len(locs) != 4 {
			t.Fatalf("got %d locations, err %v; want 4 and a URL limit", len(locs), err)
		}
		if !strings.Contains(err.Error(), "more than 4 URLs") {
			t.Errorf("message %q", err)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		_, locs, err := parseAll(t, []byte(b.String()), MaxURLsPerFile, 100)
		le, ok := errors.AsType[*LimitError](err)
		if !ok || le.What != "bytes" || len(locs) == 0 || len(locs) >= 10 {
			t.Fatalf("got %d locations, err %v; want a few and a byte limit", len(locs), err)
		}
	})
	t.Run("exactly at the byte limit", func(t *testing.T) {
		_, locs, err := parseAll(t, []byte(b.String()), MaxURLsPerFile, int64(b.Len()))
		if err != nil || len(locs) != 10 {
			t.Fatalf("got %d locations, err %v", len(locs), err)
		}
	})
	t.Run("text past the URL limit", func(t *testing.T) {
		_, locs, err := parseAll(t, []byte("https://example.com/1\nhttps://example.com/2\nhttps://example.com/3\n"), 2, MaxFileBytes)
		if _, ok := errors.AsType[*LimitError](err); !ok || len(locs) != 2 {
			t.Fatalf("got %d, err %v", len(locs), err)
		}
	})
}

func TestParseGzipBomb(t *testing.T) {
	// 64 MiB of white space inside a URL set compresses to about 64 KiB.
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	_, _ = w.Write([]byte("<urlset><url><loc>https://example.com/first</loc></url>"))
	chunk := bytes.Repeat([]byte(" "), 1<<20)
	for range 64 {
		_, _ = w.Write(chunk)
	}
	_, _ = w.Write([]byte("<url><loc>https://example.com/last</loc></url></urlset>"))
	_ = w.Close()
	if b.Len() > 1<<20 {
		t.Fatalf("bomb is %d bytes compressed", b.Len())
	}
	const limit = 2 << 20
	_, locs, err := parseAll(t, b.Bytes(), MaxURLsPerFile, limit)
	le, ok := errors.AsType[*LimitError](err)
	if !ok || le.What != "bytes" {
		t.Fatalf("err = %v, want the byte limit", err)
	}
	if strings.Join(locs, " ") != "https://example.com/first" {
		t.Errorf("locations %q, want only the one before the limit", locs)
	}
}

func TestParseStopsWhenAsked(t *testing.T) {
	n := 0
	_, err := Parse(strings.NewReader(urlset), MaxURLsPerFile, MaxFileBytes, func(Kind, string) bool {
		n++
		return false
	})
	if err != nil || n != 1 {
		t.Errorf("emit called %d times, err %v; want once", n, err)
	}
}

func TestParseDeepNesting(t *testing.T) {
	body := "<urlset>" + strings.Repeat("<x>", 10_000) + strings.Repeat("</x>", 10_000) + "</urlset>"
	if _, _, err := parseAll(t, []byte(body), MaxURLsPerFile, MaxFileBytes); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("err = %v", err)
	}
}

func TestParseProtocolURLLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for i := range MaxURLsPerFile + 1 {
		fmt.Fprintf(&b, "<url><loc>https://example.com/p/%d</loc></url>\n", i)
	}
	b.WriteString("</urlset>")
	_, locs, err := parseAll(t, []byte(b.String()), MaxURLsPerFile, MaxFileBytes)
	if le, ok := errors.AsType[*LimitError](err); !ok || le.What != "URLs" || len(locs) != 50_000 {
		t.Fatalf("kept %d, err %v; want 50000 and the URL limit", len(locs), err)
	}
	if locs[len(locs)-1] != "https://example.com/p/49999" {
		t.Errorf("last kept %q", locs[len(locs)-1])
	}
}
