package fetch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"time"

	"distill.dev/services/fetcher/warc"
)

// Recorder keeps the HTTP exchanges a Fetcher makes: every attempt, every
// redirect hop, robots.txt and resources alike. *warc.Writer is one.
// Record is called once per exchange, from many goroutines at once, when
// the response's body is closed, with as much of the body as was read.
type Recorder interface {
	Record(warc.Exchange)
}

// WithRecorder hands every HTTP exchange to r. A Fetcher that records does
// not answer from the cache, which holds answers, not exchanges: the
// record of a run would otherwise lack every page it had seen before. It
// still stores what it fetches.
func WithRecorder(r Recorder) Option {
	return func(f *Fetcher) { f.recorder = r }
}

// traceRemote returns ctx with a trace that notes the address of the
// connection the request goes out on, and a func that returns it.
func traceRemote(ctx context.Context) (context.Context, func() string) {
	var mu sync.Mutex
	var ip string
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			host := info.Conn.RemoteAddr().String()
			if h, _, err := net.SplitHostPort(host); err == nil {
				host = h
			}
			mu.Lock()
			ip = host
			mu.Unlock()
		},
	})
	return ctx, func() string {
		mu.Lock()
		defer mu.Unlock()
		return ip
	}
}

// recordingBody keeps the raw bytes the fetcher reads of a response, and
// records the exchange when the body is closed: the body as far as it was
// read, decoded, cut at the call's max_bytes.
type recordingBody struct {
	io.ReadCloser
	ctx context.Context
	raw bytes.Buffer
	eof bool
	// cut is why reading stopped early: "" while it has not.
	cut    string
	record func(raw []byte, eof bool, cut string)
	once   sync.Once
}

func (b *recordingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.raw.Write(p[:n])
	switch {
	case err == io.EOF:
		b.eof = true
	case err != nil && b.cut == "":
		// Judged now: by the time the body is closed, the call's
		// deadline may have passed for reasons of its own.
		b.cut = warc.TruncatedDisconnect
		if b.ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errTimeout) {
			b.cut = warc.TruncatedTime
		}
	}
	return n, err
}

func (b *recordingBody) Close() error {
	// The connection and the host's slot go first: writing the record
	// keeps neither the server nor the next request to it waiting.
	err := b.ReadCloser.Close()
	b.once.Do(func() { b.record(b.raw.Bytes(), b.eof, b.cut) })
	return err
}

// recording wraps resp's body so that closing it hands the exchange to the
// Fetcher's recorder.
func (f *Fetcher) recording(ctx context.Context, c *call, req *http.Request, m message, resp *http.Response, date time.Time, ip func() string) {
	sent := &http.Request{Method: req.Method, URL: req.URL, Host: req.Host, Header: req.Header.Clone()}
	var reqBody []byte
	if m.method != http.MethodGet {
		reqBody = m.body
	}
	// Only the status line and headers: the body is what was read.
	head := &http.Response{Status: resp.Status, StatusCode: resp.StatusCode, Proto: resp.Proto,
		Header: resp.Header.Clone(), TransferEncoding: resp.TransferEncoding}
	length := resp.ContentLength
	resp.Body = &recordingBody{ReadCloser: resp.Body, ctx: ctx, record: func(raw []byte, eof bool, cut string) {
		// A body read to its declared length is whole even if nobody
		// read on to see EOF.
		if !eof && cut == "" && length >= 0 && int64(len(raw)) == length {
			eof = true
		}
		ex := warc.Exchange{Date: date, Request: sent, RequestBody: reqBody, Response: head, IP: ip()}
		var short bool
		ex.Body, ex.Decoded, ex.Truncated, short = kept(head.Header, raw, c.maxBytes)
		switch {
		case ex.Truncated != "":
		case cut != "":
			ex.Truncated = cut
		case !eof:
			ex.Truncated = warc.TruncatedLength
		case short:
			// Every byte came, yet they decode to less than a body.
			ex.Truncated = warc.TruncatedUnspecified
		}
		f.recorder.Record(ex)
	}}
}

// kept is the body an archive keeps of raw, the bytes read off the wire:
// decoded from its content codings and cut at max bytes (truncated says
// so). A coding we cannot undo leaves the bytes as they came. short
// reports encoded bytes that end before their body does, which is a
// broken body only if every byte was read.
func kept(h http.Header, raw []byte, max int64) (body []byte, decoded bool, truncated string, short bool) {
	cut := func(b []byte) []byte {
		if int64(len(b)) > max {
			truncated = warc.TruncatedLength
			return b[:max]
		}
		return b
	}
	codings, err := contentCodings(h.Values("Content-Encoding"))
	if err != nil || len(codings) == 0 {
		return cut(raw), false, truncated, false
	}
	r, closeDecoders, err := decoder(bytes.NewReader(raw), codings)
	if err != nil {
		return cut(raw), false, truncated, false
	}
	defer closeDecoders()
	// One byte past the cap tells a body of max bytes from a longer one.
	limit := max
	if limit < math.MaxInt64 {
		limit++
	}
	var buf bytes.Buffer
	_, err = buf.ReadFrom(io.LimitReader(r, limit))
	body = cut(buf.Bytes())
	switch {
	case truncated != "":
		return body, true, truncated, false
	case errors.Is(err, io.ErrUnexpectedEOF):
		return body, true, "", true
	case err != nil:
		return body, true, warc.TruncatedUnspecified, false
	}
	return body, true, "", false
}
