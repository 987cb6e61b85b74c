package render

import (
	"fmt"
	"io"
	"math"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"distill.dev/proto/failure"
	"distill.dev/proto/fetchopts"
)

// Bounds of what a render hands back besides its DOM. Together with the DOM
// they stay within one gRPC message (grpcserve.MaxMessageBytes).
const (
	// ViewportWidth and ViewportHeight are the window a render with browser
	// work lays its page out in, so pictures and scrolls do not depend on
	// the browser's default.
	ViewportWidth  = 1280
	ViewportHeight = 800
	// MaxShotHeight caps a full-page screenshot's height; a longer page is
	// cut there. Its width is the viewport's.
	MaxShotHeight = 16384
	// MaxScreenshotBytes caps a screenshot.
	MaxScreenshotBytes = 8 << 20
	// MaxPDFBytes and MaxMHTMLBytes cap the printed and archived page.
	MaxPDFBytes   = 16 << 20
	MaxMHTMLBytes = 16 << 20
	// jpegQuality is the quality of jpeg screenshots.
	jpegQuality = 80
)

// setViewport lays the page out in the render's fixed window.
func setViewport(page *rod.Page) error {
	err := proto.EmulationSetDeviceMetricsOverride{Width: ViewportWidth, Height: ViewportHeight, DeviceScaleFactor: 1}.Call(page)
	if err != nil {
		return fmt.Errorf("set viewport: %w", err)
	}
	return nil
}

// screenshot pictures the viewport, or the page from its top down to
// MaxShotHeight, refused as TooLarge over limit bytes.
func screenshot(page *rod.Page, full bool, format string, limit int) ([]byte, error) {
	req := proto.PageCaptureScreenshot{Format: proto.PageCaptureScreenshotFormatPng}
	if format == fetchopts.FormatJPEG {
		req.Format = proto.PageCaptureScreenshotFormatJpeg
		q := jpegQuality
		req.Quality = &q
	}
	if full {
		m, err := proto.PageGetLayoutMetrics{}.Call(page)
		if err != nil {
			return nil, fmt.Errorf("screenshot: page size: %w", err)
		}
		w, h := float64(ViewportWidth), float64(ViewportHeight)
		if cs := m.CSSContentSize; cs != nil {
			w, h = math.Ceil(cs.Width), math.Ceil(cs.Height)
		}
		req.Clip = &proto.PageViewport{Width: min(w, ViewportWidth), Height: min(h, MaxShotHeight), Scale: 1}
		req.CaptureBeyondViewport = true
	}
	res, err := req.Call(page)
	if err != nil {
		return nil, fmt.Errorf("screenshot: %w", err)
	}
	if len(res.Data) > limit {
		return nil, failure.New(failure.TooLarge, "screenshot is %d bytes, over the %d byte limit (jpeg or the viewport alone is smaller)", len(res.Data), limit)
	}
	return res.Data, nil
}

// printPDF prints the page as Chromium would to paper, backgrounds kept,
// refused as TooLarge over MaxPDFBytes; the stream is read no further.
func printPDF(page *rod.Page) ([]byte, error) {
	stream, err := page.PDF(&proto.PagePrintToPDF{PrintBackground: true})
	if err != nil {
		return nil, fmt.Errorf("print to pdf: %w", err)
	}
	defer func() { _ = stream.Close() }()
	b, err := io.ReadAll(io.LimitReader(stream, MaxPDFBytes+1))
	if err != nil {
		return nil, fmt.Errorf("print to pdf: %w", err)
	}
	if len(b) > MaxPDFBytes {
		return nil, failure.New(failure.TooLarge, "pdf is over the %d byte limit", MaxPDFBytes)
	}
	return b, nil
}

// archiveMHTML serialises the page and the resources it shows as one
// MHTML file, refused as TooLarge over MaxMHTMLBytes.
func archiveMHTML(page *rod.Page) ([]byte, error) {
	res, err := proto.PageCaptureSnapshot{Format: proto.PageCaptureSnapshotFormatMhtml}.Call(page)
	if err != nil {
		return nil, fmt.Errorf("mhtml: %w", err)
	}
	if len(res.Data) > MaxMHTMLBytes {
		return nil, failure.New(failure.TooLarge, "mhtml is %d bytes, over the %d byte limit", len(res.Data), MaxMHTMLBytes)
	}
	return []byte(res.Data), nil
}
