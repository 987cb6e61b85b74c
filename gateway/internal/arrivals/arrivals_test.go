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
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	srv := Server(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/late" {
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

	held.Lock()
	sent := time.Now()
	done := make(chan struct{})
	go func() { defer close(done); get("/late") }()
	time.Sleep(300 * time.Millisecond)
	held.Unlock()
	<-done
	if late := at("/late").Sub(sent); late < 0 || late > 200*time.Millisecond {
		t.Errorf("/late was timed %v after it was sent; its handler ran 300ms after", late)
	}

	get("/a")
	time.Sleep(100 * time.Millisecond)
	get("/b")
	if gap := at("/b").Sub(at("/a")); gap < 100*time.Millisecond {
		t.Errorf("/a and /b, sent 100ms apart on one connection, timed %v apart", gap)
	}
}
