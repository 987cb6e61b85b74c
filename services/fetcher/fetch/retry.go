package fetch

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"distill.dev/services/platform/netpolicy"
	"distill.dev/services/platform/telemetry"
)

// maxRetryAfter caps how long a server may ask us to wait.
const maxRetryAfter = 60 * time.Second

// sendWithRetries sends m to u, retrying the transient failures of a GET;
// any other method is sent once. The response it returns holds a per-host
// slot until its body is closed. When retries run out, or the next wait
// would pass the deadline, the last response or error is returned as it is:
// an HTTP error status is an answer.
func (f *Fetcher) sendWithRetries(ctx context.Context, c *call, u *url.URL, m message) (*http.Response, error) {
	// A POST may have reached the server before it failed: sending it
	// again could act twice.
	retries := c.maxRetries
	if m.method != http.MethodGet {
		retries = 0
	}
	for attempt := 0; ; attempt++ {
		resp, err := f.sendOnce(ctx, c, u, m)
		if attempt >= retries || !retryable(ctx, resp, err) {
			return resp, err
		}
		wait := f.backoff(attempt)
		if resp != nil {
			if d, ok := retryAfter(resp.Header.Get("Retry-After"), f.hosts.clock.Now()); ok {
				wait = d
			}
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) <= wait {
			return resp, err
		}
		telemetry.CountRetry(ctx, retryReason(resp))
		var reason string
		if resp != nil {
			reason = resp.Status
			discard(resp)
		} else {
			reason = err.Error()
		}
		f.logger.Debug("fetch retry", "url", u.String(), "attempt", attempt+1, "wait", wait, "reason", reason)

		select {
		case <-f.hosts.clock.After(wait):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// sendOnce makes one attempt under the host's concurrency and rate limits.
// Its span ends with the response's headers.
func (f *Fetcher) sendOnce(ctx context.Context, c *call, u *url.URL, m message) (_ *http.Response, err error) {
	ctx, span := telemetry.Start(ctx, "distill.fetch.attempt", trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(append(telemetry.URLAttributes(u.String()), semconv.HTTPRequestMethodKey.String(m.method))...))
	defer func() {
		var failed error
		if err != nil {
			failed = c.classify(ctx, "attempt", err)
		}
		telemetry.End(span, failed)
	}()
	release, err := f.hosts.acquire(ctx, hostKey(u), c.perHost, c.rate)
	if err != nil {
		return nil, err
	}
	if c.pace != nil {
		var endTurn func()
		if ctx, endTurn, err = c.pacedTurn(ctx, u); err != nil {
			release()
			return nil, err
		}
		defer endTurn()
	}
	var remote func() string
	if f.recorder != nil {
		ctx, remote = traceRemote(ctx)
	}
	req, err := f.attemptRequest(ctx, c, u, m)
	if err != nil {
		release()
		return nil, err
	}
	sent := time.Now()
	resp, err := c.client.Do(req)
	if err != nil {
		release()
		return nil, err
	}
	span.SetAttributes(semconv.HTTPResponseStatusCode(resp.StatusCode))
	if c.jar != nil && !m.anonymous {
		c.setCookies = append(c.setCookies, c.jar.Record(u, resp.Cookies())...)
	}
	// The slot is held until the body is read: a server is busy with us
	// until the last byte is sent.
	resp.Body = &releasingBody{ReadCloser: resp.Body, release: sync.OnceFunc(release)}
	if f.recorder != nil {
		f.recording(ctx, c, req, m, resp, sent, remote)
	}
	return resp, nil
}

// attemptRequest is the request of one attempt: the message, the caller's
// headers when u is the site it named, and the session's cookies.
func (f *Fetcher) attemptRequest(ctx context.Context, c *call, u *url.URL, m message) (*http.Request, error) {
	req, err := f.request(ctx, c.profile, u, m)
	if err != nil {
		return nil, err
	}
	if h := c.opts.GetHeaders(); len(h) > 0 && !m.anonymous && c.origin != nil && sameOrigin(c.origin, u) {
		// The caller's headers (a cookie, a token) are for the site it
		// named, not for wherever that site redirects.
		for name, value := range h {
			req.Header.Set(name, value)
		}
	}
	if c.jar != nil && !m.anonymous {
		for _, ck := range c.jar.Cookies(u) {
			req.AddCookie(ck)
		}
	}
	return req, nil
}

// pacedTurn waits for the host's turn and returns the context that
// watches the request's write, and endTurn, which the attempt calls once
// it is over. The turn is held until the request is written, or known
// never to be: sent hears of each turn exactly once, with the time its
// request was written, or with none when it failed before.
func (c *call) pacedTurn(ctx context.Context, u *url.URL) (_ context.Context, endTurn func(), err error) {
	if err := c.pace(ctx, u); err != nil {
		return ctx, nil, err
	}
	var mu sync.Mutex
	turn := &pacedWrite{c: c, u: u}
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			mu.Lock()
			defer mu.Unlock()
			if turn.conn {
				// The transport sends the request again on another
				// connection: the one it reused was closed under it,
				// and what it wrote there reached no site. This write
				// is a request the site sees, and takes a turn of its
				// own; without one it is not sent.
				turn.done(turn.watched.wroteSince(turn.gotAt))
				turn = &pacedWrite{c: c, u: u}
				if err := c.pace(ctx, u); err != nil {
					turn.released = true
					_ = info.Conn.Close()
					return
				}
			}
			turn.conn, turn.gotAt = true, time.Now().UnixNano()
			turn.watched = watchWrite(info.Conn, turn.done)
		},
	})
	// The writer's goroutine can be held up between its write and its
	// report while the answer comes back and the attempt returns: a write
	// the connection saw since it was handed to us is ours.
	return ctx, func() {
		mu.Lock()
		defer mu.Unlock()
		turn.done(turn.watched.wroteSince(turn.gotAt))
	}, nil
}

// pacedWrite is one turn of a paced request and the connection its
// request is written on.
type pacedWrite struct {
	c *call
	u *url.URL
	// conn: a connection was handed over for this turn's write.
	conn    bool
	watched *watchedConn
	gotAt   int64
	once    sync.Once
	// released: the turn was never taken, or is over; nothing to report.
	released bool
}

// done reports the turn's request written at at (zero: never), once.
func (p *pacedWrite) done(at time.Time) {
	if p.released || p.c.sent == nil {
		return
	}
	p.once.Do(func() { p.c.sent(p.u, at) })
}

// watchedConn is a connection of the fetcher's that can say when the
// next write reached the socket.
type watchedConn struct {
	net.Conn
	onWrite atomic.Pointer[func(time.Time)]
	// The last write's start and end, in Unix nanoseconds.
	began, wrote atomic.Int64
}

func (c *watchedConn) Write(b []byte) (int, error) {
	c.began.Store(time.Now().UnixNano())
	n, err := c.Conn.Write(b)
	now := time.Now()
	c.wrote.Store(now.UnixNano())
	if f := c.onWrite.Swap(nil); f != nil {
		(*f)(now)
	}
	return n, err
}

// wroteSince is when c's last write at or after since (Unix nanoseconds)
// ended, or now if its writer has not come back from it yet, else the
// zero time. A nil c has written nothing. Not when the write began: a
// writer held up between noting the start and the write itself (a
// machine with no core free) sends its bytes later than that, and the
// next turn, counted from it, would come too soon after them. It is
// asked once the request was answered, whose bytes reached the site
// before now.
func (c *watchedConn) wroteSince(since int64) time.Time {
	if c == nil || since == 0 {
		return time.Time{}
	}
	if at := c.wrote.Load(); at >= since {
		return time.Unix(0, at)
	}
	if at := c.began.Load(); at >= since {
		return time.Now()
	}
	return time.Time{}
}

// watchWrite has f told when conn next writes to its socket, and returns
// the watched connection, or nil when conn is not one. Over HTTP/2 that
// write may be another stream's, as close in time.
func watchWrite(conn net.Conn, f func(time.Time)) *watchedConn {
	if tc, ok := conn.(*tls.Conn); ok {
		conn = tc.NetConn()
	}
	w, ok := conn.(*watchedConn)
	if ok {
		w.onWrite.Store(&f)
	}
	return w
}

type releasingBody struct {
	io.ReadCloser
	release func()
}

func (b *releasingBody) Close() error {
	err := b.ReadCloser.Close()
	b.release()
	return err
}

// retryable reports whether an attempt failed in a way another attempt may
// not: 429, 5xx, and transport errors other than a policy refusal, a
// certificate problem or the end of the whole fetch's time.
func retryable(ctx context.Context, resp *http.Response, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	if err == nil {
		return resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
	}
	if _, ok := errors.AsType[*tls.CertificateVerificationError](err); ok {
		return false
	}
	return !errors.Is(err, netpolicy.ErrBlocked) && !errors.Is(err, errRateDeadline)
}

// retryReason says why an attempt is retried, for the retries metric.
func retryReason(resp *http.Response) string {
	switch {
	case resp == nil:
		return telemetry.RetryTransport
	case resp.StatusCode == http.StatusTooManyRequests:
		return telemetry.RetryTooManyRequests
	default:
		return telemetry.RetryServerError
	}
}

// retryAfterOf returns a 429 or 503's Retry-After in whole seconds
// (rounded up), or 0.
func (f *Fetcher) retryAfterOf(resp *http.Response) int64 {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return 0
	}
	d, ok := retryAfter(resp.Header.Get("Retry-After"), f.hosts.clock.Now())
	if !ok {
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

// backoff returns a full-jitter wait before retry attempt+1: uniform in
// [0, min(max, base·2^attempt)], which spreads retries of many clients.
func (f *Fetcher) backoff(attempt int) time.Duration {
	ceiling := f.backoffMax
	if attempt < 32 {
		if d := f.backoffBase << attempt; d > 0 && d < ceiling {
			ceiling = d
		}
	}
	if ceiling <= 0 {
		return 0
	}
	return rand.N(ceiling + 1)
}

// retryAfter reads a Retry-After header, in seconds or as an HTTP date,
// capped at maxRetryAfter.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	var d time.Duration
	if secs, err := strconv.ParseUint(v, 10, 64); err == nil {
		d = maxRetryAfter
		if secs < uint64(maxRetryAfter/time.Second) {
			d = time.Duration(secs) * time.Second
		}
	} else if t, err := http.ParseTime(v); err == nil {
		d = max(t.Sub(now), 0)
	} else {
		return 0, false
	}
	return min(d, maxRetryAfter), true
}

// discard drops a response we will not use. A short body is drained so the
// connection can be reused; a long one is cut.
func discard(resp *http.Response) {
	_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
	_ = resp.Body.Close()
}
