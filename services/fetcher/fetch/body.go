package fetch

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"

	"distill.dev/proto/failure"
	internalv1 "distill.dev/proto/gen/distill/internalv1"
)

// answer reads the final response into the reply: content type first, so
// an unsupported type is refused without reading its body, then the body
// through the byte cap.
func (c *call) answer(ctx context.Context, where string, u *url.URL, resp *http.Response, history []string) (*internalv1.FetcherServiceFetchResponse, error) {
	defer resp.Body.Close()
	// Only a charset the server declared is passed on: the sniffer's utf-8
	// is a guess the extractor makes better from the bytes and <meta>.
	var mt, charset string
	declared := resp.Header.Get("Content-Type")
	if declared != "" {
		mt, charset = parseContentType(declared)
		if !c.anyType && !supported(mt) && !generic(mt) {
			return nil, failure.New(failure.UnsupportedContent, "%s: unsupported content type %s", where, mt)
		}
	}
	body, truncated, err := c.readBody(resp)
	if err != nil {
		return nil, c.classify(ctx, where, err)
	}
	switch {
	case (declared == "" || generic(mt)) && isPDF(body):
		// Servers often send a PDF as a download of no particular type;
		// its first bytes say what it is.
		mt, charset = "application/pdf", ""
	case declared == "":
		mt, _ = parseContentType(http.DetectContentType(body))
		if !c.anyType && !supported(mt) {
			return nil, failure.New(failure.UnsupportedContent, "%s: unsupported content type %s (sniffed)", where, mt)
		}
	case generic(mt) && !c.anyType:
		return nil, failure.New(failure.UnsupportedContent, "%s: unsupported content type %s", where, mt)
	case mt == "application/pdf":
		// A PDF is bytes, whatever charset the server thinks it has.
		charset = ""
	}
	// A page cut at max_bytes still reads from its beginning; a PDF keeps
	// its cross-reference table at the end, so a cut one cannot be read.
	if truncated && mt == "application/pdf" && !c.anyType {
		return nil, failure.New(failure.TooLarge, "%s: PDF longer than max_bytes (%d bytes): a cut PDF cannot be read (raise max_bytes)", where, c.maxBytes)
	}
	return &internalv1.FetcherServiceFetchResponse{
		FinalUrl:        u.String(),
		Status:          int32(resp.StatusCode),
		ContentType:     mt,
		Charset:         charset,
		Body:            body,
		RedirectHistory: history,
		TruncatedBody:   truncated,
	}, nil
}

// readBody streams the decoded body through the cap and keeps its first
// max_bytes, reporting whether there was more. max_bytes is a cap, not a
// failure (RustBrowser 1.x): a long page is distilled from its beginning.
// Reading stops one byte past the cap, so neither a long body nor a
// compression bomb is read whole.
func (c *call) readBody(resp *http.Response) ([]byte, bool, error) {
	codings, err := contentCodings(resp.Header.Values("Content-Encoding"))
	if err != nil {
		return nil, false, err
	}
	r, closeDecoders, err := decoder(resp.Body, codings)
	if err != nil {
		return nil, false, err
	}
	defer closeDecoders()
	limit := c.maxBytes
	if limit < math.MaxInt64 {
		limit++
	}
	// A declared length sizes the buffer once, up to the cap, instead of
	// letting ReadAll grow and copy it.
	var buf bytes.Buffer
	if n := resp.ContentLength; len(codings) == 0 && n > 0 {
		// MinRead more, or ReadFrom doubles the buffer to see EOF.
		buf.Grow(int(min(n, limit)) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(io.LimitReader(r, limit)); err != nil {
		return nil, false, fmt.Errorf("read body: %w", err)
	}
	body := buf.Bytes()
	if int64(len(body)) > c.maxBytes {
		return body[:c.maxBytes:c.maxBytes], true, nil
	}
	return body, false, nil
}

// decodedBody returns resp's body with its content codings undone; closing
// it closes the decoders and the response.
func decodedBody(resp *http.Response) (io.ReadCloser, error) {
	codings, err := contentCodings(resp.Header.Values("Content-Encoding"))
	if err != nil {
		return nil, err
	}
	r, closeDecoders, err := decoder(resp.Body, codings)
	if err != nil {
		return nil, err
	}
	raw := resp.Body
	return &decoded{Reader: r, close: func() error {
		closeDecoders()
		return raw.Close()
	}}, nil
}

type decoded struct {
	io.Reader
	close func() error
}

func (d *decoded) Close() error { return d.close() }

// unsupportedEncoding is a Content-Encoding we did not ask for.
type unsupportedEncoding struct{ coding string }

func (e *unsupportedEncoding) Error() string {
	return "unsupported content encoding " + e.coding
}

func contentCodings(values []string) ([]string, error) {
	var codings []string
	for _, v := range values {
		for c := range strings.SplitSeq(v, ",") {
			switch c = strings.ToLower(strings.TrimSpace(c)); c {
			case "", "identity":
			case "gzip", "x-gzip", "deflate", "br", "zstd":
				codings = append(codings, c)
			default:
				return nil, &unsupportedEncoding{coding: c}
			}
		}
	}
	return codings, nil
}

// zstdMaxWindow is the largest window a zstd body may ask for. RFC 9659
// holds the "zstd" content coding to 8 MB, and a bigger window is memory a
// hostile server would make us allocate before the byte cap is reached.
const zstdMaxWindow = 8 << 20

// decoder undoes the codings, last applied first. Decoding is lazy, so the
// cap on the result bounds the work done on every layer. The returned func
// releases decoders that hold resources; call it when done reading.
func decoder(body io.Reader, codings []string) (io.Reader, func(), error) {
	r := body
	var closers []func()
	closeAll := func() {
		for _, c := range closers {
			c()
		}
	}
	for i := len(codings) - 1; i >= 0; i-- {
		switch codings[i] {
		case "gzip", "x-gzip":
			gz, err := gzip.NewReader(r)
			if err != nil {
				closeAll()
				return nil, nil, fmt.Errorf("gzip body: %w", err)
			}
			r = gz
		case "deflate":
			dr, err := deflateReader(r)
			if err != nil {
				closeAll()
				return nil, nil, fmt.Errorf("deflate body: %w", err)
			}
			r = dr
		case "br":
			r = brotli.NewReader(r)
		case "zstd":
			zr, err := zstd.NewReader(r,
				// One goroutine decoding in step with our reads: no
				// read-ahead past what the cap lets through.
				zstd.WithDecoderConcurrency(1),
				zstd.WithDecoderLowmem(true),
				zstd.WithDecoderMaxWindow(zstdMaxWindow))
			if err != nil {
				closeAll()
				return nil, nil, fmt.Errorf("zstd body: %w", err)
			}
			closers = append(closers, zr.Close)
			r = zr
		}
	}
	return r, closeAll, nil
}

// deflateReader reads "deflate" bodies, which are meant to be zlib streams
// (RFC 9110) but are often raw deflate; the zlib header tells them apart.
func deflateReader(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	h, err := br.Peek(2)
	if err == nil && h[0]&0x0f == 8 && (uint16(h[0])<<8|uint16(h[1]))%31 == 0 {
		return zlib.NewReader(br)
	}
	return flate.NewReader(br), nil
}

// parseContentType returns the bare, lower-case media type of a
// Content-Type and its lower-case charset parameter, "" when there is none.
// A header the mime parser rejects still names its media type but no
// charset.
func parseContentType(contentType string) (mediaType, charset string) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt, _, _ = strings.Cut(contentType, ";")
		return strings.ToLower(strings.TrimSpace(mt)), ""
	}
	return mt, strings.ToLower(strings.TrimSpace(params["charset"]))
}

// supported reports whether distill can distill a media type: markup,
// text and the structured formats pages are served as.
func supported(mt string) bool {
	switch {
	case strings.HasPrefix(mt, "text/"),
		mt == "application/xhtml+xml",
		mt == "application/xml",
		mt == "application/json",
		strings.HasSuffix(mt, "+xml"),
		strings.HasSuffix(mt, "+json"),
		mt == "application/pdf":
		return true
	}
	return false
}

// generic reports whether a media type names no format in particular, or
// a PDF by one of its unofficial names, so that only the body's first
// bytes can say whether it is a PDF.
func generic(mt string) bool {
	switch mt {
	case "application/octet-stream", "binary/octet-stream", "application/binary",
		"application/download", "application/x-download", "application/force-download",
		"application/x-pdf", "application/acrobat", "application/vnd.pdf":
		return true
	}
	return false
}

// pdfMagic starts every PDF file; readers accept up to a kilobyte of junk
// before it, and so does isPDF.
const pdfMagic = "%PDF-"

func isPDF(body []byte) bool {
	return bytes.Contains(body[:min(len(body), 1024)], []byte(pdfMagic))
}
