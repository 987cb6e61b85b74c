package fetch

import (
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"

	"distill.dev/proto/failure"
)

func brWriter(w io.Writer) io.WriteCloser {
	return brotli.NewWriterLevel(w, brotli.BestSpeed)
}

func zstdWriter(w io.Writer, opts ...zstd.EOption) io.WriteCloser {
	zw, err := zstd.NewWriter(w, append([]zstd.EOption{zstd.WithEncoderLevel(zstd.SpeedFastest)}, opts...)...)
	if err != nil {
		panic(err)
	}
	return zw
}

func TestFetchDecodesBrotliAndZstd(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		encoding string
		encode   func(io.Writer) io.WriteCloser
	}{
		{name: "br", encoding: "br", encode: brWriter},
		{name: "zstd", encoding: "zstd", encode: func(w io.Writer) io.WriteCloser { return zstdWriter(w) }},
		{name: "upper-case BR", encoding: "BR", encode: brWriter},
		// "gzip, br": gzip applied first, so br is undone first.
		{name: "gzip then br", encoding: "gzip, br", encode: func(w io.Writer) io.WriteCloser {
			outer := brWriter(w)
			return &stacked{inner: gzip.NewWriter(outer), outer: outer}
		}},
		{name: "zstd then gzip", encoding: "zstd, gzip", encode: func(w io.Writer) io.WriteCloser {
			outer := gzip.NewWriter(w)
			return &stacked{inner: zstdWriter(outer), outer: outer}
		}},
	}
	f := newFetcher(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ts, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.Header().Set("Content-Encoding", tt.encoding)
				zw := tt.encode(w)
				_, _ = io.WriteString(zw, page)
				_ = zw.Close()
			})
			resp := mustGet(t, f, ts.URL, local())
			if string(resp.GetBody()) != page {
				t.Fatalf("body %q, want the decoded page", resp.GetBody())
			}
		})
	}
}

type stacked struct{ inner, outer io.WriteCloser }

func (s *stacked) Write(p []byte) (int, error) { return s.inner.Write(p) }
func (s *stacked) Close() error {
	if err := s.inner.Close(); err != nil {
		return err
	}
	return s.outer.Close()
}

// Endless compressed streams of zeros stop at the cap: if decoding ran on
// past it, the fetch would run into its timeout instead of answering with
// the first max_bytes.
func TestFetchBrotliAndZstdBombs(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	zeros := make([]byte, 64<<10)
	tests := []struct {
		name     string
		encoding string
		encode   func(io.Writer) io.WriteCloser
	}{
		{name: "br bomb", encoding: "br", encode: brWriter},
		{name: "zstd bomb", encoding: "zstd", encode: func(w io.Writer) io.WriteCloser { return zstdWriter(w) }},
	}
	f := newFetcher(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ts, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.Header().Set("Content-Encoding", tt.encoding)
				zw := tt.encode(w)
				defer zw.Close()
				for r.Context().Err() == nil {
					if _, err := zw.Write(zeros); err != nil {
						return
					}
				}
			})
			o := local()
			o.MaxBytes = ptr(int64(limit))
			o.TimeoutSecs = ptr(int32(10))
			resp, err := get(t, f, ts.URL, o)
			if err != nil || len(resp.GetBody()) != limit || !resp.GetTruncatedBody() {
				t.Fatalf("got %d bytes, truncated_body %v, err %v; want %d bytes cut", len(resp.GetBody()), resp.GetTruncatedBody(), err, limit)
			}
		})
	}
}

// A zstd frame asking for a window past the 8 MB of RFC 9659 is refused
// before the decoder allocates it.
func TestFetchZstdWindowTooLarge(t *testing.T) {
	t.Parallel()
	ts, _ := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "zstd")
		zw := zstdWriter(w, zstd.WithWindowSize(64<<20))
		_, _ = io.WriteString(zw, strings.Repeat(page, 1000))
		_ = zw.Close()
	})
	_, err := get(t, newFetcher(t), ts.URL, local())
	wantFailure(t, err, failure.Network, "fetch "+ts.URL, "window")
}
