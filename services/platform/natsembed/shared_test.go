package natsembed

import "testing"

// The server a store started is the one the queue holds, and it goes down
// only when both have let it go, after which what waited on it runs.
func TestSharedIsOneServer(t *testing.T) {
	t.Parallel()
	var s Shared
	store, started, err := s.Start(Config{Listen: "127.0.0.1:0", Token: "t"})
	if err != nil || !started {
		t.Fatalf("Start: started %v, err %v", started, err)
	}
	if _, again, err := s.Start(Config{}); again || err != nil {
		t.Fatalf("a second Start: started %v, err %v; want the running server left alone", again, err)
	}
	queue, err := s.Hold()
	if err != nil {
		t.Fatal(err)
	}
	if queue != store {
		t.Fatal("the queue holds another server than the one the store started")
	}
	down := false
	s.Release(func() { down = true })
	if down {
		t.Fatal("the server went down while the queue still held it")
	}
	nc, err := queue.Connect("queue")
	if err != nil {
		t.Fatalf("the queue's server after the store let it go: %v", err)
	}
	nc.Close()
	s.Release(nil)
	if !down {
		t.Fatal("the server's last holder let it go, and what waited on its end did not run")
	}
	if store.ns.Running() {
		t.Fatal("the server still runs after its last holder let it go")
	}
	// Held again, it starts anew.
	again, err := s.Hold()
	if err != nil || again == store {
		t.Fatalf("Hold after the end: %v (the old server: %v)", err, again == store)
	}
	s.Release(nil)
}
