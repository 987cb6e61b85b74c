// Package sitemap reads sitemaps as the sitemaps.org protocol defines them
// (XML URL sets and indexes, plain text, RSS and Atom feeds, any of them
// gzipped) and walks a site's sitemaps from the ones robots.txt declares or
// the usual paths. Reading streams: a file is never held parsed, and every
// file, index and walk is bounded.
package sitemap

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"golang.org/x/net/html/charset"

	"distill.dev/services/fetcher/siteurl"
)

// The protocol's limits on one file.
const (
	MaxURLsPerFile = 50_000
	MaxFileBytes   = 50 << 20
)

// maxNesting bounds how deep elements may nest; a sitemap needs three.
const maxNesting = 32

// Kind is what a file turned out to be.
type Kind int

const (
	Unknown Kind = iota
	URLSet
	Index
	Text
	Feed
)

func (k Kind) String() string {
	switch k {
	case URLSet:
		return "URL set"
	case Index:
		return "sitemap index"
	case Text:
		return "text sitemap"
	case Feed:
		return "feed"
	}
	return "unknown"
}

// LimitError says a file went past one of the protocol's limits; the URLs
// before the limit were read.
type LimitError struct {
	// What is "URLs" or "bytes".
	What  string
	Limit int64
}

func (e *LimitError) Error() string {
	if e.What == "bytes" {
		return fmt.Sprintf("larger than %d bytes uncompressed; read its first %d", e.Limit, e.Limit)
	}
	return fmt.Sprintf("more than %d URLs; kept the first %d", e.Limit, e.Limit)
}

// ErrNotSitemap is a file that is none of the kinds a sitemap may be: most
// often a site's HTML page answering a path it does not have.
var ErrNotSitemap = errors.New("not a sitemap")

// Parse reads one sitemap file from r, gzipped or not, and calls emit with
// the file's kind and each location it lists, as written but trimmed: page URLs for a URL set,
// a text sitemap or a feed, sitemap URLs for an index. It stops, with a
// *LimitError, past maxURLs locations or maxBytes bytes uncompressed (so a
// gzip bomb costs maxBytes of reading, no more), and early, without error,
// when emit returns false. Locations emitted before an error stand.
func Parse(r io.Reader, maxURLs int, maxBytes int64, emit func(kind Kind, loc string) bool) (Kind, error) {
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return Unknown, fmt.Errorf("gzip: %w", err)
		}
		defer gz.Close()
		br = bufio.NewReader(gz)
	}
	br = bufio.NewReader(&capped{r: br, left: maxBytes, limit: maxBytes})
	n := 0
	counted := func(kind Kind, loc string) (bool, error) {
		if n == maxURLs {
			return false, &LimitError{What: "URLs", Limit: int64(maxURLs)}
		}
		n++
		return emit(kind, loc), nil
	}
	first, err := firstByte(br)
	if err != nil {
		if err == io.EOF {
			return Unknown, fmt.Errorf("%w: empty", ErrNotSitemap)
		}
		return Unknown, err
	}
	if first != '<' {
		return Text, parseText(br, counted)
	}
	return parseXML(br, counted)
}

// firstByte peeks at the first byte after a byte-order mark and white
// space.
func firstByte(br *bufio.Reader) (byte, error) {
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\ufeff")) {
		_, _ = br.Discard(3)
	}
	for i := 1; ; i++ {
		b, err := br.Peek(i)
		if err != nil {
			return 0, err
		}
		c := b[i-1]
		if c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return c, nil
		}
		if i == br.Size() {
			_, _ = br.Discard(i)
			i = 0
		}
	}
}

// capped reads at most limit bytes and then fails with a *LimitError,
// rather than io.EOF, so that a cut file is never read as a whole one.
type capped struct {
	r           io.Reader
	left, limit int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// One byte more tells a file of exactly limit bytes from a longer one.
		var one [1]byte
		if n, _ := io.ReadFull(c.r, one[:]); n == 0 {
			return 0, io.EOF
		}
		return 0, &LimitError{What: "bytes", Limit: c.limit}
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// parseText reads a text sitemap: one URL a line, UTF-8. A line longer
// than any URL the protocol allows is skipped whole.
func parseText(br *bufio.Reader, emit func(Kind, string) (bool, error)) error {
	var line []byte
	long := false
	for {
		chunk, isPrefix, err := br.ReadLine()
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		if !long {
			line = append(line, chunk...)
			if len(line) > siteurl.MaxLength+2 {
				long = true
			}
		}
		if isPrefix {
			continue
		}
		s := strings.TrimSpace(string(line))
		skip := long || s == "" || strings.HasPrefix(s, "#")
		line, long = line[:0], false
		if skip {
			continue
		}
		more, err := emit(Text, s)
		if err != nil || !more {
			return err
		}
	}
}

// parseXML reads an XML sitemap, index or feed token by token. A <loc>
// counts only as the child of a <url> or <sitemap> in that element's own
// namespace: the image:loc and video:loc of extensions are other things.
func parseXML(r io.Reader, emit func(Kind, string) (bool, error)) (Kind, error) {
	d := xml.NewDecoder(r)
	d.CharsetReader = charset.NewReaderLabel
	// Sitemaps in the wild carry raw ampersands in URLs; the lenient
	// reader keeps them as written.
	d.Strict = false
	kind := Unknown
	var stack []xml.Name
	var text strings.Builder
	collecting := false
	for {
		tok, err := d.Token()
		if err != nil {
			if err == io.EOF {
				if kind == Unknown {
					return Unknown, fmt.Errorf("%w: no root element", ErrNotSitemap)
				}
				return kind, nil
			}
			if le, ok := errors.AsType[*LimitError](err); ok {
				return kind, le
			}
			return kind, fmt.Errorf("XML: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) == 0 {
				switch t.Name.Local {
				case "urlset":
					kind = URLSet
				case "sitemapindex":
					kind = Index
				case "rss", "feed":
					kind = Feed
				default:
					return Unknown, fmt.Errorf("%w: its root element is <%s>", ErrNotSitemap, t.Name.Local)
				}
			}
			if len(stack) == maxNesting {
				return kind, fmt.Errorf("XML: elements nested deeper than %d", maxNesting)
			}
			if isLocation(kind, stack, t.Name) {
				collecting = true
				text.Reset()
			}
			if kind == Feed && atomLink(stack, t) {
				if href, ok := linkHref(t); ok {
					more, err := emit(kind, href)
					if err != nil || !more {
						return kind, err
					}
				}
			}
			stack = append(stack, t.Name)
		case xml.CharData:
			// A location longer than the protocol allows is dropped;
			// reading on would let one element fill memory.
			if collecting && text.Len() <= siteurl.MaxLength {
				text.Write(t)
			}
		case xml.EndElement:
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			if collecting && isLocation(kind, stack, t.Name) {
				collecting = false
				if loc := strings.TrimSpace(text.String()); loc != "" && len(loc) <= siteurl.MaxLength {
					more, err := emit(kind, loc)
					if err != nil || !more {
						return kind, err
					}
				}
			}
		}
	}
}

// isLocation reports whether an element named name under stack holds a
// location: urlset/url/loc, sitemapindex/sitemap/loc, rss/channel/item/link.
func isLocation(kind Kind, stack []xml.Name, name xml.Name) bool {
	switch {
	case kind == URLSet && len(stack) == 2:
		return stack[1].Local == "url" && name.Local == "loc" && name.Space == stack[1].Space
	case kind == Index && len(stack) == 2:
		return stack[1].Local == "sitemap" && name.Local == "loc" && name.Space == stack[1].Space
	case kind == Feed && len(stack) == 3:
		return stack[0].Local == "rss" && stack[2].Local == "item" && name.Local == "link" && name.Space == ""
	}
	return false
}

// atomLink reports whether t is an Atom entry's <link>.
func atomLink(stack []xml.Name, t xml.StartElement) bool {
	return len(stack) == 2 && stack[0].Local == "feed" && stack[1].Local == "entry" && t.Name.Local == "link"
}

// linkHref is an Atom link's href, when it links to the entry itself.
func linkHref(t xml.StartElement) (string, bool) {
	var href, rel string
	for _, a := range t.Attr {
		switch a.Name.Local {
		case "href":
			href = strings.TrimSpace(a.Value)
		case "rel":
			rel = a.Value
		}
	}
	return href, href != "" && (rel == "" || rel == "alternate") && len(href) <= siteurl.MaxLength
}
