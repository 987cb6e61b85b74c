package arrivals

import (
	"io"
	"net/http"
	"sync"
	"testing"
	"time"
)

// TestOfIsTheArrivalNotTheHandlersTime: a handler that gets to run late
// still learns when its request arrived; and requests sent one after
// another on one connection are each timed by their own arrival.
func TestOfIsTheArrivalNotTheHandlersTime(t *testing.T) {
	lis, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held sync.Mutex
	entered := make(chan struct{}, 1)
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	srv := Server(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/late" {
			entered <- struct{}{}
			// Stands for a handler that waits for a core.
			held.Lock()
			defer held.Unlock()
		}
		mu.Lock()
		arrived[r.URL.Path] = Of(r)
		mu.Unlock()
	}))
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(func() { _ = srv.Close() })
	at := func(path string) time.Time {
		mu.Lock()
		defer mu.Unlock()
		return arrived[path]
	}
	base := "http://" + lis.Addr().String()
	get := func(path string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}

	// The handler is let go only once the request is in: it learns of
	// the request before that, whenever it gets to run.
	held.Lock()
	sent := time.Now()
	done := make(chan struct{})
	go func() { defer close(done); get("/late") }()
	<-entered
	released := time.Now()
	held.Unlock()
	<-done
	if late := at("/late"); late.Before(sent) || !late.Before(released) {
		t.Errorf("/late, sent at %v, was timed %v; its handler ran after %v", sent, late, released)
	}

	// Two requests one after the other on one connection: /b is sent after
	// /a's answer came back.
	get("/a")
	between := time.Now()
	get("/b")
	if a, b := at("/a"), at("/b"); !a.Before(between) || b.Before(between) {
		t.Errorf("/a and /b, sent before and after %v on one connection, timed %v and %v", between, a, b)
	}
}
