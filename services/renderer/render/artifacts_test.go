package render

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

func decodeImage(t *testing.T, b []byte, format string) (w, h int) {
	t.Helper()
	var img image.Image
	var err error
	switch format {
	case "png":
		img, err = png.Decode(bytes.NewReader(b))
	case "jpeg":
		img, err = jpeg.Decode(bytes.NewReader(b))
	}
	if err != nil {
		t.Fatalf("decode %s of %d bytes: %v", format, len(b), err)
	}
	return img.Bounds().Dx(), img.Bounds().Dy()
}

func TestPicturesAndArchives(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	// Printing and picturing a tall page is slow on a loaded machine.
	localReq := func(u string, mod func(*distillv1.FetchOptions)) *internalv1.RenderRequest {
		return localReq(u, func(o *distillv1.FetchOptions) {
			o.TimeoutSecs = proto.Int32(30)
			mod(o)
		})
	}
	srv := httptest.NewServer(page(`<h1>Archived heading</h1><div style="height:3000px;background:#39f">tall</div>`))
	t.Cleanup(srv.Close)

	t.Run("viewport png", func(t *testing.T) {
		t.Parallel()
		res, err := shared.Render(context.Background(), localReq(srv.URL, func(o *distillv1.FetchOptions) { o.Screenshot = "viewport" }))
		if err != nil {
			t.Fatal(err)
		}
		if w, h := decodeImage(t, res.GetScreenshot(), "png"); w != ViewportWidth || h != ViewportHeight {
			t.Errorf("screenshot %dx%d, want %dx%d", w, h, ViewportWidth, ViewportHeight)
		}
	})
	t.Run("full page jpeg", func(t *testing.T) {
		t.Parallel()
		res, err := shared.Render(context.Background(), localReq(srv.URL, func(o *distillv1.FetchOptions) {
			o.Screenshot, o.ScreenshotFormat = "full", "jpeg"
		}))
		if err != nil {
			t.Fatal(err)
		}
		w, h := decodeImage(t, res.GetScreenshot(), "jpeg")
		// The page's width is the viewport's but for its scrollbar.
		if w > ViewportWidth || w < ViewportWidth-30 || h < 3000 || h > MaxShotHeight {
			t.Errorf("screenshot %dx%d, want the page's width (%d less its scrollbar) and its 3000+ px height", w, h, ViewportWidth)
		}
	})
	t.Run("pdf", func(t *testing.T) {
		t.Parallel()
		res, err := shared.Render(context.Background(), localReq(srv.URL, func(o *distillv1.FetchOptions) { o.Pdf = true }))
		if err != nil {
			t.Fatal(err)
		}
		checkPDF(t, res.GetPdf())
	})
	t.Run("mhtml", func(t *testing.T) {
		t.Parallel()
		res, err := shared.Render(context.Background(), localReq(srv.URL, func(o *distillv1.FetchOptions) { o.Mhtml = true }))
		if err != nil {
			t.Fatal(err)
		}
		html := mhtmlDocument(t, res.GetMhtml())
		if !strings.Contains(html, "Archived heading") {
			t.Errorf("the archive's document lacks the page's heading:\n%s", html)
		}
	})
}

// checkPDF reads a PDF's structure back: its header, the cross-reference
// its trailer points to, and at least one page object.
func checkPDF(t *testing.T, b []byte) {
	t.Helper()
	if !bytes.HasPrefix(b, []byte("%PDF-1.")) {
		t.Fatalf("not a PDF: %q", b[:min(len(b), 16)])
	}
	m := regexp.MustCompile(`startxref\s+(\d+)\s+%%EOF\s*$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no startxref trailer")
	}
	off, _ := strconv.Atoi(string(m[1]))
	if off <= 0 || off >= len(b) {
		t.Fatalf("startxref %d outside the file of %d bytes", off, len(b))
	}
	if at := b[off:]; !bytes.HasPrefix(at, []byte("xref")) && !regexp.MustCompile(`^\d+ \d+ obj`).Match(at) {
		t.Fatalf("startxref %d points at %q", off, at[:min(len(at), 16)])
	}
	if !regexp.MustCompile(`/Type\s*/Page\b`).Match(b) {
		t.Fatalf("no page object")
	}
}

// mhtmlDocument parses an MHTML archive and returns its HTML document,
// quoted-printable decoded.
func mhtmlDocument(t *testing.T, b []byte) string {
	t.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("mhtml is not a MIME message: %v", err)
	}
	mt, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/related" {
		t.Fatalf("mhtml content type %q (%v), want multipart/related", mt, err)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if err != nil {
			t.Fatalf("no text/html part: %v", err)
		}
		if strings.HasPrefix(p.Header.Get("Content-Type"), "text/html") {
			// multipart decodes quoted-printable parts itself.
			body, err := io.ReadAll(p)
			if err != nil {
				t.Fatal(err)
			}
			return string(body)
		}
	}
}

func TestBlockSkipsResourcesButNotStylesheets(t *testing.T) {
	t.Parallel()
	requireChromium(t)
	mux := http.NewServeMux()
	hits := newHitCounter(t, mux)
	mux.HandleFunc("/", page(`<link rel="stylesheet" href="/style.css"><img src="/a.png"><img src="/b.png"><video src="/v.mp4" autoplay muted></video><p class="f">text</p>`))
	mux.HandleFunc("/style.css", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/css")
		_, _ = io.WriteString(w, `@font-face { font-family: F; src: url(/f.woff2); } .f { font-family: F; }`)
	})
	for _, p := range []string{"/a.png", "/b.png", "/f.woff2", "/v.mp4"} {
		mux.HandleFunc(p, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) })
	}

	res, err := shared.Render(context.Background(), localReq(hits.URL+"/", func(o *distillv1.FetchOptions) {
		o.Block = []string{"images", "fonts", "media"}
	}))
	if err != nil {
		t.Fatal(err)
	}
	if hits.count("/style.css") != 1 {
		t.Errorf("stylesheet requested %d times, want 1", hits.count("/style.css"))
	}
	for _, p := range []string{"/a.png", "/b.png", "/f.woff2", "/v.mp4"} {
		if n := hits.count(p); n != 0 {
			t.Errorf("%s requested %d times though blocked", p, n)
		}
	}
	if res.GetBlockedResources() < 3 {
		t.Errorf("blocked_resources = %d, want the two images and the font at least", res.GetBlockedResources())
	}

	// Unblocked, the same page asks for them.
	before := hits.count("/a.png")
	if _, err := shared.Render(context.Background(), localReq(hits.URL+"/", nil)); err != nil {
		t.Fatal(err)
	}
	if hits.count("/a.png") == before {
		t.Errorf("the image was not requested without --block: the test proves nothing")
	}
}
