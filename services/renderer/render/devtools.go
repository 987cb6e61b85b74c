package render

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/go-rod/rod/lib/cdp"
)

// devtools is the browser's one DevTools connection: the pipe Chromium
// was launched with (--remote-debugging-pipe). A TCP DevTools port, even
// on loopback, would be a way into every render for anything that can
// reach loopback, a page rendered with allow_local among them: it lists
// every page's URL and drives or closes any of them.
//
// Renders share the pipe the way they used to share the port, as clients
// of their own: each attaches a session to the browser target, which
// Chromium treats as a separate DevTools client, and the pages it opens
// get sessions of their own under it. Messages are routed back by session.
type devtools struct {
	w io.WriteCloser // Chromium reads commands from its fd 3
	r io.ReadCloser  // and writes answers and events to its fd 4

	nextID atomic.Int64

	// out queues what is to be written, so a caller never blocks on a pipe
	// that a stopped browser no longer reads: its context still ends its
	// wait.
	outMu sync.Mutex
	out   [][]byte
	wake  chan struct{}

	mu      sync.Mutex
	pending map[int64]*pendingCall
	// owners maps each session to the client that opened it.
	owners map[string]*client
	err    error // why the pipe broke; nil while it works
	broken chan struct{}
}

type pendingCall struct {
	method string
	owner  *client
	done   chan reply
}

type reply struct {
	result json.RawMessage
	err    error
}

// message is whatever Chromium writes: an answer has an id, an event a
// method.
type message struct {
	ID        int64           `json:"id"`
	SessionID string          `json:"sessionId"`
	Method    string          `json:"method"`
	Params    json.RawMessage `json:"params"`
	Result    json.RawMessage `json:"result"`
	Error     *cdp.Error      `json:"error"`
}

// request is what goes to Chromium.
type request struct {
	ID        int64  `json:"id"`
	SessionID string `json:"sessionId,omitempty"`
	Method    string `json:"method"`
	Params    any    `json:"params,omitempty"`
}

// newDevtools serves the pipe until it breaks: Chromium exits, or close.
func newDevtools(w io.WriteCloser, r io.ReadCloser) *devtools {
	d := &devtools{
		w: w, r: r,
		wake:    make(chan struct{}, 1),
		pending: map[int64]*pendingCall{},
		owners:  map[string]*client{},
		broken:  make(chan struct{}),
	}
	go d.write()
	go d.read()
	return d
}

// close breaks the pipe; every call waiting fails.
func (d *devtools) close() {
	_ = d.w.Close()
	_ = d.r.Close()
	d.fail(errors.New("devtools pipe closed"))
}

func (d *devtools) fail(err error) {
	d.mu.Lock()
	if d.err != nil {
		d.mu.Unlock()
		return
	}
	d.err = err
	pending := d.pending
	d.pending = map[int64]*pendingCall{}
	owners := d.owners
	d.owners = map[string]*client{}
	close(d.broken)
	d.mu.Unlock()
	for _, p := range pending {
		p.done <- reply{err: err}
	}
	for _, c := range owners {
		c.end()
	}
}

// call sends method to sessionID ("" is the pipe's own, browser-wide
// session) and waits for the answer.
func (d *devtools) call(ctx context.Context, owner *client, sessionID, method string, params any) ([]byte, error) {
	if owner != nil && owner.isEnded() {
		return nil, errClosed
	}
	id := d.nextID.Add(1)
	data, err := json.Marshal(request{ID: id, SessionID: sessionID, Method: method, Params: params})
	if err != nil {
		return nil, fmt.Errorf("devtools %s: %w", method, err)
	}
	p := &pendingCall{method: method, owner: owner, done: make(chan reply, 1)}
	d.mu.Lock()
	if d.err != nil {
		d.mu.Unlock()
		return nil, d.err
	}
	d.pending[id] = p
	d.mu.Unlock()
	d.send(append(data, 0))

	var ended <-chan struct{}
	if owner != nil {
		ended = owner.ended
	}
	select {
	case r := <-p.done:
		return r.result, r.err
	case <-ctx.Done():
	case <-ended:
	}
	d.mu.Lock()
	delete(d.pending, id)
	d.mu.Unlock()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return nil, errClosed
}

var errClosed = errors.New("devtools session closed")

// notify sends method without waiting for its answer, which read drops.
func (d *devtools) notify(sessionID, method string, params any) {
	data, err := json.Marshal(request{ID: d.nextID.Add(1), SessionID: sessionID, Method: method, Params: params})
	if err != nil {
		return
	}
	d.send(append(data, 0))
}

func (d *devtools) send(msg []byte) {
	d.outMu.Lock()
	d.out = append(d.out, msg)
	d.outMu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *devtools) write() {
	for {
		select {
		case <-d.wake:
		case <-d.broken:
			return
		}
		d.outMu.Lock()
		batch := d.out
		d.out = nil
		d.outMu.Unlock()
		for _, msg := range batch {
			if _, err := d.w.Write(msg); err != nil {
				d.fail(fmt.Errorf("devtools pipe: %w", err))
				return
			}
		}
	}
}

// read routes every message Chromium writes, each ended by a NUL byte.
func (d *devtools) read() {
	br := bufio.NewReaderSize(d.r, 64<<10)
	for {
		data, err := br.ReadBytes(0)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("chromium closed its devtools pipe")
			}
			d.fail(fmt.Errorf("devtools pipe: %w", err))
			return
		}
		var m message
		if err := json.Unmarshal(data[:len(data)-1], &m); err != nil {
			d.fail(fmt.Errorf("devtools pipe: chromium wrote something that is not JSON: %w", err))
			return
		}
		if m.ID != 0 {
			d.answer(&m)
		} else {
			d.event(&m)
		}
	}
}

func (d *devtools) answer(m *message) {
	d.mu.Lock()
	p := d.pending[m.ID]
	delete(d.pending, m.ID)
	if p != nil && m.Error == nil && p.method == "Target.attachToTarget" {
		// The page's session is its opener's, before any of its events
		// can arrive.
		var res struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(m.Result, &res) == nil && res.SessionID != "" {
			d.own(res.SessionID, p.owner)
		}
	}
	d.mu.Unlock()
	if p == nil {
		return
	}
	if m.Error != nil {
		p.done <- reply{err: m.Error}
		return
	}
	p.done <- reply{result: m.Result}
}

func (d *devtools) event(m *message) {
	d.mu.Lock()
	owner := d.owners[m.SessionID]
	switch m.Method {
	case "Target.attachedToTarget":
		// Sessions attached under a render's session (auto-attached
		// workers, say) are the render's too.
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(m.Params, &p) == nil && p.SessionID != "" {
			d.own(p.SessionID, owner)
		}
	case "Target.detachedFromTarget":
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			delete(d.owners, p.SessionID)
		}
	}
	d.mu.Unlock()
	if owner == nil {
		// The pipe's own session listens to nothing it needs.
		return
	}
	sid := m.SessionID
	if sid == owner.session {
		// To the render's rod.Browser its browser session is the browser.
		sid = ""
	}
	owner.push(&cdp.Event{SessionID: sid, Method: m.Method, Params: m.Params})
}

// own records that session belongs to c; a nil or ended c owns nothing.
// d.mu is held.
func (d *devtools) own(session string, c *client) {
	if c == nil || c.isEnded() {
		return
	}
	d.owners[session] = c
}

// rootClient calls the pipe's own session: what the renderer asks of the
// browser as a whole (its version, closing it, disposing a render's
// context).
type rootClient struct {
	d   *devtools
	ctx context.Context
}

func (d *devtools) root(ctx context.Context) rootClient { return rootClient{d: d, ctx: ctx} }

func (r rootClient) Call(ctx context.Context, sessionID, method string, params any) ([]byte, error) {
	return r.d.call(ctx, nil, sessionID, method, params)
}

func (r rootClient) GetContext() context.Context { return r.ctx }

// client is one render's DevTools client, for rod.Browser.Client: a
// session on the browser target and the sessions opened through it.
// Closing it detaches them all, as closing a connection of its own would.
type client struct {
	d       *devtools
	session string

	events chan *cdp.Event
	mu     sync.Mutex
	queue  []*cdp.Event
	ready  chan struct{}
	ended  chan struct{}
	once   sync.Once
}

// attach opens a client of its own for one render.
func (d *devtools) attach(ctx context.Context) (*client, error) {
	res, err := d.call(ctx, nil, "", "Target.attachToBrowserTarget", nil)
	if err != nil {
		return nil, fmt.Errorf("attach to chromium: %w", err)
	}
	var out struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(res, &out); err != nil || out.SessionID == "" {
		return nil, fmt.Errorf("attach to chromium: no session in %s", res)
	}
	c := &client{
		d: d, session: out.SessionID,
		events: make(chan *cdp.Event),
		ready:  make(chan struct{}, 1),
		ended:  make(chan struct{}),
	}
	d.mu.Lock()
	if d.err != nil {
		d.mu.Unlock()
		return nil, d.err
	}
	d.owners[c.session] = c
	d.mu.Unlock()
	go c.pump()
	return c, nil
}

// Call implements rod's CDPClient: a call without a session goes to the
// render's browser session.
func (c *client) Call(ctx context.Context, sessionID, method string, params any) ([]byte, error) {
	if sessionID == "" {
		sessionID = c.session
	}
	return c.d.call(ctx, c, sessionID, method, params)
}

// Event implements rod's CDPClient. It closes when the client ends.
func (c *client) Event() <-chan *cdp.Event { return c.events }

// push queues an event without ever blocking the pipe's reader on a
// render that is slow to take it.
func (c *client) push(e *cdp.Event) {
	c.mu.Lock()
	c.queue = append(c.queue, e)
	c.mu.Unlock()
	select {
	case c.ready <- struct{}{}:
	default:
	}
}

func (c *client) pump() {
	defer close(c.events)
	for {
		c.mu.Lock()
		queue := c.queue
		c.queue = nil
		c.mu.Unlock()
		for _, e := range queue {
			select {
			case c.events <- e:
			case <-c.ended:
				return
			}
		}
		select {
		case <-c.ready:
		case <-c.ended:
			return
		}
	}
}

func (c *client) isEnded() bool {
	select {
	case <-c.ended:
		return true
	default:
		return false
	}
}

func (c *client) end() { c.once.Do(func() { close(c.ended) }) }

// close ends the client and detaches its browser session, which detaches
// every page session it opened. It does not wait for Chromium to answer:
// nothing the render does next depends on it.
func (c *client) close() {
	c.end()
	c.d.mu.Lock()
	for s, o := range c.d.owners {
		if o == c {
			delete(c.d.owners, s)
		}
	}
	c.d.mu.Unlock()
	c.d.notify("", "Target.detachFromTarget", map[string]string{"sessionId": c.session})
}
