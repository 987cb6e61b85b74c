package render

import (
	"context"
	"encoding/base64"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-rod/rod/lib/proto"

	"distill.dev/proto/fetchopts"
	distillv1 "distill.dev/proto/gen/distill/v1"
)

// Limits of a network capture.
const (
	MaxCaptured      = 100
	MaxCapturedBody  = 1 << 20
	MaxCapturedTotal = 5 << 20
	// maxBodyFetch is the largest body a capture asks the browser for;
	// beyond it the body is left out rather than copied over the pipe to
	// keep its first MaxCapturedBody bytes.
	maxBodyFetch = 8 << 20
	// bodyWait bounds how long reading waits for bodies still being fetched.
	bodyWait = 2 * time.Second
	redacted = "[REDACTED]"
)

// credentialName matches header and query parameter names whose values are
// credentials.
var credentialName = regexp.MustCompile(`(?i)(auth|token|secret|passw|session|cookie|credential|signature|^sig$|jwt|csrf|xsrf|api[-_]?key|^key$|[-_]key$)`)

// capture records the page's responses of the types asked for, with their
// text bodies, within the capture's limits.
type capture struct {
	t           *tab
	g           *guard
	match       *regexp.Regexp
	types       []proto.NetworkResourceType
	credentials bool

	mu       sync.Mutex
	requests map[proto.NetworkRequestID]*proto.NetworkRequest
	sizes    map[proto.NetworkRequestID]int
	byID     map[proto.NetworkRequestID]*distillv1.CapturedResponse
	out      []*distillv1.CapturedResponse
	// total is what the bodies kept so far take.
	total     int
	truncated bool
	bodies    sync.WaitGroup
}

// startCapture listens to the page's network until the page closes. It
// must start before navigation, or the load's responses are missed.
func startCapture(ctx context.Context, t *tab, g *guard, opts *distillv1.FetchOptions) *capture {
	c := &capture{
		t: t, g: g, credentials: opts.GetCaptureCredentials(),
		requests: map[proto.NetworkRequestID]*proto.NetworkRequest{},
		sizes:    map[proto.NetworkRequestID]int{},
		byID:     map[proto.NetworkRequestID]*distillv1.CapturedResponse{},
	}
	// Validate compiled it already.
	c.match, _ = regexp.Compile(opts.GetCaptureNetwork())
	for _, k := range fetchopts.CaptureTypes(opts) {
		c.types = append(c.types, resourceType(k))
	}
	go t.page.EachEvent(func(e *proto.NetworkRequestWillBeSent) {
		if slices.Contains(c.types, e.Type) {
			c.mu.Lock()
			c.requests[e.RequestID] = e.Request
			c.mu.Unlock()
		}
	}, func(e *proto.NetworkResponseReceived) {
		c.response(ctx, e)
	}, func(e *proto.NetworkDataReceived) {
		c.mu.Lock()
		if _, ok := c.byID[e.RequestID]; ok {
			c.sizes[e.RequestID] += e.DataLength
		}
		c.mu.Unlock()
	}, func(e *proto.NetworkLoadingFinished) {
		c.mu.Lock()
		r, ok := c.byID[e.RequestID]
		size := c.sizes[e.RequestID]
		c.mu.Unlock()
		if ok {
			c.bodies.Add(1)
			go c.body(e.RequestID, r, size)
		}
	})()
	return c
}

// resourceType is the CDP type of a --capture-types name.
func resourceType(kind string) proto.NetworkResourceType {
	switch kind {
	case "xhr":
		return proto.NetworkResourceTypeXHR
	case "fetch":
		return proto.NetworkResourceTypeFetch
	case "websocket":
		return proto.NetworkResourceTypeWebSocket
	}
	// The rest are the CDP name capitalised: document -> Document.
	return proto.NetworkResourceType(strings.ToUpper(kind[:1]) + kind[1:])
}

func (c *capture) response(ctx context.Context, e *proto.NetworkResponseReceived) {
	c.mu.Lock()
	req, ok := c.requests[e.RequestID]
	c.mu.Unlock()
	if !ok || !c.match.MatchString(e.Response.URL) {
		return
	}
	// Whatever the page received passed the guard on its way in; judging
	// again (a cached answer) keeps anything the policy refuses out of
	// the capture even should it have reached the page some other way.
	if err := c.g.check(ctx, e.Response.URL); err != nil {
		return
	}
	r := &distillv1.CapturedResponse{
		Url:            c.redactURL(e.Response.URL),
		Method:         req.Method,
		Status:         int32(e.Response.Status),
		ResourceType:   strings.ToLower(string(e.Type)),
		MimeType:       e.Response.MIMEType,
		RequestHeaders: c.redactHeaders(req.Headers),
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.out) >= MaxCaptured {
		c.truncated = true
		return
	}
	c.out = append(c.out, r)
	c.byID[e.RequestID] = r
}

// body reads a finished response's body when it is text, within the
// capture's limits.
func (c *capture) body(id proto.NetworkRequestID, r *distillv1.CapturedResponse, size int) {
	defer c.bodies.Done()
	if !isText(r.MimeType) {
		return
	}
	if size > maxBodyFetch {
		c.cut(r)
		return
	}
	res, err := proto.NetworkGetResponseBody{RequestID: id}.Call(c.t.page)
	if err != nil {
		return
	}
	body := res.Body
	if res.Base64Encoded {
		b, err := base64.StdEncoding.DecodeString(body)
		if err != nil {
			return
		}
		body = string(b)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	keep := min(len(body), MaxCapturedBody, MaxCapturedTotal-c.total)
	if keep < len(body) {
		r.Truncated, c.truncated = true, true
		body = cutUTF8(body, keep)
	}
	c.total += len(body)
	r.Body = &body
}

func (c *capture) cut(r *distillv1.CapturedResponse) {
	c.mu.Lock()
	r.Truncated, c.truncated = true, true
	c.mu.Unlock()
}

// result waits a little for bodies still being read and returns what was
// captured. A response whose body is not in by then is marked truncated.
func (c *capture) result() *distillv1.NetworkCapture {
	done := make(chan struct{})
	go func() { c.bodies.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(bodyWait):
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := &distillv1.NetworkCapture{Truncated: c.truncated}
	for _, r := range c.out {
		out.Responses = append(out.Responses, cloneCaptured(r))
	}
	return out
}

// cloneCaptured copies r so that a body arriving late does not race the
// response being sent.
func cloneCaptured(r *distillv1.CapturedResponse) *distillv1.CapturedResponse {
	cp := &distillv1.CapturedResponse{
		Url: r.Url, Method: r.Method, Status: r.Status, ResourceType: r.ResourceType,
		MimeType: r.MimeType, RequestHeaders: r.RequestHeaders, Body: r.Body, Truncated: r.Truncated,
	}
	return cp
}

func isText(mime string) bool {
	mime = strings.ToLower(mime)
	return strings.HasPrefix(mime, "text/") || strings.Contains(mime, "json") || strings.Contains(mime, "javascript") ||
		strings.Contains(mime, "xml") || mime == "application/x-www-form-urlencoded" || mime == "application/graphql"
}

// cutUTF8 cuts s to at most n bytes without splitting a character.
func cutUTF8(s string, n int) string {
	if n <= 0 {
		return ""
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}

func (c *capture) redactHeaders(h proto.NetworkHeaders) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		if !c.credentials && credentialName.MatchString(k) {
			out[k] = redacted
			continue
		}
		out[k] = v.Str()
	}
	return out
}

// redactURL hides the values of credential-like query parameters.
func (c *capture) redactURL(raw string) string {
	if c.credentials {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.RawQuery == "" {
		return raw
	}
	q := u.Query()
	changed := false
	for k := range q {
		if credentialName.MatchString(k) {
			q[k] = []string{redacted}
			changed = true
		}
	}
	if !changed {
		return raw
	}
	u.RawQuery = q.Encode()
	return u.String()
}
