package bench

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"

	protobuf "google.golang.org/protobuf/proto"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
	distillv1 "distill.dev/proto/gen/distill/v1"
	"distill.dev/services/renderer/render"
)

// The media page is the app shell with what a news page also loads:
// pictures, a web font and a video. Their bytes are random: the browser
// downloads them all the same, and that is what --block saves.
const (
	mediaImages    = 12
	mediaImageSize = 60 << 10
	mediaFontSize  = 90 << 10
	mediaVideoSize = 400 << 10
)

// served counts the bytes the site wrote.
type served struct{ bytes atomic.Int64 }

type countingWriter struct {
	http.ResponseWriter
	s *served
}

func (w countingWriter) Write(b []byte) (int, error) {
	n, err := w.ResponseWriter.Write(b)
	w.s.bytes.Add(int64(n))
	return n, err
}

func (s *served) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(countingWriter{w, s}, r)
	})
}

func serveMedia(mux *http.ServeMux) {
	blob := func(size int, mime string) http.HandlerFunc {
		b := make([]byte, size)
		_, _ = rand.Read(b)
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", mime)
			w.Header().Set("Cache-Control", "no-store")
			_, _ = w.Write(b)
		}
	}
	var extra strings.Builder
	extra.WriteString(`<style>@font-face{font-family:Gazette;src:url(/media/gazette.woff2)}body{font-family:Gazette,sans-serif}</style>`)
	for i := range mediaImages {
		fmt.Fprintf(&extra, `<img src="/media/photo-%d.jpg" width="400" height="300" alt="">`, i)
	}
	extra.WriteString(`<video src="/media/clip.mp4" autoplay muted preload="auto"></video>`)
	page := strings.Replace(shell, `<div id="app"></div>`, extra.String()+`<div id="app"></div>`, 1)
	mux.HandleFunc("GET /media", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write([]byte(page))
	})
	mux.HandleFunc("GET /media/gazette.woff2", blob(mediaFontSize, "font/woff2"))
	mux.HandleFunc("GET /media/clip.mp4", blob(mediaVideoSize, "video/mp4"))
	img := blob(mediaImageSize, "image/jpeg")
	for i := range mediaImages {
		mux.HandleFunc(fmt.Sprintf("GET /media/photo-%d.jpg", i), img)
	}
}

// blockResult is the media page rendered one way: its figures and the
// bytes the site served per render.
type blockResult struct {
	summary
	BytesPerRender float64
}

// measureBlock renders the media page through the pool, with block given
// or not, counting what the site served.
func measureBlock(ctx context.Context, cfg Config, logger *slog.Logger, base string, s *served, block []string) (blockResult, error) {
	r := render.New(logger, render.WithChromium(cfg.Chromium), render.WithMaxPages(cfg.Concurrency), render.WithAllowLocal(true))
	defer func() { _ = r.Close() }()
	opts := &distillv1.FetchOptions{AllowLocal: true, TimeoutSecs: protobuf.Int32(30), JsWaitFor: "#ready", Block: block}
	each := func(ctx context.Context, i int) error {
		u := fmt.Sprintf("%s/media?block=%d-%d", base, len(block), i)
		res, err := r.Render(ctx, &internalv1.RenderRequest{Url: u, Options: opts})
		if err != nil {
			return fmt.Errorf("distill pool %s: %w", u, err)
		}
		return checkDOM(res.GetHtml())
	}
	if _, _, err := measure(ctx, cfg.WarmUp, cfg.Concurrency, each); err != nil {
		return blockResult{}, fmt.Errorf("warm-up: %w", err)
	}
	before := s.bytes.Load()
	lat, wall, err := measure(ctx, cfg.BlockRenders, cfg.Concurrency, each)
	if err != nil {
		return blockResult{}, err
	}
	return blockResult{summary: summarize(lat, wall), BytesPerRender: float64(s.bytes.Load()-before) / float64(cfg.BlockRenders)}, nil
}
