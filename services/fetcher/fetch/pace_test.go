package fetch

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	internalv1 "distill.dev/proto/gen/distill/internalv1"
)

// TestPaceWithTurnsEveryRequest: robots.txt, the page and its redirect
// hop each wait for a turn before they are sent, in the order they go
// out, and each is reported once written, after its turn.
func TestPaceWithTurnsEveryRequest(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var events []string
	note := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, s)
	}
	mux := http.NewServeMux()
	ts := httptest.NewServer(mux)
	t.Cleanup(ts.Close)
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) { note("serve " + r.URL.Path) })
	mux.HandleFunc("/old", func(w http.ResponseWriter, r *http.Request) {
		note("serve " + r.URL.Path)
		http.Redirect(w, r, "/new", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/new", func(w http.ResponseWriter, r *http.Request) {
		note("serve " + r.URL.Path)
		html(w, 200, page)
	})
	f := newFetcher(t)
	opts := local()
	opts.RespectRobots = true
	turn := func(_ context.Context, u *url.URL) error { note("turn " + u.Path); return nil }
	sent := func(u *url.URL, at time.Time) {
		if at.IsZero() {
			t.Errorf("%s reported sent at no time", u)
		}
		note("sent " + u.Path)
	}
	if _, err := f.FetchWith(t.Context(), &internalv1.FetcherServiceFetchRequest{Url: ts.URL + "/old", Options: opts}, PaceWith(turn, sent)); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range []string{"/robots.txt", "/old", "/new"} {
		ti, si, vi := slices.Index(events, "turn "+p), slices.Index(events, "sent "+p), slices.Index(events, "serve "+p)
		if ti < 0 || si < 0 || vi < 0 || ti > si || ti > vi {
			t.Errorf("%s: want a turn, then its request sent and served; events %q", p, events)
		}
	}
	if slices.Index(events, "turn /old") > slices.Index(events, "turn /new") {
		t.Errorf("the hop's turn came before the page's: %q", events)
	}
}

// TestPaceWithTurnsARequestSentAgain: the server hangs up on a kept-alive
// connection as the second request reaches it, and the transport sends
// that request again on a new connection. The site saw two requests, so
// the request took two turns, each reported sent once, alternating: the
// first write does not leave the second unpaced.
func TestPaceWithTurnsARequestSentAgain(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = lis.Close() })
	var conns atomic.Int32
	go func() {
		for {
			conn, err := lis.Accept()
			if err != nil {
				return
			}
			first := conns.Add(1) == 1
			go func() {
				defer conn.Close()
				r := bufio.NewReader(conn)
				for n := 0; ; n++ {
					req, err := http.ReadRequest(r)
					if err != nil {
						return
					}
					_ = req.Body.Close()
					if first && n == 1 {
						// Read, never answered: the client finds the
						// connection closed as it waits.
						return
					}
					body := "<html><head><title>t</title></head><body><main><p>" + strings.Repeat("words ", 30) + "</p></main></body></html>"
					fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
				}
			}()
		}
	}()
	var mu sync.Mutex
	var events []string
	turn := func(_ context.Context, u *url.URL) error {
		mu.Lock()
		defer mu.Unlock()
		events = append(events, "turn")
		return nil
	}
	sent := func(u *url.URL, at time.Time) {
		mu.Lock()
		defer mu.Unlock()
		if at.IsZero() {
			t.Errorf("%s reported sent at no time", u)
		}
		events = append(events, "sent")
	}
	f := newFetcher(t)
	for _, p := range []string{"/a", "/b"} {
		if _, err := f.FetchWith(t.Context(), &internalv1.FetcherServiceFetchRequest{Url: "http://" + lis.Addr().String() + p, Options: local()}, PaceWith(turn, sent)); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if n := conns.Load(); n != 2 {
		t.Fatalf("%d connections; the test wants the second request sent again on a second one", n)
	}
	if want := []string{"turn", "sent", "turn", "sent", "turn", "sent"}; !slices.Equal(events, want) {
		t.Errorf("events %q, want %q: three requests reached the site, each in a turn of its own", events, want)
	}
}

// TestWroteSinceAWriteUnderWay: a write begun and not come back from is
// reported written now, not when it began: its bytes may have left well
// after that, on a busy machine.
func TestWroteSinceAWriteUnderWay(t *testing.T) {
	t.Parallel()
	c := &watchedConn{}
	since := time.Now().Add(-time.Second)
	c.began.Store(since.Add(time.Millisecond).UnixNano())
	before := time.Now()
	if at := c.wroteSince(since.UnixNano()); at.Before(before) {
		t.Errorf("a write under way reported at %v, before the question (%v)", at, before)
	}
	c.wrote.Store(since.Add(2 * time.Millisecond).UnixNano())
	if at := c.wroteSince(since.UnixNano()); !at.Equal(time.Unix(0, since.Add(2*time.Millisecond).UnixNano())) {
		t.Errorf("a finished write reported at %v, want when it ended", at)
	}
	if at := c.wroteSince(time.Now().UnixNano()); !at.IsZero() {
		t.Errorf("no write since: %v, want none", at)
	}
}
