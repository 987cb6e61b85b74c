package identity

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"time"
)

// maxIdlePerHost is how many idle HTTP/1.1 connections one scheme and
// address keep.
const maxIdlePerHost = 8

// h1conn is an HTTP/1.1 connection: TLS (or plain for http://) over the
// dialled one.
type h1conn struct {
	conn net.Conn
	raw  net.Conn
	br   *bufio.Reader // reads conn through head
	head *headLimit
	// fresh: never used yet (dialled for ALPN, then left idle).
	fresh bool
	timer *time.Timer // closes it once idle too long
}

// roundTrip1 sends req over HTTP/1.1: fhttp writes it in the profile's
// order, net/http reads the answer, and the body reaches the fetcher as
// the server encoded it (fhttp's own HTTP/1.1 transport would decode it,
// and drop Content-Encoding, when asked for gzip). A reused connection
// the server had closed is replaced once, for a request that can be sent
// again.
func (t *Transport) roundTrip1(req *http.Request) (*http.Response, error) {
	key := req.URL.Scheme + "://" + hostPort(req)
	for attempt := 0; ; attempt++ {
		c, reused, err := t.h1conn(req.Context(), req.URL.Scheme, hostPort(req))
		if errors.Is(err, errSettledHTTP2) {
			return t.RoundTrip(req)
		}
		if err != nil {
			return nil, err
		}
		if trace := httptrace.ContextClientTrace(req.Context()); trace != nil && trace.GotConn != nil {
			trace.GotConn(httptrace.GotConnInfo{Conn: c.raw, Reused: reused})
		}
		resp, err := t.exchange1(req, key, c)
		if err == nil {
			return resp, nil
		}
		_ = c.conn.Close()
		if !reused || attempt > 0 || req.Context().Err() != nil || !resendable(req) {
			return nil, err
		}
		if req.GetBody != nil {
			body, gerr := req.GetBody()
			if gerr != nil {
				return nil, err
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
	}
}

// resendable: a request that may go out again on another connection.
func resendable(req *http.Request) bool {
	idempotent := req.Method == http.MethodGet || req.Method == http.MethodHead || req.Method == ""
	return idempotent && (req.Body == nil || req.Body == http.NoBody || req.GetBody != nil)
}

var errSettledHTTP2 = errors.New("identity: server settled HTTP/2")

// h1conn takes an idle connection for key, or dials one.
func (t *Transport) h1conn(ctx context.Context, scheme, addr string) (*h1conn, bool, error) {
	key := scheme + "://" + addr
	t.mu.Lock()
	for idle := t.h1idle[key]; len(idle) > 0; idle = t.h1idle[key] {
		c := idle[len(idle)-1]
		t.h1idle[key] = idle[:len(idle)-1]
		if c.timer.Stop() {
			t.mu.Unlock()
			reused := !c.fresh
			c.fresh = false
			return c, reused, nil
		}
	}
	t.mu.Unlock()
	if scheme != "https" {
		raw, err := t.cfg.Dial(ctx, "tcp", addr)
		if err != nil {
			return nil, false, err
		}
		return newH1conn(raw, raw), false, nil
	}
	conn, raw, err := t.dialTLS(ctx, addr)
	if err != nil {
		return nil, false, err
	}
	if conn.ConnectionState().NegotiatedProtocol == "h2" {
		// The server settled HTTP/1.1 before, and HTTP/2 now.
		t.mu.Lock()
		defer t.mu.Unlock()
		delete(t.h1addrs, addr)
		if _, err := t.addH2Locked(addr, conn, raw); err != nil {
			return nil, false, err
		}
		return nil, false, errSettledHTTP2
	}
	return newH1conn(conn, raw), false, nil
}

// putIdleLocked keeps c for the next request to key, for the idle
// timeout at most; t.mu is held.
func (t *Transport) putIdleLocked(key string, c *h1conn) {
	if len(t.h1idle[key]) >= maxIdlePerHost {
		_ = c.conn.Close()
		return
	}
	c.timer = time.AfterFunc(t.cfg.IdleConnTimeout, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		idle := t.h1idle[key]
		for i, o := range idle {
			if o == c {
				t.h1idle[key] = append(idle[:i], idle[i+1:]...)
				break
			}
		}
		_ = c.conn.Close()
	})
	t.h1idle[key] = append(t.h1idle[key], c)
}

// exchange1 writes req on c and reads the response's head. The
// connection is the response body's until it is read to its end (then it
// is kept for the next request) or closed.
func (t *Transport) exchange1(req *http.Request, key string, c *h1conn) (*http.Response, error) {
	ctx := req.Context()
	// The context's end cuts the exchange, body included.
	stop := context.AfterFunc(ctx, func() { _ = c.conn.SetDeadline(time.Unix(1, 0)) })
	fail := func(err error) (*http.Response, error) {
		stop()
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return nil, err
	}
	bw := bufio.NewWriter(c.conn)
	if err := t.request(req, true).Write(bw); err != nil {
		return fail(fmt.Errorf("identity: write request: %w", err))
	}
	if err := bw.Flush(); err != nil {
		return fail(fmt.Errorf("identity: write request: %w", err))
	}
	for {
		// What the reader holds already counts as read: the bound is
		// approximate by at most its buffer.
		c.head.n = t.cfg.MaxResponseHeaderBytes
		resp, err := http.ReadResponse(c.br, req)
		c.head.n = -1
		if err != nil {
			return fail(fmt.Errorf("identity: read response: %w", err))
		}
		if resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols {
			continue // an interim answer: the final one follows
		}
		resp.Body = &h1body{body: resp.Body, done: func(reuse bool) {
			if !stop() || !reuse || resp.Close || req.Close {
				_ = c.conn.Close()
				return
			}
			_ = c.conn.SetDeadline(time.Time{})
			t.mu.Lock()
			defer t.mu.Unlock()
			t.putIdleLocked(key, c)
		}}
		return resp, nil
	}
}

// h1body gives the connection back once read to its end, and closes it
// when closed before.
type h1body struct {
	body io.ReadCloser
	done func(reuse bool)
	once sync.Once
}

func (b *h1body) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if err == io.EOF {
		b.once.Do(func() { b.done(true) })
	}
	return n, err
}

// Close closes the connection first when the body was not read to its
// end: net/http's reader would drain the rest, however long.
func (b *h1body) Close() error {
	early := false
	b.once.Do(func() {
		early = b.body != http.NoBody
		b.done(!early)
	})
	err := b.body.Close()
	if early {
		return nil // the connection is gone, and the rest unread with it
	}
	return err
}

// errHeadTooLarge refuses a response head past the configured bound.
var errHeadTooLarge = errors.New("identity: response header too large")

// headLimit bounds what a response head may read from the connection:
// n bytes while on (n >= 0), anything when off (n < 0).
type headLimit struct {
	r io.Reader
	n int64
}

func (h *headLimit) Read(p []byte) (int, error) {
	if h.n < 0 {
		return h.r.Read(p)
	}
	if h.n == 0 {
		return 0, errHeadTooLarge
	}
	if int64(len(p)) > h.n {
		p = p[:h.n]
	}
	n, err := h.r.Read(p)
	h.n -= int64(n)
	return n, err
}

// newH1conn is an HTTP/1.1 connection over conn, dialled as raw.
func newH1conn(conn, raw net.Conn) *h1conn {
	head := &headLimit{r: conn, n: -1}
	return &h1conn{conn: conn, raw: raw, br: bufio.NewReader(head), head: head}
}
