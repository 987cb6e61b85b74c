package extract

import (
	"bytes"
	"context"
	"io"
	"mime"
	"net/url"
	"strings"

	"golang.org/x/net/html"

	"distill.dev/proto/failure"
)

// pageURL parses the URL a page came from. It must be absolute: http(s)
// with a host, or file.
func pageURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return nil, failure.Wrap(failure.InvalidURL, err, "invalid page url %q", raw)
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return nil, failure.New(failure.InvalidURL, "page url %q has no host", raw)
		}
	case "file":
	default:
		return nil, failure.New(failure.InvalidURL, "page url %q is not an absolute http(s) or file URL", raw)
	}
	return u, nil
}

// mediaType returns the lower-case media type of a Content-Type value and
// its charset parameter. A malformed value still yields the type before
// its first semicolon.
func mediaType(contentType string) (string, string) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt, _, _ = strings.Cut(contentType, ";")
		return strings.ToLower(strings.TrimSpace(mt)), ""
	}
	return strings.ToLower(mt), params["charset"]
}

// maxNesting is how deep the fallback parse lets elements nest. The parser
// refuses documents nested deeper than 512 elements; implied elements can
// triple the depth a page writes, hence the margin.
const maxNesting = 128

// parseHTML parses what is kept of a page. A page the parser refuses for its depth is
// parsed again with its deepest tags dropped and their text kept; should
// that fail too, its text alone is parsed. Parsing stops when ctx ends.
func parseHTML(ctx context.Context, page elided) (*html.Node, error) {
	doc, err := html.Parse(&ctxReader{ctx: ctx, r: page.reader()})
	if err == nil {
		return doc, nil
	}
	if err := stopped(ctx, "parsing the page"); err != nil {
		return nil, err
	}
	b := page.bytes()
	if doc, err := html.Parse(bytes.NewReader(flatten(b, maxNesting))); err == nil {
		return doc, nil
	}
	doc, err = html.Parse(strings.NewReader("<p>" + html.EscapeString(textOnly(b)) + "</p>"))
	if err != nil {
		return nil, failure.Wrap(failure.Internal, err, "parse html")
	}
	return doc, nil
}

// ctxReader reads r until ctx ends: the parser asks for its input a few
// kilobytes at a time, so a cancelled parse of a huge page stops at its
// next read.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// voidElements never have an end tag, so they do not nest.
var voidElements = map[string]bool{
	"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true,
	"img": true, "input": true, "link": true, "meta": true, "source": true,
	"track": true, "wbr": true, "param": true, "keygen": true,
}

// flatten re-serialises b without the start and end tags that sit deeper
// than maxDepth, keeping everything else, text included.
func flatten(b []byte, maxDepth int) []byte {
	z := html.NewTokenizer(bytes.NewReader(b))
	var out bytes.Buffer
	out.Grow(len(b))
	depth := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			return out.Bytes()
		case html.StartTagToken, html.SelfClosingTagToken:
			// The parser opens a non-void element written <div/> like <div>.
			name, _ := z.TagName()
			if voidElements[string(name)] {
				break
			}
			depth++
			if depth > maxDepth {
				continue
			}
		case html.EndTagToken:
			depth--
			if depth >= maxDepth {
				continue
			}
			depth = max(depth, 0)
		}
		out.Write(z.Raw())
	}
}

// textOnly returns the text of b's markup, without scripts and styles.
func textOnly(b []byte) string {
	z := html.NewTokenizer(bytes.NewReader(b))
	var out strings.Builder
	skip := false
	for {
		switch z.Next() {
		case html.ErrorToken:
			return out.String()
		case html.StartTagToken:
			name, _ := z.TagName()
			skip = string(name) == "script" || string(name) == "style"
		case html.EndTagToken:
			skip = false
		case html.TextToken:
			if !skip {
				out.Write(z.Text())
				out.WriteByte(' ')
			}
		}
	}
}
